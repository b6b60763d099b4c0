import { activitiesImportStream, activityStream, followsImportStream, followStream, hiddenStream, marksStream, settingsStream, type FeedLogEvent } from '@feedmill/contracts';

/**
 * The stream an event is appended to: its feed's for activities, its follower's for follows,
 * its own for a batch (an import spans feeds and followers, and one append writes one stream).
 * An erasure goes to its feed's activity stream, so that it and a post decided at the same
 * moment on another content replica (sealed with the key being destroyed) cannot both be
 * appended: the one that loses its expected revision catches up, past the erasure, and
 * decides again (the post with a new key).
 */
export function streamOf(event: FeedLogEvent): string {
  switch (event.type) {
    case 'ActivityAdded':
      return activityStream(event.data.activity.feed);
    case 'ActivityRemoved':
    case 'ActivityBumped':
    case 'ActivityUpdated':
      return activityStream(event.data.feed);
    case 'FeedFollowed':
    case 'FeedUnfollowed':
    case 'FollowRequested':
    case 'FollowRequestRejected':
      return followStream(event.data.follower);
    case 'FeedSettingsChanged':
      return settingsStream(event.data.feed);
    case 'NotificationsMarked':
      return marksStream(event.data.feed);
    case 'ActivityHidden':
    case 'ActivityShown':
      return hiddenStream(event.data.feed);
    case 'ActivitiesAdded':
      return activitiesImportStream(event.data.id);
    case 'FeedsFollowed':
      return followsImportStream(event.data.id);
    case 'FeedErased':
      return activityStream(event.data.feed);
    case 'ContentErased':
      // A tombstone is what a read gives in place of erased content; nothing appends one.
      throw new Error('a ContentErased is never appended');
  }
}

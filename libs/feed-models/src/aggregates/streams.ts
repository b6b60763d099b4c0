import { activityStream, followStream, type FeedEvent } from '@feedmill/contracts';

/** The stream an event is appended to: its feed's for activities, its follower's for follows. */
export function streamOf(event: FeedEvent): string {
  switch (event.type) {
    case 'ActivityAdded':
      return activityStream(event.data.activity.feed);
    case 'ActivityRemoved':
    case 'ActivityBumped':
      return activityStream(event.data.feed);
    case 'FeedFollowed':
    case 'FeedUnfollowed':
      return followStream(event.data.follower);
  }
}

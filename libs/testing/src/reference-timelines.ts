import { decodeFeedEvents, sortKeyOf, type Activity, type FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import { activityIdOf, evolveActivity, evolveFollowEdge, isActivityEvent, isFollowEdgeEvent } from '@feedmill/feed-models';

/**
 * What every timeline must show, computed the slow and obvious way from the log: the
 * activities of the feeds a reader follows now, that were not removed, newest first.
 */
export function referenceTimelines(events: readonly RecordedEvent[]): {
  timelineOf(reader: FeedId): Activity[];
  readers(): FeedId[];
  activities(): Activity[];
  /** The feeds a reader follows now. */
  followed(reader: FeedId): FeedId[];
} {
  const activities = new Map<string, Activity>();
  const following = new Map<FeedId, Set<FeedId>>();
  // The same evolvers as every store, kept in the plainest structures.
  for (const { event } of decodeFeedEvents(events)) {
    if (isActivityEvent(event)) {
      const id = activityIdOf(event);
      const activity = evolveActivity(activities.get(id), event);
      if (activity) activities.set(id, activity);
      else activities.delete(id);
    } else if (isFollowEdgeEvent(event)) {
      const { follower, target } = event.data;
      const set = following.get(follower) ?? new Set<FeedId>();
      if (evolveFollowEdge(set.has(target), event)) following.set(follower, set.add(target));
      else set.delete(target);
    }
  }
  return {
    readers: () => [...following.keys()],
    activities: () => [...activities.values()],
    followed: (reader) => [...(following.get(reader) ?? [])],
    timelineOf(reader) {
      const targets = following.get(reader) ?? new Set<FeedId>();
      return [...activities.values()]
        .filter((a) => targets.has(a.feed))
        .sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1));
    },
  };
}

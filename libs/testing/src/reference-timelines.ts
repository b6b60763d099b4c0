import { sortKeyOf, upcastEvent, type Activity, type FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';

/**
 * What every timeline must show, computed the slow and obvious way from the log: the
 * activities of the feeds a reader follows now, that were not removed, newest first.
 */
export function referenceTimelines(events: readonly RecordedEvent[]): {
  timelineOf(reader: FeedId): Activity[];
  readers(): FeedId[];
  activities(): Activity[];
} {
  const activities = new Map<string, Activity>();
  const following = new Map<FeedId, Set<FeedId>>();
  for (const recorded of events) {
    const event = upcastEvent(recorded.type, recorded.data, recorded.metadata['v'] as number | undefined);
    if (!event) continue;
    if (event.type === 'ActivityAdded') activities.set(event.data.activity.id, event.data.activity);
    if (event.type === 'ActivityRemoved') activities.delete(event.data.id);
    if (event.type === 'FeedFollowed') {
      const set = following.get(event.data.follower) ?? new Set();
      set.add(event.data.target);
      following.set(event.data.follower, set);
    }
    if (event.type === 'FeedUnfollowed') following.get(event.data.follower)?.delete(event.data.target);
  }
  return {
    readers: () => [...following.keys()],
    activities: () => [...activities.values()],
    timelineOf(reader) {
      const targets = following.get(reader) ?? new Set<FeedId>();
      return [...activities.values()]
        .filter((a) => targets.has(a.feed))
        .sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1));
    },
  };
}

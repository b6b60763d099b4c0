import { upcastEvent, type Activity, type FeedId, type TimelineDelivery } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';

/** What planning needs to know, from graph and content (over a transport or in-process). */
export interface PlanLookups {
  /** Every timeline feed that follows `feed`, as of at least log position `atLeast`. */
  followers(feed: FeedId, atLeast: number): Promise<FeedId[]>;
  /** The newest `limit` activities of `feed` added at or before `atMost`, newest first. */
  recent(feed: FeedId, limit: number, atLeast: number, atMost: number): Promise<Activity[]>;
  isTimeline(feed: FeedId): boolean;
  capOf(reader: FeedId): number;
}

/**
 * Turns a batch of log events into timeline deliveries, in log order: posts and removals go
 * to the author's followers, a follow merges the target's newest activities into the
 * reader's cache, an unfollow takes them out.
 *
 * Followers are looked up as of at least the batch's last position: any state that recent
 * gives the right final timelines, because deliveries are applied in log order and each is
 * idempotent. A follow's backfill is what the target held at the follow itself.
 */
export async function planDeliveries(events: readonly RecordedEvent[], lookups: PlanLookups): Promise<TimelineDelivery[]> {
  const atLeast = events[events.length - 1]?.position ?? 0;
  const parsed = events.map((e) => upcastEvent(e.type, e.data, e.metadata['v'] as number | undefined));
  const authors = new Set<FeedId>();
  for (const event of parsed) {
    if (event?.type === 'ActivityAdded') authors.add(event.data.activity.feed);
    if (event?.type === 'ActivityRemoved') authors.add(event.data.feed);
  }
  const followersOf = new Map<FeedId, FeedId[]>();
  await Promise.all([...authors].map(async (feed) => followersOf.set(feed, await lookups.followers(feed, atLeast))));

  const deliveries: TimelineDelivery[] = [];
  for (const [index, event] of parsed.entries()) {
    switch (event?.type) {
      case 'ActivityAdded': {
        const readers = followersOf.get(event.data.activity.feed)!;
        if (readers.length > 0) deliveries.push({ kind: 'insert', readers, activity: event.data.activity });
        break;
      }
      case 'ActivityRemoved': {
        const readers = followersOf.get(event.data.feed)!;
        if (readers.length > 0) deliveries.push({ kind: 'remove', readers, id: event.data.id });
        break;
      }
      case 'FeedFollowed': {
        const { follower, target } = event.data;
        if (!lookups.isTimeline(follower)) break;
        const cap = lookups.capOf(follower);
        // One more than the cap tells whether the target has older activities than these.
        const recent = await lookups.recent(target, cap + 1, atLeast, events[index]!.position);
        deliveries.push({ kind: 'follow', reader: follower, target, recent, exhausted: recent.length <= cap });
        break;
      }
      case 'FeedUnfollowed':
        deliveries.push({ kind: 'unfollow', reader: event.data.follower, target: event.data.target });
        break;
      default:
        break;
    }
  }
  return deliveries;
}

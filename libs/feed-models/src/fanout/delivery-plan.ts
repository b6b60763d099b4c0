import type { Activity, FeedId, PositionedEvent, TimelineDelivery, TimelineOrder } from '@feedmill/contracts';

/** What planning needs to know, from graph and content (over a transport or in-process). */
export interface PlanLookups {
  /** Every timeline feed that follows `feed`, as of at least log position `atLeast`. */
  followers(feed: FeedId, atLeast: number): Promise<FeedId[]>;
  /** The newest `limit` activities of `feed` added at or before `atMost`, newest first in `order`. */
  recent(feed: FeedId, limit: number, atLeast: number, atMost: number, order: TimelineOrder): Promise<Activity[]>;
  isTimeline(feed: FeedId): boolean;
  capOf(reader: FeedId): number;
  /** The order of a reader's timeline, which its backfill must follow. */
  orderOf(reader: FeedId): TimelineOrder;
  /** The activities as they are now (bumped), as of at least `atLeast`; missing ones left out. */
  activities(ids: readonly string[], atLeast: number): Promise<Activity[]>;
  /** Whether `follower` follows `target`, as of at least `atLeast`. */
  follows(follower: FeedId, target: FeedId, atLeast: number): Promise<boolean>;
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
export async function planDeliveries(events: readonly PositionedEvent[], lookups: PlanLookups): Promise<TimelineDelivery[]> {
  const atLeast = events[events.length - 1]?.position ?? 0;
  const parsed = events.map((e) => e.event);
  const authors = new Set<FeedId>();
  for (const event of parsed) {
    if (event.type === 'ActivityAdded') authors.add(event.data.activity.feed);
    if (event.type === 'ActivityRemoved' || event.type === 'ActivityBumped') authors.add(event.data.feed);
  }
  const bumpedIds = parsed.flatMap((event) => (event.type === 'ActivityBumped' ? [event.data.id] : []));
  // Every lookup of the batch at once (over a network they would otherwise add up one round
  // trip at a time). All settle before a failure fails the batch: none is left running (or
  // rejecting unheard) while the batch is retried.
  const followersOf = new Map<FeedId, FeedId[]>();
  const backfills = new Map<number, Activity[]>();
  const bumped = new Map<string, Activity>();
  const settled = await Promise.allSettled([
    (async () => {
      if (bumpedIds.length > 0) for (const activity of await lookups.activities(bumpedIds, atLeast)) bumped.set(activity.id, activity);
    })(),
    ...[...authors].map(async (feed) => followersOf.set(feed, await lookups.followers(feed, atLeast))),
    ...parsed.map(async (event, index) => {
      if (event.type !== 'FeedFollowed' || !lookups.isTimeline(event.data.follower)) return;
      const { follower, target } = event.data;
      // One more than the cap tells whether the target has older activities than these. The
      // reader's order, not the target's: a relevancy timeline needs the newest by relevance,
      // or an old but bumped activity would fall below the floor and out of every page.
      const limit = lookups.capOf(follower) + 1;
      backfills.set(index, await lookups.recent(target, limit, atLeast, events[index]!.position, lookups.orderOf(follower)));
    }),
  ]);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;

  const deliveries: TimelineDelivery[] = [];
  for (const [index, event] of parsed.entries()) {
    switch (event.type) {
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
      case 'ActivityBumped': {
        const readers = followersOf.get(event.data.feed)!;
        const activity = bumped.get(event.data.id);
        // An activity removed since is left out: its removal reaches the readers too.
        if (readers.length > 0 && activity) deliveries.push({ kind: 'bump', readers, activity });
        break;
      }
      case 'FeedFollowed': {
        const { follower, target } = event.data;
        if (!lookups.isTimeline(follower)) break;
        const recent = backfills.get(index)!;
        deliveries.push({ kind: 'follow', reader: follower, target, recent, exhausted: recent.length <= lookups.capOf(follower) });
        break;
      }
      case 'FeedUnfollowed':
        deliveries.push({ kind: 'unfollow', reader: event.data.follower, target: event.data.target });
        break;
    }
  }
  return deliveries;
}

/**
 * The deliveries an event calls for as the log stands now, at `head`: replaying a dead letter
 * long after its event must bring back neither an activity removed since nor the history of
 * a feed unfollowed since.
 */
export async function replanAsOfNow(event: PositionedEvent, head: number, lookups: PlanLookups): Promise<TimelineDelivery[]> {
  const parsed = event.event;
  const now: PositionedEvent = { position: head, event: parsed };
  switch (parsed.type) {
    case 'ActivityAdded': {
      const [current] = await lookups.activities([parsed.data.activity.id], head);
      return current ? planDeliveries([{ position: head, event: { type: 'ActivityAdded', data: { activity: current } } }], lookups) : [];
    }
    case 'FeedFollowed':
    case 'FeedUnfollowed': {
      const follows = await lookups.follows(parsed.data.follower, parsed.data.target, head);
      return follows === (parsed.type === 'FeedFollowed') ? planDeliveries([now], lookups) : [];
    }
    default:
      // Removals remove whatever is there; bumps read the activity as it is now.
      return planDeliveries([now], lookups);
  }
}

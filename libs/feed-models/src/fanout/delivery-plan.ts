import type { Activity, FeedEvent, FeedFollowed, FeedId, PositionedEvent, TimelineDelivery, TimelineOrder } from '@feedmill/contracts';
import type { FollowerIndex } from './follower-index.js';

/**
 * What planning needs to know beyond the followers, which it reads from a
 * {@link FollowerIndex}: the feed config, and content (over a transport or in-process).
 */
export interface PlanLookups {
  /** The newest `limit` activities of `feed` added at or before `atMost`, newest first in `order`. */
  recent(feed: FeedId, limit: number, atLeast: number, atMost: number, order: TimelineOrder): Promise<Activity[]>;
  isTimeline(feed: FeedId): boolean;
  capOf(reader: FeedId): number;
  /** The order of a reader's timeline, which its backfill must follow. */
  orderOf(reader: FeedId): TimelineOrder;
  /** The activities as they are now (bumped, updated), as of at least `atLeast`; missing ones left out. */
  activities(ids: readonly string[], atLeast: number): Promise<Activity[]>;
  /** Whether `follower` follows `target`, as of at least `atLeast` (graph: a dead letter is replayed as the log stands now). */
  follows(follower: FeedId, target: FeedId, atLeast: number): Promise<boolean>;
}

/** The backfill of a feed that never had an activity, one for all of them: nothing may add to it. */
const NOTHING_TO_BACKFILL: Activity[] = Object.freeze([]) as never;

/**
 * Turns a batch of log events into timeline deliveries, in log order: posts and removals go
 * to the author's followers, a follow merges the target's newest activities into the
 * reader's cache, an unfollow takes them out.
 *
 * An event at position p reaches the followers as of p: those of `followers`, which stands
 * where the batch starts, changed by the batch's own follows and unfollows before p. The
 * index is left as it is (the caller advances it once the deliveries are applied), so that
 * planning is a function of the index and the events, and a failed batch is planned again
 * the same. A follow's backfill is what the target held at the follow itself.
 */
export async function planDeliveries(events: readonly PositionedEvent[], followers: FollowerIndex, lookups: PlanLookups): Promise<TimelineDelivery[]> {
  const atLeast = events[events.length - 1]?.position ?? 0;
  const asOf = followers.inBatch();
  // One walk of the batch, allocating nothing for an event that needs nothing: an import is
  // one batch of 10,000 follows.
  const readersAt: Array<FeedId[] | undefined> = new Array(events.length);
  /** Per follow by a timeline: what its target held (its backfill). */
  const backfills: Array<Activity[] | undefined> = new Array(events.length);
  /** Indexes of the follows whose backfill content is asked for. */
  const backfilled: number[] = [];
  /** Activities bumped or updated: their deliveries carry them as content holds them now. */
  const changedIds: string[] = [];
  // Only activities read the batch's own changes: those after the last one change nothing
  // planned here (a batch of an import's follows has none), and are not tracked.
  let lastActivity = events.length - 1;
  while (lastActivity >= 0 && authorOf(events[lastActivity]!.event) === undefined) lastActivity--;
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!.event;
    if (index <= lastActivity) asOf.apply(event);
    if (event.type === 'FeedFollowed') {
      if (!lookups.isTimeline(event.data.follower)) continue;
      // A follow of a feed that never had an activity has nothing to backfill: content is not asked.
      if (asOf.hasHadActivities(event.data.target)) backfilled.push(index);
      else backfills[index] = NOTHING_TO_BACKFILL;
      continue;
    }
    if (event.type === 'ActivityBumped' || event.type === 'ActivityUpdated') changedIds.push(event.data.id);
    const author = authorOf(event);
    if (author !== undefined) readersAt[index] = asOf.followersOf(author);
  }
  // Every lookup of the batch at once (over a network they would otherwise add up one round
  // trip at a time). All settle before a failure fails the batch: none is left running (or
  // rejecting unheard) while the batch is retried.
  const changed = new Map<string, Activity>();
  const settled = await Promise.allSettled([
    (async () => {
      if (changedIds.length > 0) for (const activity of await lookups.activities(changedIds, atLeast)) changed.set(activity.id, activity);
    })(),
    ...backfilled.map(async (index) => {
      const { position, event } = events[index]!;
      const { follower, target } = (event as FeedFollowed).data;
      // One more than the cap tells whether the target has older activities than these. The
      // reader's order, not the target's: a relevancy timeline needs the newest by relevance,
      // or an old but bumped activity would fall below the floor and out of every page.
      const limit = lookups.capOf(follower) + 1;
      backfills[index] = await lookups.recent(target, limit, atLeast, position, lookups.orderOf(follower));
    }),
  ]);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;

  const deliveries: TimelineDelivery[] = [];
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!.event;
    switch (event.type) {
      case 'ActivityAdded': {
        const readers = readersAt[index]!;
        if (readers.length > 0) deliveries.push({ kind: 'insert', readers, activity: event.data.activity });
        break;
      }
      case 'ActivityRemoved': {
        const readers = readersAt[index]!;
        if (readers.length > 0) deliveries.push({ kind: 'remove', readers, id: event.data.id });
        break;
      }
      case 'ActivityBumped':
      case 'ActivityUpdated': {
        const readers = readersAt[index]!;
        const activity = changed.get(event.data.id);
        // An activity removed since is left out: its removal reaches the readers too.
        if (readers.length > 0 && activity) deliveries.push({ kind: event.type === 'ActivityBumped' ? 'bump' : 'update', readers, activity });
        break;
      }
      case 'FeedFollowed': {
        const { follower, target } = event.data;
        const recent = backfills[index];
        if (recent === undefined) break; // not a timeline
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
 * a feed unfollowed since. Its followers are those of `followers` as fan-out stands: the
 * batches after it bring every reader up to date, in log order, as they do for any event.
 */
export async function replanAsOfNow(event: PositionedEvent, head: number, followers: FollowerIndex, lookups: PlanLookups): Promise<TimelineDelivery[]> {
  const parsed = event.event;
  const now: PositionedEvent = { position: head, event: parsed };
  switch (parsed.type) {
    case 'ActivityAdded': {
      const [current] = await lookups.activities([parsed.data.activity.id], head);
      return current ? planDeliveries([{ position: head, event: { type: 'ActivityAdded', data: { activity: current } } }], followers, lookups) : [];
    }
    case 'FeedFollowed':
    case 'FeedUnfollowed': {
      const follows = await lookups.follows(parsed.data.follower, parsed.data.target, head);
      return follows === (parsed.type === 'FeedFollowed') ? planDeliveries([now], followers, lookups) : [];
    }
    default:
      // Removals remove whatever is there; bumps and updates read the activity as it is now.
      return planDeliveries([now], followers, lookups);
  }
}

/** The feed whose followers an event reaches, if it reaches any. */
export function authorOf(event: FeedEvent): FeedId | undefined {
  if (event.type === 'ActivityAdded') return event.data.activity.feed;
  if (event.type === 'ActivityRemoved' || event.type === 'ActivityBumped' || event.type === 'ActivityUpdated') return event.data.feed;
  return undefined;
}

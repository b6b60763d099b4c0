import { isWithinBound, sortKeyOf, type Activity, type EdgeBound, type FeedEvent, type FeedFollowed, type FeedId, type PositionedEvent, type SortKey, type TimelineDelivery, type TimelineOrder } from '@feedmill/contracts';
import type { FollowerIndex, FollowersInBatch } from './follower-index.js';

/**
 * What planning needs to know beyond the followers, which it reads from a
 * {@link FollowerIndex}: the feed config, and content (over a transport or in-process).
 */
export interface PlanLookups {
  /**
   * The newest `limit` activities of `feed` added at or before `atMost`, newest first in
   * `order`; with `since`, only those whose time key is at or above it (a bounded follow).
   */
  recent(feed: FeedId, limit: number, atLeast: number, atMost: number, order: TimelineOrder, since?: SortKey): Promise<Activity[]>;
  isTimeline(feed: FeedId): boolean;
  capOf(reader: FeedId): number;
  /** The order of a reader's timeline, which its backfill must follow. */
  orderOf(reader: FeedId): TimelineOrder;
  /** The log position each activity was added at (null for one removed), as of at least `atLeast`. */
  positions(ids: readonly string[], atLeast: number): Promise<Array<number | null>>;
  /** The activities as they are now (bumped, updated), as of at least `atLeast`; missing ones left out. */
  activities(ids: readonly string[], atLeast: number): Promise<Activity[]>;
  /** Whether `follower` follows `target`, as of at least `atLeast` (graph: a dead letter is replayed as the log stands now). */
  follows(follower: FeedId, target: FeedId, atLeast: number): Promise<boolean>;
}

/** The backfill of a feed that never had an activity, one for all of them: nothing may add to it. */
const NOTHING_TO_BACKFILL: Activity[] = Object.freeze([]) as never;

/**
 * Turns a batch of log events into timeline deliveries, in log order: posts and removals go
 * to the author's followers and the feeds the activity was addressed to (`to`), a follow merges the target's newest activities into the
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
  const readersAt: Array<readonly FeedId[] | undefined> = new Array(events.length);
  /** Per removal, update or bump: the readers that keep its feed's history without following it. */
  const keptAt: Array<FeedId[] | undefined> = new Array(events.length);
  /** Per bump: the bounds of its readers in relevancy timelines whose edge has one (a bump must not raise what a bound leaves out). */
  const boundedAt: Array<Array<[FeedId, EdgeBound]> | undefined> = new Array(events.length);
  /** Activities bumped for such readers: where each was added says whether the bound lets it in. */
  const positionIds: string[] = [];
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
    if (index <= lastActivity) asOf.apply(event, events[index]!.position);
    if (event.type === 'FeedFollowed') {
      if (!lookups.isTimeline(event.data.follower)) continue;
      // A follow of a feed that never had an activity has nothing to backfill: content is not asked.
      if (asOf.hasHadActivities(event.data.target)) backfilled.push(index);
      else backfills[index] = NOTHING_TO_BACKFILL;
      continue;
    }
    if (event.type === 'ActivityBumped' || event.type === 'ActivityUpdated') changedIds.push(event.data.id);
    const author = authorOf(event);
    if (author !== undefined) {
      readersAt[index] = asOf.followersOf(author);
      if (event.type !== 'ActivityAdded') keptAt[index] = asOf.keptBy(author);
      if (event.type === 'ActivityBumped' && asOf.hasBounds(author)) {
        const bounded = relevancyBounds(asOf, author, readersAt[index]!.concat(keptAt[index]!), lookups);
        if (bounded.length > 0) {
          boundedAt[index] = bounded;
          positionIds.push(event.data.id);
        }
      }
    }
  }
  // Every lookup of the batch at once (over a network they would otherwise add up one round
  // trip at a time). All settle before a failure fails the batch: none is left running (or
  // rejecting unheard) while the batch is retried.
  const changed = new Map<string, Activity>();
  const addedAt = new Map<string, number | null>();
  const settled = await Promise.allSettled([
    (async () => {
      if (changedIds.length > 0) for (const activity of await lookups.activities(changedIds, atLeast)) changed.set(activity.id, activity);
    })(),
    (async () => {
      if (positionIds.length === 0) return;
      const positions = await lookups.positions(positionIds, atLeast);
      positionIds.forEach((id, i) => addedAt.set(id, positions[i] ?? null));
    })(),
    ...backfilled.map(async (index) => {
      const { position, event } = events[index]!;
      const { follower, target, since } = (event as FeedFollowed).data;
      // One more than the cap tells whether the target has older activities than these. The
      // reader's order, not the target's: a relevancy timeline needs the newest by relevance,
      // or an old but bumped activity would fall below the floor and out of every page.
      const limit = lookups.capOf(follower) + 1;
      backfills[index] = await lookups.recent(target, limit, atLeast, position, lookups.orderOf(follower), since);
    }),
  ]);
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;

  const deliveries: TimelineDelivery[] = [];
  for (let index = 0; index < events.length; index++) {
    const { position: eventPosition, event } = events[index]!;
    switch (event.type) {
      case 'ActivityAdded': {
        const readers = withTargets(readersAt[index]!, event.data.activity.to);
        if (readers.length > 0) deliveries.push({ kind: 'insert', readers, activity: event.data.activity, eventPosition });
        break;
      }
      case 'ActivityRemoved': {
        const readers = withTargets(withKept(readersAt[index]!, keptAt[index]), event.data.to);
        if (readers.length > 0) deliveries.push({ kind: 'remove', readers, id: event.data.id, eventPosition });
        break;
      }
      case 'ActivityBumped':
      case 'ActivityUpdated': {
        const activity = changed.get(event.data.id);
        let readers = withTargets(withKept(readersAt[index]!, keptAt[index]), activity?.to);
        const bounded = boundedAt[index];
        if (bounded && activity) readers = withoutOutOfBound(readers, bounded, activity, addedAt.get(activity.id) ?? null);
        // An activity removed since is left out: its removal reaches the readers too.
        if (readers.length > 0 && activity) deliveries.push({ kind: event.type === 'ActivityBumped' ? 'bump' : 'update', readers, activity, eventPosition });
        break;
      }
      case 'FeedFollowed': {
        const { follower, target, since } = event.data;
        const recent = backfills[index];
        if (recent === undefined) break; // not a timeline
        const exhausted = recent.length <= lookups.capOf(follower);
        deliveries.push(since === undefined ? { kind: 'follow', reader: follower, target, recent, exhausted, eventPosition } : { kind: 'follow', reader: follower, target, recent, exhausted, since, eventPosition });
        break;
      }
      case 'NotificationsMarked': {
        const { feed, mark, all, allAt, groups } = event.data;
        deliveries.push({ kind: 'mark', reader: feed, mark, ...(all !== undefined && { all }), ...(allAt !== undefined && { allAt }), ...(groups !== undefined && { groups }), eventPosition });
        break;
      }
      case 'ActivityHidden':
        deliveries.push({ kind: 'hide', reader: event.data.feed, id: event.data.id, time: event.data.time, eventPosition });
        break;
      case 'ActivityShown':
        deliveries.push({ kind: 'show', reader: event.data.feed, id: event.data.id, eventPosition });
        break;
      case 'FeedErased':
        deliveries.push({ kind: 'erase', reader: event.data.feed, eventPosition });
        break;
      case 'FeedUnfollowed':
        deliveries.push(
          event.data.keepHistory
            ? { kind: 'unfollow', reader: event.data.follower, target: event.data.target, keepHistory: true, eventPosition }
            : { kind: 'unfollow', reader: event.data.follower, target: event.data.target, eventPosition },
        );
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
 * The deliveries still name the event's own position (a reader they fail for again is
 * dead-lettered with it). A hiding or showing is replayed as the reader's last hiding or
 * showing of that id, which `lastHiding` reads from the log: a replayed hide must not hide
 * again what was shown since, nor a replayed show undo a later hide.
 */
export async function replanAsOfNow(event: PositionedEvent, head: number, followers: FollowerIndex, lookups: PlanLookups, lastHiding: LastHiding): Promise<TimelineDelivery[]> {
  const deliveries = await planAsOfNow(event, head, followers, lookups, lastHiding);
  for (const delivery of deliveries) delivery.eventPosition = event.position;
  return deliveries;
}

/** The reader's last `ActivityHidden` or `ActivityShown` of `id` in the log, if any. */
export type LastHiding = (reader: FeedId, id: string) => Promise<FeedEvent | undefined>;

async function planAsOfNow(event: PositionedEvent, head: number, followers: FollowerIndex, lookups: PlanLookups, lastHiding: LastHiding): Promise<TimelineDelivery[]> {
  const parsed = event.event;
  const now: PositionedEvent = { position: head, event: parsed };
  switch (parsed.type) {
    case 'ActivityHidden':
    case 'ActivityShown': {
      const last = await lastHiding(parsed.data.feed, parsed.data.id);
      return planDeliveries([{ position: head, event: last ?? parsed }], followers, lookups);
    }
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

/**
 * An activity's followers and the feeds it was addressed to, each once. The followers'
 * array is the index's own: a new one is made only when targets join it.
 */
function withTargets(followers: readonly FeedId[], targets: readonly FeedId[] | undefined): readonly FeedId[] {
  if (targets === undefined) return followers;
  const readers = new Set(followers);
  for (const target of targets) readers.add(target);
  return [...readers];
}

/**
 * The readers among `readers` whose timeline is ordered by relevance and whose edge to
 * `feed` has a bound, with it. A bump inserts the activity into such a timeline (it may rise
 * above its floor), so it must reach them only when the bound lets the activity in; in a
 * timeline by time a bump only replaces what is held, and needs no check.
 */
function relevancyBounds(asOf: FollowersInBatch, feed: FeedId, readers: readonly FeedId[], lookups: PlanLookups): Array<[FeedId, EdgeBound]> {
  const bounded: Array<[FeedId, EdgeBound]> = [];
  for (const reader of readers) {
    const bound = asOf.boundOf(feed, reader);
    if (bound && lookups.orderOf(reader) === 'relevance') bounded.push([reader, bound]);
  }
  return bounded;
}

/** `readers` but those whose bound leaves the activity out, unless it was addressed to them. */
function withoutOutOfBound(readers: readonly FeedId[], bounded: ReadonlyArray<[FeedId, EdgeBound]>, activity: Activity, position: number | null): readonly FeedId[] {
  const key = sortKeyOf(activity);
  const out = new Set<FeedId>();
  for (const [reader, bound] of bounded) {
    // An activity content no longer places was removed: its removal reaches every reader anyway.
    if (activity.to?.includes(reader)) continue;
    if (position === null || !isWithinBound(bound, key, position)) out.add(reader);
  }
  return out.size === 0 ? readers : readers.filter((reader) => !out.has(reader));
}

/** Followers and the readers keeping the feed's history, each once (they never overlap). */
function withKept(followers: readonly FeedId[], kept: FeedId[] | undefined): readonly FeedId[] {
  return kept === undefined || kept.length === 0 ? followers : followers.concat(kept);
}

/** The feed whose followers an event reaches, if it reaches any. */
export function authorOf(event: FeedEvent): FeedId | undefined {
  if (event.type === 'ActivityAdded') return event.data.activity.feed;
  if (event.type === 'ActivityRemoved' || event.type === 'ActivityBumped' || event.type === 'ActivityUpdated') return event.data.feed;
  return undefined;
}

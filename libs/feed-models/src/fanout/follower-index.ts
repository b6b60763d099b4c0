import type { EdgeBound, FeedEvent, FeedId, PositionedEvent } from '@feedmill/contracts';
import { evolveFollowEdge, followEdgeEventTypes, isFollowEdgeEvent } from '../aggregates/follow-edge.js';
import { SortedRuns, type SortedRunsState } from './sorted-runs.js';

/**
 * The types of the log's events a follower index takes in: follows and unfollows, added
 * activities (an import's too), and erasures. A reader of the log for the index alone
 * decodes these and skips the rest.
 */
export const followerIndexEventTypes: ReadonlySet<string> = new Set([...followEdgeEventTypes, 'ActivityAdded', 'ActivitiesAdded', 'FeedErased']);

/**
 * Every follower of every feed, as fan-out needs it to plan deliveries: built from the follow
 * and unfollow events of the log, in log order, and standing at the position of the last one
 * it applied, so that planning asks no service for follower lists.
 *
 * It is compact because fan-out holds every edge of the graph: each follower is numbered
 * once (its id kept once), and each followed feed's followers are a sorted run of those
 * numbers in {@link SortedRuns}, 4 bytes per edge plus room to grow. Numbers are given in
 * order of first appearance, so a new follower usually lands at the end of its run.
 *
 * It also knows which feeds have ever had an activity added: following a feed that never
 * had one has nothing to backfill, and planning need not ask content.
 */
export class FollowerIndex {
  private readonly followerNumbers = new Map<FeedId, number>();
  private readonly followerIds: FeedId[] = [];
  private readonly targetNumbers = new Map<FeedId, number>();
  private readonly runs = new SortedRuns();
  /**
   * Each followed feed's followers as last listed, until one follows or unfollows it: every
   * post of a feed then reaches the same array, which the timeline store resolves to its
   * readers' timelines once rather than reader by reader (see `MemoryTimelineStore`).
   */
  private readonly listed = new Map<number, readonly FeedId[]>();
  /** Per followed-or-posting feed number: 1 once an activity was added to the feed. */
  private posted = new Uint8Array(256);
  private at = 0;
  /**
   * Per feed, the readers whose edge bounds what they hold of it: follows with a `since`, and
   * readers that unfollowed it keeping its history (kept edges), whom its removals, updates
   * and bumps still reach and its posts do not. Few, so plain maps.
   */
  private readonly bounds = new Map<FeedId, Map<FeedId, EdgeBound>>();

  /**
   * @param keeps Which followers the index holds; fan-out keeps timelines only, since no
   *   other feed is delivered to. @defaultValue every follower
   */
  constructor(readonly keeps: (follower: FeedId) => boolean = () => true) {}

  /** The position of the last event applied (0 for an empty index). */
  get position(): number {
    return this.at;
  }

  /** How many follow edges the index holds. */
  get edges(): number {
    return this.runs.size;
  }

  /** How many followers `target` has, without listing them. */
  followerCount(target: FeedId): number {
    const number = this.targetNumbers.get(target);
    return number === undefined ? 0 : this.runs.countOf(number);
  }

  /**
   * Every follower of `target`, in a stable order (that in which the index first saw them):
   * the same array for every call until `target`'s followers change, which nobody may change.
   */
  followersOf(target: FeedId): readonly FeedId[] {
    const number = this.targetNumbers.get(target);
    if (number === undefined) return NO_FOLLOWERS;
    let followers = this.listed.get(number);
    if (!followers) this.listed.set(number, (followers = Object.freeze(this.runs.map(number, (follower) => this.followerIds[follower]!))));
    return followers;
  }

  /** The bounds of the readers whose edge to `target` has one (followed with a `since`, or kept). */
  boundsOf(target: FeedId): ReadonlyMap<FeedId, EdgeBound> | undefined {
    return this.bounds.get(target);
  }

  /** Whether `follower` follows `target`. */
  follows(follower: FeedId, target: FeedId): boolean {
    const from = this.followerNumbers.get(follower);
    const to = this.targetNumbers.get(target);
    return from !== undefined && to !== undefined && this.runs.has(to, from);
  }

  /** Every feed `follower` follows: a walk over every followed feed, for erasures, which are rare. */
  followedBy(follower: FeedId): FeedId[] {
    const from = this.followerNumbers.get(follower);
    if (from === undefined) return [];
    return [...this.targetNumbers].filter(([, to]) => this.runs.has(to, from)).map(([target]) => target);
  }

  /** Every feed whose edge from `reader` has a bound (followed with a `since`, or kept). */
  boundedFor(reader: FeedId): FeedId[] {
    return [...this.bounds].filter(([, readers]) => readers.has(reader)).map(([target]) => target);
  }

  /** Whether an activity was ever added to `feed` (it may have been removed since). */
  hasHadActivities(feed: FeedId): boolean {
    const number = this.targetNumbers.get(feed);
    return number !== undefined && this.posted[number] === 1;
  }

  /**
   * Applies the follows, unfollows and first activities among `events` that come after the index's position
   * and at or before `to`, in order, and moves the index to `to` (a batch may end past its
   * last feed event). Events at or before the position are applied already and left out, so
   * that applying a batch twice changes nothing; a `to` behind the index changes nothing.
   */
  advance(events: readonly PositionedEvent[], to: number): void {
    for (const { position, event } of events) {
      if (position > this.at && position <= to) this.apply(event, position);
    }
    if (to > this.at) this.at = to;
  }

  /**
   * A view for planning one batch: the followers as the index stands, changed by the
   * batch's own events as they are walked in order ({@link FollowersInBatch.apply}), while
   * the index itself stays as it is until the batch is delivered.
   */
  inBatch(): FollowersInBatch {
    return new FollowersInBatch(this);
  }

  /** The whole index as it stands, for a snapshot (typed arrays are copies or views to copy at once). */
  toState(): FollowerIndexState {
    return {
      position: this.at,
      followerIds: this.followerIds,
      targetIds: [...this.targetNumbers.keys()],
      posted: this.posted.subarray(0, this.targetNumbers.size),
      followers: this.runs.toState(),
      bounds: [...this.bounds].flatMap(([target, readers]) => [...readers].map(([reader, bound]) => ({ ...bound, feed: target, reader }))),
    };
  }

  /**
   * An index as a snapshot kept it ({@link toState}), keeping the followers `keeps` names.
   * Throws when the state does not hold together.
   */
  static fromState(state: FollowerIndexState, keeps?: (follower: FeedId) => boolean): FollowerIndex {
    const index = new FollowerIndex(keeps);
    const { followerIds, targetIds, posted, followers } = state;
    if (posted.length !== targetIds.length || followers.counts.length !== targetIds.length) throw new Error(`${targetIds.length} feeds, ${posted.length} posted flags and ${followers.counts.length} runs`);
    for (const member of followers.members) if (member < 0 || member >= followerIds.length) throw new Error(`follower number ${member} of ${followerIds.length}`);
    for (const [number, follower] of followerIds.entries()) {
      index.followerIds.push(follower);
      index.followerNumbers.set(follower, number);
    }
    for (const [number, target] of targetIds.entries()) index.targetNumbers.set(target, number);
    if (index.followerNumbers.size !== followerIds.length || index.targetNumbers.size !== targetIds.length) throw new Error('a feed is numbered twice');
    index.runs.restore(followers);
    index.posted = new Uint8Array(Math.max(256, posted.length * 2));
    index.posted.set(posted);
    index.at = state.position;
    for (const { reader, ...bound } of state.bounds ?? []) index.bound(bound.feed, reader, bound);
    return index;
  }

  private apply(event: FeedEvent, position: number): void {
    if (event.type === 'ActivityAdded') this.posted[this.targetNumberOf(event.data.activity.feed)] = 1;
    if (event.type === 'FeedErased') return this.erase(event.data.feed);
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    if (!this.keeps(follower)) return;
    // The edge's state before does not change the outcome (adding is idempotent): no lookup first.
    if (evolveFollowEdge(false, event)) {
      const to = this.targetNumberOf(target);
      this.runs.add(to, this.followerNumberOf(follower));
      this.listed.delete(to);
      this.bound(target, follower, boundAfter(event, position, undefined, true));
    } else {
      this.bound(target, follower, boundAfter(event, position, this.bounds.get(target)?.get(follower), this.follows(follower, target)));
      const to = this.targetNumbers.get(target);
      const from = this.followerNumbers.get(follower);
      if (to !== undefined && from !== undefined) {
        this.runs.delete(to, from);
        this.listed.delete(to);
      }
    }
  }

  /**
   * Forgets an erased feed's edges both ways and their bounds, and that it had activities.
   * Its follows are found by a walk over every followed feed: erasures are rare.
   */
  private erase(feed: FeedId): void {
    const target = this.targetNumbers.get(feed);
    if (target !== undefined) {
      for (const follower of this.runs.map(target, (number) => number)) this.runs.delete(target, follower);
      this.posted[target] = 0;
    }
    const follower = this.followerNumbers.get(feed);
    if (follower !== undefined) for (const number of this.targetNumbers.values()) this.runs.delete(number, follower);
    // As a follower it may have left any feed's list.
    this.listed.clear();
    this.bounds.delete(feed);
    for (const [followed, readers] of [...this.bounds]) if (readers.delete(feed) && readers.size === 0) this.bounds.delete(followed);
  }

  /** Records the bound of `reader`'s edge to `target`, or that it has none. */
  private bound(target: FeedId, reader: FeedId, bound: EdgeBound | undefined): void {
    let readers = this.bounds.get(target);
    if (bound) {
      if (!readers) this.bounds.set(target, (readers = new Map()));
      readers.set(reader, bound);
    } else if (readers?.delete(reader) && readers.size === 0) this.bounds.delete(target);
  }

  private followerNumberOf(follower: FeedId): number {
    let number = this.followerNumbers.get(follower);
    if (number === undefined) {
      number = this.followerIds.push(follower) - 1;
      this.followerNumbers.set(follower, number);
    }
    return number;
  }

  private targetNumberOf(target: FeedId): number {
    let number = this.targetNumbers.get(target);
    if (number === undefined) {
      number = this.targetNumbers.size;
      this.targetNumbers.set(target, number);
      this.runs.addKey(number);
      if (number === this.posted.length) {
        const larger = new Uint8Array(number * 2);
        larger.set(this.posted);
        this.posted = larger;
      }
    }
    return number;
  }
}

const NO_FOLLOWERS: readonly FeedId[] = Object.freeze([]);

/** What a snapshot keeps of a {@link FollowerIndex}. */
export interface FollowerIndexState {
  /** The position of the last event the index applied. */
  position: number;
  /** Followers by number. */
  followerIds: readonly FeedId[];
  /** Followed or posting feeds by number. */
  targetIds: readonly FeedId[];
  /** Per feed number: 1 once an activity was added to the feed. */
  posted: Uint8Array;
  /** Per feed number, its followers' numbers, sorted. */
  followers: SortedRunsState;
  /** Bounded and kept edges, each with its target (`feed`) and reader. @defaultValue none */
  bounds?: ReadonlyArray<EdgeBound & { reader: FeedId }>;
}

/**
 * The bound of an edge after a follow or unfollow at `position`: a follow's `since` (none
 * for a plain follow); an unfollow that keeps the history of a followed edge keeps its
 * bound and ends it at `position`; any other unfollow leaves none.
 */
function boundAfter(event: FeedEvent, position: number, before: EdgeBound | undefined, followedBefore: boolean): EdgeBound | undefined {
  if (event.type === 'FeedFollowed') return event.data.since === undefined ? undefined : { feed: event.data.target, since: event.data.since, followedAt: position };
  if (event.type !== 'FeedUnfollowed') return undefined;
  if (!event.data.keepHistory) return undefined;
  // Unfollowing what it did not follow changes nothing of what it keeps.
  return followedBefore ? { ...before, feed: event.data.target, unfollowedAt: position } : before;
}

/** Whether a bound is a kept edge's: the feed is no longer followed. */
const isKept = (bound: EdgeBound) => bound.unfollowedAt !== undefined;

/**
 * The followers of feeds as of each event of one batch: the index as it stood before the
 * batch, plus the batch's own follows and unfollows up to the event being planned. A post
 * at position p thus reaches exactly the followers as of p, whatever the batch boundaries.
 */
export class FollowersInBatch {
  /** Per target: the followers the batch has changed so far, and whether each follows now. */
  private readonly changed = new Map<FeedId, Map<FeedId, boolean>>();
  /** Each target's followers as last computed, until the batch changes them: a batch often holds several posts of one feed. */
  private readonly known = new Map<FeedId, readonly FeedId[]>();
  /** Feeds the batch has added activities to so far. */
  private readonly posted = new Set<FeedId>();
  /** Feeds the batch has erased so far: what the index says of their activities no longer holds. */
  private readonly erased = new Set<FeedId>();
  /** Per target: the readers whose edge's bound the batch has changed so far, and the bound each has now (null: none). */
  private readonly boundsChanged = new Map<FeedId, Map<FeedId, EdgeBound | null>>();

  constructor(private readonly index: FollowerIndex) {}

  /** Takes in the next event of the batch, at its log position; events that change no edge and add no activity are ignored. */
  apply(event: FeedEvent, position: number): void {
    if (event.type === 'ActivityAdded') this.posted.add(event.data.activity.feed);
    if (event.type === 'FeedErased') {
      // Posts to a feed id used again after its erasure reach none of its former followers.
      const feed = event.data.feed;
      let edges = this.changed.get(feed);
      if (!edges) this.changed.set(feed, (edges = new Map()));
      for (const follower of this.followersOf(feed)) edges.set(follower, false);
      this.known.delete(feed);
      this.boundsChanged.set(feed, new Map([...(this.index.boundsOf(feed)?.keys() ?? [])].map((reader) => [reader, null])));
      this.forgetAsReader(feed);
      this.posted.delete(feed);
      this.erased.add(feed);
      return;
    }
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    if (!this.index.keeps(follower)) return;
    let edges = this.changed.get(target);
    if (!edges) this.changed.set(target, (edges = new Map()));
    const followedBefore = edges.get(follower) ?? this.index.follows(follower, target);
    edges.set(follower, evolveFollowEdge(followedBefore, event));
    this.known.delete(target);
    const before = this.boundOf(target, follower);
    const after = boundAfter(event, position, before, followedBefore);
    if (after !== before) {
      let changed = this.boundsChanged.get(target);
      if (!changed) this.boundsChanged.set(target, (changed = new Map()));
      changed.set(follower, after ?? null);
    }
  }

  /**
   * Ends every edge an erased feed had as a follower, as the index does when it applies the
   * erasure: else a post later in the same batch would still reach (and re-create) it, and
   * a batch cut after the erasure would not.
   */
  private forgetAsReader(feed: FeedId): void {
    const followed = new Set(this.index.followedBy(feed));
    for (const [target, edges] of this.changed) if (edges.has(feed)) followed.add(target);
    for (const target of followed) {
      let edges = this.changed.get(target);
      if (!edges) this.changed.set(target, (edges = new Map()));
      edges.set(feed, false);
      this.known.delete(target);
    }
    const bounded = new Set(this.index.boundedFor(feed));
    for (const [target, readers] of this.boundsChanged) if (readers.get(feed)) bounded.add(target);
    for (const target of bounded) {
      let readers = this.boundsChanged.get(target);
      if (!readers) this.boundsChanged.set(target, (readers = new Map()));
      readers.set(feed, null);
    }
  }

  /** The bound of `reader`'s edge to `target` as of the events applied so far. */
  boundOf(target: FeedId, reader: FeedId): EdgeBound | undefined {
    const changed = this.boundsChanged.get(target)?.get(reader);
    return changed === undefined ? this.index.boundsOf(target)?.get(reader) : (changed ?? undefined);
  }

  /** Whether some reader's edge to `target` has a bound, as of the events applied so far. */
  hasBounds(target: FeedId): boolean {
    return this.boundsChanged.has(target) || this.index.boundsOf(target) !== undefined;
  }

  /**
   * The readers an activity's removal, update or bump reaches beyond `followersOf(target)`:
   * those keeping `target`'s history, as of the events applied so far.
   */
  keptBy(target: FeedId): FeedId[] {
    if (!this.hasBounds(target)) return [];
    const readers = new Set<FeedId>();
    for (const reader of this.index.boundsOf(target)?.keys() ?? []) readers.add(reader);
    for (const reader of this.boundsChanged.get(target)?.keys() ?? []) readers.add(reader);
    return [...readers].filter((reader) => {
      const bound = this.boundOf(target, reader);
      return bound !== undefined && isKept(bound);
    });
  }

  /** Whether an activity was ever added to `feed`, as of the events applied so far. */
  hasHadActivities(feed: FeedId): boolean {
    return this.posted.has(feed) || (!this.erased.has(feed) && this.index.hasHadActivities(feed));
  }

  /** Every follower of `target` as of the events applied so far. */
  followersOf(target: FeedId): readonly FeedId[] {
    const known = this.known.get(target);
    if (known) return known;
    let followers = this.index.followersOf(target);
    const edges = this.changed.get(target);
    if (edges) {
      const changed = followers.filter((follower) => edges.get(follower) !== false);
      for (const [follower, follows] of edges) if (follows && !this.index.follows(follower, target)) changed.push(follower);
      followers = changed;
    }
    this.known.set(target, followers);
    return followers;
  }
}

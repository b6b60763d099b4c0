import type { FeedEvent, FeedId, PositionedEvent } from '@feedmill/contracts';
import { evolveFollowEdge, isFollowEdgeEvent } from '../aggregates/follow-edge.js';
import { SortedRuns, type SortedRunsState } from './sorted-runs.js';

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
  /** Per followed-or-posting feed number: 1 once an activity was added to the feed. */
  private posted = new Uint8Array(256);
  private at = 0;

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

  /** Every follower of `target`, in a stable order (that in which the index first saw them). */
  followersOf(target: FeedId): FeedId[] {
    const number = this.targetNumbers.get(target);
    return number === undefined ? [] : this.runs.map(number, (follower) => this.followerIds[follower]!);
  }

  /** Whether `follower` follows `target`. */
  follows(follower: FeedId, target: FeedId): boolean {
    const from = this.followerNumbers.get(follower);
    const to = this.targetNumbers.get(target);
    return from !== undefined && to !== undefined && this.runs.has(to, from);
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
      if (position > this.at && position <= to) this.apply(event);
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
    return index;
  }

  private apply(event: FeedEvent): void {
    if (event.type === 'ActivityAdded') this.posted[this.targetNumberOf(event.data.activity.feed)] = 1;
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    if (!this.keeps(follower)) return;
    // The edge's state before does not change the outcome (adding is idempotent): no lookup first.
    if (evolveFollowEdge(false, event)) this.runs.add(this.targetNumberOf(target), this.followerNumberOf(follower));
    else {
      const to = this.targetNumbers.get(target);
      const from = this.followerNumbers.get(follower);
      if (to !== undefined && from !== undefined) this.runs.delete(to, from);
    }
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
}

/**
 * The followers of feeds as of each event of one batch: the index as it stood before the
 * batch, plus the batch's own follows and unfollows up to the event being planned. A post
 * at position p thus reaches exactly the followers as of p, whatever the batch boundaries.
 */
export class FollowersInBatch {
  /** Per target: the followers the batch has changed so far, and whether each follows now. */
  private readonly changed = new Map<FeedId, Map<FeedId, boolean>>();
  /** Each target's followers as last computed, until the batch changes them: a batch often holds several posts of one feed. */
  private readonly known = new Map<FeedId, FeedId[]>();
  /** Feeds the batch has added activities to so far. */
  private readonly posted = new Set<FeedId>();

  constructor(private readonly index: FollowerIndex) {}

  /** Takes in the next event of the batch; events that change no edge and add no activity are ignored. */
  apply(event: FeedEvent): void {
    if (event.type === 'ActivityAdded') this.posted.add(event.data.activity.feed);
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    if (!this.index.keeps(follower)) return;
    let edges = this.changed.get(target);
    if (!edges) this.changed.set(target, (edges = new Map()));
    edges.set(follower, evolveFollowEdge(edges.get(follower) ?? this.index.follows(follower, target), event));
    this.known.delete(target);
  }

  /** Whether an activity was ever added to `feed`, as of the events applied so far. */
  hasHadActivities(feed: FeedId): boolean {
    return this.posted.has(feed) || this.index.hasHadActivities(feed);
  }

  /** Every follower of `target` as of the events applied so far. */
  followersOf(target: FeedId): FeedId[] {
    let followers = this.known.get(target);
    if (followers) return followers;
    followers = this.index.followersOf(target);
    const edges = this.changed.get(target);
    if (edges) {
      followers = followers.filter((follower) => edges.get(follower) !== false);
      for (const [follower, follows] of edges) if (follows && !this.index.follows(follower, target)) followers.push(follower);
    }
    this.known.set(target, followers);
    return followers;
  }
}

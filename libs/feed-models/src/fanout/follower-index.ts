import type { FeedEvent, FeedId, PositionedEvent } from '@feedmill/contracts';
import { evolveFollowEdge, isFollowEdgeEvent } from '../aggregates/follow-edge.js';

/**
 * Every follower of every feed, as fan-out needs it to plan deliveries: built from the follow
 * and unfollow events of the log, in log order, and standing at the position of the last one
 * it applied, so that planning asks no service for follower lists.
 *
 * It is compact because fan-out holds every edge of the graph: each feed is numbered once
 * (its id kept once), and a feed's followers are a sorted run of those numbers in one shared
 * `Int32Array` pool, 4 bytes per follower plus room to grow. A run that fills up moves to
 * the end of the pool with twice the room; the pool is packed again once the runs it left
 * behind outweigh half of it. Numbers are given in order of first appearance, so a new
 * follower usually lands at the end of its run and a follow costs a binary search.
 */
export class FollowerIndex {
  private readonly numbers = new Map<FeedId, number>();
  private readonly feeds: FeedId[] = [];
  /** Per feed number: where its followers start in the pool, how many, and how many fit. */
  private starts = new Int32Array(1024);
  private counts = new Int32Array(1024);
  private rooms = new Int32Array(1024);
  private pool = new Int32Array(16 * 1024);
  /** The end of the pool's used part. */
  private used = 0;
  /** Slots of the used part that no run owns any more (left behind by a run that moved). */
  private abandoned = 0;
  private edgeCount = 0;
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
    return this.edgeCount;
  }

  /** Every follower of `target`, in a stable order (that in which the index first saw them). */
  followersOf(target: FeedId): FeedId[] {
    const feed = this.numbers.get(target);
    if (feed === undefined) return [];
    const start = this.starts[feed]!;
    const count = this.counts[feed]!;
    const followers = new Array<FeedId>(count);
    for (let i = 0; i < count; i++) followers[i] = this.feeds[this.pool[start + i]!]!;
    return followers;
  }

  /** Whether `follower` follows `target`. */
  follows(follower: FeedId, target: FeedId): boolean {
    const from = this.numbers.get(follower);
    const to = this.numbers.get(target);
    if (from === undefined || to === undefined) return false;
    const start = this.starts[to]!;
    const end = start + this.counts[to]!;
    const at = lowerBound(this.pool, start, end, from);
    return at < end && this.pool[at] === from;
  }

  /**
   * Applies the follows and unfollows among `events` that come after the index's position
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

  private apply(event: FeedEvent): void {
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    if (!this.keeps(follower)) return;
    if (evolveFollowEdge(this.follows(follower, target), event)) this.add(this.numberOf(target), this.numberOf(follower));
    else {
      const to = this.numbers.get(target);
      const from = this.numbers.get(follower);
      if (to !== undefined && from !== undefined) this.remove(to, from);
    }
  }

  private numberOf(feed: FeedId): number {
    let number = this.numbers.get(feed);
    if (number !== undefined) return number;
    number = this.feeds.length;
    this.numbers.set(feed, number);
    this.feeds.push(feed);
    if (number === this.starts.length) {
      this.starts = grown(this.starts, number * 2);
      this.counts = grown(this.counts, number * 2);
      this.rooms = grown(this.rooms, number * 2);
    }
    return number;
  }

  private add(target: number, follower: number): void {
    let start = this.starts[target]!;
    const count = this.counts[target]!;
    let at = lowerBound(this.pool, start, start + count, follower);
    if (at < start + count && this.pool[at] === follower) return;
    if (count === this.rooms[target]) {
      this.move(target, Math.max(2, count * 2));
      at += this.starts[target]! - start;
      start = this.starts[target]!;
    }
    this.pool.copyWithin(at + 1, at, start + count);
    this.pool[at] = follower;
    this.counts[target] = count + 1;
    this.edgeCount++;
  }

  private remove(target: number, follower: number): void {
    const start = this.starts[target]!;
    const end = start + this.counts[target]!;
    const at = lowerBound(this.pool, start, end, follower);
    if (at === end || this.pool[at] !== follower) return;
    this.pool.copyWithin(at, at + 1, end);
    this.counts[target]!--;
    this.edgeCount--;
  }

  /** Moves a feed's run to the end of the pool with `room` slots, making space as needed. */
  private move(target: number, room: number): void {
    if (this.used + room > this.pool.length) {
      if (this.abandoned * 2 > this.used) this.pack();
      if (this.used + room > this.pool.length) this.pool = grown(this.pool, Math.max(this.pool.length * 2, this.used + room));
    }
    const start = this.starts[target]!;
    this.pool.copyWithin(this.used, start, start + this.counts[target]!);
    this.abandoned += this.rooms[target]!;
    this.starts[target] = this.used;
    this.rooms[target] = room;
    this.used += room;
  }

  /** Copies every run, with its room, into a new pool without the abandoned slots. */
  private pack(): void {
    const packed = new Int32Array(this.pool.length);
    let used = 0;
    for (let feed = 0; feed < this.feeds.length; feed++) {
      const room = this.rooms[feed]!;
      if (room === 0) continue;
      const start = this.starts[feed]!;
      packed.set(this.pool.subarray(start, start + this.counts[feed]!), used);
      this.starts[feed] = used;
      used += room;
    }
    this.pool = packed;
    this.used = used;
    this.abandoned = 0;
  }
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

  constructor(private readonly index: FollowerIndex) {}

  /** Takes in the next event of the batch; events that change no edge are ignored. */
  apply(event: FeedEvent): void {
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    if (!this.index.keeps(follower)) return;
    let edges = this.changed.get(target);
    if (!edges) this.changed.set(target, (edges = new Map()));
    edges.set(follower, evolveFollowEdge(edges.get(follower) ?? this.index.follows(follower, target), event));
    this.known.delete(target);
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

/** The first index in [from, to) of sorted `values` whose value is not below `value`. */
function lowerBound(values: Int32Array, from: number, to: number, value: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function grown(values: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(length);
  larger.set(values);
  return larger;
}

import type { EdgeBound, FeedEvent, FeedId, FeedLogEvent } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import { graphEventConcerns, graphEventTypes, graphPartlyReadEventTypes, isFollowEdgeEvent, type EdgeState } from '@feedmill/feed-models';
import type { GraphStore } from '../ports.js';
import { SnapshotCorruptError } from '../snapshots/snapshot-file.js';
import type { SnapshotReader, SnapshotWriter } from '../snapshots/snapshot-sections.js';
import { MemoryProjection } from './memory-projection.js';
import { compareFeeds, SortedFeedSets } from './sorted-feed-sets.js';

/** Edges a graph snapshot goes through between two steps: a few milliseconds' work. */
const EDGES_PER_STEP = 20_000;

/**
 * Follow edges both ways, each side a sorted set per feed ({@link SortedFeedSets}): sorted
 * for stable paging, and O(log n) to change even for a feed with hundreds of thousands of
 * followers. Beside them, the follow requests waiting for each private feed's owner, and
 * which feeds are private.
 */
export class MemoryGraphStore extends MemoryProjection implements GraphStore {
  readonly name = 'graph';
  protected readonly eventTypes = graphEventTypes;
  protected override readonly partlyReadTypes = graphPartlyReadEventTypes;
  private readonly followersOf = new SortedFeedSets();
  private readonly followingOf = new SortedFeedSets();
  private readonly requestsOf = new SortedFeedSets();
  private readonly privateFeeds = new Set<FeedId>();
  /**
   * Per follower, its edges that bound its timeline ({@link boundsOf}): few, since only
   * follows with a copy limit and unfollows that keep history make them.
   */
  private readonly bounded = new Map<FeedId, Map<FeedId, EdgeBound>>();
  /**
   * This process's own events, applied as soon as they were durable and so ahead of the log
   * reader, until the reader passes them: an erasure read after them applies them again.
   */
  private ahead: Array<{ event: FeedLogEvent; position: number }> = [];

  /**
   * The edges once, compactly: a sorted table of feed ids, and per target its followers as
   * indexes into it. The following side is derived on restore.
   */
  protected *writeState(writer: SnapshotWriter): Generator<void, void, void> {
    const targetFeeds = [...this.followersOf.keys()];
    const ids = new Set<FeedId>();
    let edges = 0;
    for (let start = 0; start < targetFeeds.length; ) {
      const end = this.stepEnd(targetFeeds, start);
      edges += this.collectFeeds(targetFeeds, start, end, ids);
      start = end;
      yield;
    }
    const feeds = [...ids].sort(compareFeeds);
    yield;
    const indexOf = new Map<FeedId, number>();
    feeds.forEach((feed, i) => indexOf.set(feed, i));
    const targets = targetFeeds.map((target) => indexOf.get(target)!).sort((a, b) => a - b);
    const targetsInOrder = targets.map((target) => feeds[target]!);
    yield;
    const followers = new Uint32Array(targets.length * 2 + edges);
    for (let start = 0, at = 0; start < targets.length; ) {
      const end = this.stepEnd(targetsInOrder, start);
      at = this.writeFollowers(targets, targetsInOrder, start, end, indexOf, followers, at);
      start = end;
      yield;
    }
    writer.strings(feeds).uint32s(followers);
    yield;
    const requests = [...this.requestsOf.keys()].flatMap((target) => [...this.requestsOf.members(target)].map((follower) => [target, follower]));
    writer.strings(requests.map(([target]) => target)).strings(requests.map(([, follower]) => follower));
    writer.strings([...this.privateFeeds]);
    const bounds = [...this.bounded].flatMap(([follower, edges]) => [...edges.values()].map((bound) => ({ follower, bound })));
    writer.strings(bounds.map(({ follower }) => follower)).strings(bounds.map(({ bound }) => bound.feed));
    writer.strings(bounds.map(({ bound }) => bound.since ?? ''));
    writer.float64s(Float64Array.from(bounds, ({ bound }) => bound.followedAt ?? -1)).float64s(Float64Array.from(bounds, ({ bound }) => bound.unfollowedAt ?? -1));
    // Own events ahead of the snapshot's position, which an erasure in the tail replayed after a restore must apply again.
    if (this.ahead.length > 0) writer.strings(this.ahead.map((own) => JSON.stringify(own.event))).float64s(Float64Array.from(this.ahead, (own) => own.position));
  }

  /** Where a snapshot step that starts at `start` of `targets` ends: after about {@link EDGES_PER_STEP} edges, one target at least. */
  private stepEnd(targets: readonly FeedId[], start: number): number {
    let end = start;
    for (let edges = 0; end < targets.length && (end === start || edges < EDGES_PER_STEP); end++) edges += this.followersOf.sizeOf(targets[end]!);
    return end;
  }

  /** Adds the targets from `start` to `end` and their followers to `ids`; returns the number of their edges. */
  private collectFeeds(targets: readonly FeedId[], start: number, end: number, ids: Set<FeedId>): number {
    let edges = 0;
    for (let index = start; index < end; index++) {
      const target = targets[index]!;
      ids.add(target);
      for (const follower of this.followersOf.members(target)) ids.add(follower);
      edges += this.followersOf.sizeOf(target);
    }
    return edges;
  }

  /** Writes each target's index, follower count and followers' indexes from `at` on; returns where it stopped. */
  private writeFollowers(targets: readonly number[], feeds: readonly FeedId[], start: number, end: number, indexOf: Map<FeedId, number>, followers: Uint32Array, at: number): number {
    for (let index = start; index < end; index++) {
      const feed = feeds[index]!;
      followers[at++] = targets[index]!;
      followers[at++] = this.followersOf.sizeOf(feed);
      for (const follower of this.followersOf.members(feed)) followers[at++] = indexOf.get(follower)!;
    }
    return at;
  }

  /**
   * Targets come in feed order and each one's followers too, so both sides' member lists come
   * out sorted and every set is loaded in one go, in O(edges).
   */
  protected readState(reader: SnapshotReader): () => void {
    const feeds = reader.presentStrings() as FeedId[];
    const followers = reader.uint32s();
    const followingKeys = new Map<number, FeedId[]>();
    const followersOf: Array<[FeedId, FeedId[]]> = [];
    const feedAt = (index: number | undefined) => {
      const feed = index === undefined ? undefined : feeds[index];
      if (feed === undefined) throw new SnapshotCorruptError(`feed ${index} of ${feeds.length}`);
      return feed;
    };
    for (let at = 0; at < followers.length; ) {
      const target = feedAt(followers[at++]);
      const count = followers[at++] ?? 0;
      if (at + count > followers.length) throw new SnapshotCorruptError(`the followers of ${target} run past the edges`);
      const keys: FeedId[] = new Array(count);
      for (let i = 0; i < count; i++) {
        const follower = followers[at++]!;
        keys[i] = feedAt(follower);
        let following = followingKeys.get(follower);
        if (!following) followingKeys.set(follower, (following = []));
        following.push(target);
      }
      followersOf.push([target, keys]);
    }
    const requestTargets = reader.presentStrings() as FeedId[];
    const requestFollowers = reader.presentStrings() as FeedId[];
    const privateFeeds = reader.presentStrings() as FeedId[];
    if (requestTargets.length !== requestFollowers.length) throw new SnapshotCorruptError(`${requestTargets.length} requested feeds and ${requestFollowers.length} requesting ones`);
    const boundFollowers = reader.presentStrings() as FeedId[];
    const boundFeeds = reader.presentStrings() as FeedId[];
    const sinces = reader.presentStrings();
    const followedAts = reader.float64s();
    const unfollowedAts = reader.float64s();
    const boundCount = boundFollowers.length;
    const aheadEvents = reader.nextHoldsStrings() ? (reader.presentStrings().map((json) => JSON.parse(json)) as FeedLogEvent[]) : [];
    const aheadPositions = aheadEvents.length > 0 ? reader.float64s() : new Float64Array(0);
    if (aheadEvents.length !== aheadPositions.length) throw new SnapshotCorruptError(`${aheadEvents.length} own events ahead and ${aheadPositions.length} positions`);
    if (boundFeeds.length !== boundCount || sinces.length !== boundCount || followedAts.length !== boundCount || unfollowedAts.length !== boundCount) {
      throw new SnapshotCorruptError(`bounded edges of ${boundCount} followers, ${boundFeeds.length} feeds, ${sinces.length} bounds, ${followedAts.length} and ${unfollowedAts.length} positions`);
    }
    // Nothing changes until the whole snapshot has been read: a corrupt one leaves the store empty.
    return () => {
      for (const [target, keys] of followersOf) this.followersOf.restore(target, keys);
      for (const [follower, keys] of followingKeys) this.followingOf.restore(feeds[follower]!, keys);
      requestTargets.forEach((target, i) => this.requestsOf.add(target, requestFollowers[i]!));
      for (const feed of privateFeeds) this.privateFeeds.add(feed);
      boundFollowers.forEach((follower, i) => {
        const bound: EdgeBound = { feed: boundFeeds[i]! };
        if (sinces[i] !== '') bound.since = sinces[i]!;
        if (followedAts[i]! >= 0) bound.followedAt = followedAts[i]!;
        if (unfollowedAts[i]! >= 0) bound.unfollowedAt = unfollowedAts[i]!;
        this.setBound(follower, bound);
      });
      this.ahead = aheadEvents.map((event, i) => ({ event, position: aheadPositions[i]! }));
    };
  }

  /**
   * Keeps or drops the edge as `evolveFollowEdge` leaves it, with its bound (a follow's
   * `since`, an unfollow's kept history); keeps requests and privacy.
   */
  protected evolve(event: FeedEvent, position: number): void {
    switch (event.type) {
      case 'FollowRequested':
        this.requestsOf.add(event.data.target, event.data.follower);
        return;
      case 'FollowRequestRejected':
        this.requestsOf.delete(event.data.target, event.data.follower);
        return;
      case 'FeedSettingsChanged':
        if (event.data.private) this.privateFeeds.add(event.data.feed);
        else this.privateFeeds.delete(event.data.feed);
        return;
      case 'FeedErased':
        this.erase(event.data.feed, position);
        return;
    }
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    // The edge's state before does not change the outcome: no lookup first.
    if (event.type === 'FeedFollowed') {
      this.addEdge(follower, target);
      if (event.data.since !== undefined) this.setBound(follower, { feed: target, since: event.data.since, followedAt: position });
      return;
    }
    if (event.data.keepHistory && this.followingOf.has(follower, target)) {
      const live = this.bounded.get(follower)?.get(target);
      this.setBound(follower, { ...live, feed: target, unfollowedAt: position });
    } else this.deleteBound(follower, target);
    this.followersOf.delete(target, follower);
    this.followingOf.delete(follower, target);
  }

  /**
   * Forgets an erased feed's edges both ways, its requests both ways, its kept histories
   * both ways and its settings. Requests it made are found by a walk over every requested
   * feed: erasures are rare, and a reverse index would cost every request.
   */
  private erase(feed: FeedId, position: number): void {
    for (const target of [...this.followingOf.members(feed)]) this.followersOf.delete(target, feed);
    for (const follower of [...this.followersOf.members(feed)]) this.followingOf.delete(follower, feed);
    this.followingOf.drop(feed);
    this.followersOf.drop(feed);
    this.requestsOf.drop(feed);
    for (const target of [...this.requestsOf.keys()]) this.requestsOf.delete(target, feed);
    this.privateFeeds.delete(feed);
    this.bounded.delete(feed);
    for (const follower of [...this.bounded.keys()]) this.deleteBound(follower, feed);
    // What this process appended after the erasure and applied before reading it is kept, as
    // a replay in log order would have it: a follow of a reused feed id just after it was erased.
    for (const own of this.ahead) if (own.position > position) this.applyAgain(own.event, own.position, feed);
  }

  /**
   * Applies again what an own event did to `feed`'s edges, requests and settings: of an
   * import of follows, only the follows `feed` is a side of (the others stand as they are,
   * later own unfollows included); any other event that concerns `feed`, whole.
   */
  private applyAgain(event: FeedLogEvent, position: number, feed: FeedId): void {
    if (event.type === 'FeedsFollowed') {
      for (const [follower, target] of event.data.follows) if (follower === feed || target === feed) this.addEdge(follower, target);
    } else if (graphEventConcerns(event, feed)) this.evolveLogged(event, position);
  }

  protected override appliedAhead(record: RecordedEvent, decided: FeedLogEvent): void {
    if (record.position > this.readPosition && this.eventTypes.has(record.type)) this.ahead.push({ event: decided, position: record.position });
  }

  override async apply(events: readonly RecordedEvent[]): Promise<void> {
    await super.apply(events);
    if (this.ahead.length > 0) this.ahead = this.ahead.filter((own) => own.position > this.readPosition);
  }

  private setBound(follower: FeedId, bound: EdgeBound): void {
    let edges = this.bounded.get(follower);
    if (!edges) this.bounded.set(follower, (edges = new Map()));
    edges.set(bound.feed, bound);
  }

  private deleteBound(follower: FeedId, target: FeedId): void {
    const edges = this.bounded.get(follower);
    if (!edges?.delete(target)) return;
    if (edges.size === 0) this.bounded.delete(follower);
  }

  /** An import's items are follows: each pair is added as its `FeedFollowed` would be, with no object made for it. */
  protected override evolveLogged(event: FeedLogEvent, position: number): void {
    if (event.type !== 'FeedsFollowed') return super.evolveLogged(event, position);
    const { follows } = event.data;
    for (let index = 0; index < follows.length; index++) this.addEdge(follows[index]![0], follows[index]![1]);
  }

  /** A follow (it replaces a kept edge, and a bound of its own is set after); an approved request is one, and is no longer waiting. */
  private addEdge(follower: FeedId, target: FeedId): void {
    if (this.bounded.size > 0) this.deleteBound(follower, target);
    this.followersOf.add(target, follower);
    this.followingOf.add(follower, target);
    this.requestsOf.delete(target, follower);
  }

  async boundsOf(follower: FeedId): Promise<EdgeBound[]> {
    const edges = this.bounded.get(follower);
    return edges ? [...edges.values()].map((bound) => ({ ...bound })) : [];
  }

  /** Looks through every bounded follower: asked only when a feed turns private, and bounded edges are few. */
  async keptBy(target: FeedId): Promise<FeedId[]> {
    const readers: FeedId[] = [];
    for (const [follower, edges] of this.bounded) if (edges.get(target)?.unfollowedAt !== undefined) readers.push(follower);
    return readers;
  }

  async keptEdges(): Promise<Array<{ follower: FeedId; target: FeedId }>> {
    const kept: Array<{ follower: FeedId; target: FeedId }> = [];
    for (const [follower, edges] of this.bounded) for (const [target, bound] of edges) if (bound.unfollowedAt !== undefined) kept.push({ follower, target });
    return kept.sort((a, b) => compareFeeds(a.target, b.target) || compareFeeds(a.follower, b.follower));
  }

  async edgeState(follower: FeedId, target: FeedId): Promise<EdgeState> {
    if (this.followingOf.has(follower, target)) return 'following';
    return this.requestsOf.has(target, follower) ? 'requested' : 'none';
  }

  async requests(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return this.requestsOf.page(feed, after, limit);
  }

  async isPrivate(feed: FeedId): Promise<boolean> {
    return this.privateFeeds.has(feed);
  }

  async isFollowing(follower: FeedId, target: FeedId): Promise<boolean> {
    return this.followingOf.has(follower, target);
  }

  async followingEach(edges: ReadonlyArray<readonly [FeedId, FeedId]>): Promise<boolean[]> {
    const following = new Array<boolean>(edges.length);
    for (let index = 0; index < edges.length; index++) {
      const edge = edges[index]!;
      following[index] = this.followingOf.has(edge[0], edge[1]);
    }
    return following;
  }

  async followers(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return this.followersOf.page(feed, after, limit);
  }

  async following(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return this.followingOf.page(feed, after, limit);
  }

  async counts(feed: FeedId): Promise<{ followers: number; following: number }> {
    return { followers: this.followersOf.sizeOf(feed), following: this.followingOf.sizeOf(feed) };
  }
}

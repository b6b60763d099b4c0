import type { FeedEvent, FeedId, FeedLogEvent } from '@feedmill/contracts';
import { evolveFollowEdge, followEdgeEventTypes, isFollowEdgeEvent } from '@feedmill/feed-models';
import type { GraphStore } from '../ports.js';
import { MemoryProjection } from './memory-projection.js';
import sortedBtree from 'sorted-btree';
import sortedBtreeBulkLoad from 'sorted-btree/extended/bulkLoad.js';

// A CommonJS module: under Node's ESM loader its class is the `default` of module.exports.
const BTree = sortedBtree.default;
/** A sorted set: values are left undefined, so that sorted-btree keeps no array of them. */
type FeedTree = InstanceType<typeof sortedBtree.default<FeedId, undefined>>;

/**
 * Follow edges both ways, each side in a B+ tree: sorted for stable paging, and O(log n)
 * to change even for a feed with hundreds of thousands of followers.
 */
export class MemoryGraphStore extends MemoryProjection implements GraphStore {
  readonly name = 'graph';
  protected readonly eventTypes = followEdgeEventTypes;
  private readonly followersOf = new Map<FeedId, FeedTree>();
  private readonly followingOf = new Map<FeedId, FeedTree>();

  /**
   * The edges once, compactly: a sorted table of feed ids, and per target its followers as
   * indexes into it. The following side is derived on restore.
   */
  protected stateForSnapshot(): GraphSnapshot {
    const ids = new Set<FeedId>();
    let edges = 0;
    for (const [target, followers] of this.followersOf) {
      if (followers.size === 0) continue;
      ids.add(target);
      for (const follower of followers.keys()) ids.add(follower);
      edges += followers.size;
    }
    const feeds = [...ids].sort(compareFeeds);
    const indexOf = new Map<FeedId, number>();
    feeds.forEach((feed, i) => indexOf.set(feed, i));
    const targets: number[] = [];
    for (const [target, followers] of this.followersOf) if (followers.size > 0) targets.push(indexOf.get(target)!);
    targets.sort((a, b) => a - b);
    const followers = new Uint32Array(targets.length * 2 + edges);
    let at = 0;
    for (const target of targets) {
      const tree = this.followersOf.get(feeds[target]!)!;
      followers[at++] = target;
      followers[at++] = tree.size;
      for (const follower of tree.keys()) followers[at++] = indexOf.get(follower)!;
    }
    return { feeds, followers };
  }

  /**
   * Targets come in feed order and each one's followers too, so both sides' key lists come
   * out sorted and every tree is bulk-loaded, in O(edges).
   */
  protected restoreState(state: unknown): void {
    const { feeds, followers } = state as GraphSnapshot;
    const followingKeys = new Map<number, FeedId[]>();
    for (let at = 0; at < followers.length; ) {
      const target = feeds[followers[at++]!]!;
      const count = followers[at++]!;
      const keys: FeedId[] = new Array(count);
      for (let i = 0; i < count; i++) {
        const follower = followers[at++]!;
        keys[i] = feeds[follower]!;
        let following = followingKeys.get(follower);
        if (!following) followingKeys.set(follower, (following = []));
        following.push(target);
      }
      this.followersOf.set(target, treeOfSorted(keys));
    }
    for (const [follower, keys] of followingKeys) this.followingOf.set(feeds[follower]!, treeOfSorted(keys));
  }

  /** Keeps or drops the edge as {@link evolveFollowEdge} leaves it. */
  protected evolve(event: FeedEvent): void {
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    // The edge's state before does not change the outcome: no lookup first.
    if (evolveFollowEdge(false, event)) this.addEdge(follower, target);
    else {
      this.followersOf.get(target)?.delete(follower);
      this.followingOf.get(follower)?.delete(target);
    }
  }

  /** An import's items are follows: each pair is added as its `FeedFollowed` would be, with no object made for it. */
  protected override evolveLogged(event: FeedLogEvent, position: number): void {
    if (event.type !== 'FeedsFollowed') return super.evolveLogged(event, position);
    const { follows } = event.data;
    for (let index = 0; index < follows.length; index++) this.addEdge(follows[index]![0], follows[index]![1]);
  }

  private addEdge(follower: FeedId, target: FeedId): void {
    treeOf(this.followersOf, target).setIfNotPresent(follower, undefined);
    treeOf(this.followingOf, follower).setIfNotPresent(target, undefined);
  }

  async isFollowing(follower: FeedId, target: FeedId): Promise<boolean> {
    return this.followingOf.get(follower)?.has(target) ?? false;
  }

  async followingEach(edges: ReadonlyArray<readonly [FeedId, FeedId]>): Promise<boolean[]> {
    const following = new Array<boolean>(edges.length);
    for (let index = 0; index < edges.length; index++) {
      const edge = edges[index]!;
      following[index] = this.followingOf.get(edge[0])?.has(edge[1]) ?? false;
    }
    return following;
  }

  async followers(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return pageAfter(this.followersOf.get(feed), after, limit);
  }

  async following(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return pageAfter(this.followingOf.get(feed), after, limit);
  }

  async counts(feed: FeedId): Promise<{ followers: number; following: number }> {
    return { followers: this.followersOf.get(feed)?.size ?? 0, following: this.followingOf.get(feed)?.size ?? 0 };
  }
}

interface GraphSnapshot {
  /** Every feed with an edge, in the trees' order. */
  feeds: FeedId[];
  /** Per target: its index, its follower count, then its followers' indexes in order. */
  followers: Uint32Array;
}

/** Feed ids are strings: sorted-btree's default comparator would first ask whether they are numbers. */
const compareFeeds = (a: FeedId, b: FeedId): number => (a < b ? -1 : a > b ? 1 : 0);
/** sorted-btree's default node size. */
const MAX_NODE_SIZE = 32;

function treeOfSorted(keys: FeedId[]): FeedTree {
  return sortedBtreeBulkLoad.bulkLoad<FeedId, undefined>(keys, new Array<undefined>(keys.length).fill(undefined), MAX_NODE_SIZE, compareFeeds) as FeedTree;
}

function treeOf(map: Map<FeedId, FeedTree>, key: FeedId): FeedTree {
  let tree = map.get(key);
  if (!tree) map.set(key, (tree = new BTree<FeedId, undefined>(undefined, compareFeeds)));
  return tree;
}

/** Up to `limit` feeds strictly after `after`, in order. */
function pageAfter(tree: FeedTree | undefined, after: FeedId | undefined, limit: number): FeedId[] {
  const page: FeedId[] = [];
  if (!tree) return page;
  for (const feed of tree.keys(after)) {
    if (feed === after) continue;
    if (page.length === limit) break;
    page.push(feed);
  }
  return page;
}

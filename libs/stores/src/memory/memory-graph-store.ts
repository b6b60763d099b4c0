import type { FeedEvent, FeedId } from '@feedmill/contracts';
import { evolveFollowEdge, followEdgeEventTypes, isFollowEdgeEvent } from '@feedmill/feed-models';
import type { GraphStore } from '../ports.js';
import { MemoryProjection } from './memory-projection.js';
import sortedBtree from 'sorted-btree';

// A CommonJS module: under Node's ESM loader its class is the `default` of module.exports.
const BTree = sortedBtree.default;
type FeedTree = InstanceType<typeof sortedBtree.default<FeedId, true>>;

/**
 * Follow edges both ways, each side in a B+ tree: sorted for stable paging, and O(log n)
 * to change even for a feed with hundreds of thousands of followers.
 */
export class MemoryGraphStore extends MemoryProjection implements GraphStore {
  readonly name = 'graph';
  protected readonly eventTypes = followEdgeEventTypes;
  private readonly followersOf = new Map<FeedId, FeedTree>();
  private readonly followingOf = new Map<FeedId, FeedTree>();

  /** Keeps or drops the edge as {@link evolveFollowEdge} leaves it. */
  protected evolve(event: FeedEvent): void {
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    // The edge's state before does not change the outcome: no lookup first.
    if (evolveFollowEdge(false, event)) {
      treeOf(this.followersOf, target).setIfNotPresent(follower, true);
      treeOf(this.followingOf, follower).setIfNotPresent(target, true);
    } else {
      this.followersOf.get(target)?.delete(follower);
      this.followingOf.get(follower)?.delete(target);
    }
  }

  async isFollowing(follower: FeedId, target: FeedId): Promise<boolean> {
    return this.followingOf.get(follower)?.has(target) ?? false;
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

function treeOf(map: Map<FeedId, FeedTree>, key: FeedId): FeedTree {
  let tree = map.get(key);
  if (!tree) map.set(key, (tree = new BTree<FeedId, true>()));
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

import type { FeedId } from '@feedmill/contracts';
import sortedBtree from 'sorted-btree';
import sortedBtreeBulkLoad from 'sorted-btree/extended/bulkLoad.js';

/** A sorted set: values are left undefined, so that sorted-btree keeps no array of them. */
type FeedTree = InstanceType<typeof sortedBtree.default<FeedId, undefined>>;

/**
 * A set's members while it is small: a sorted array. Most feeds follow a handful of feeds and
 * most are followed by a handful; an array costs no tree, no node and no copy per insert.
 */
type SmallSet = FeedId[];

/** Members past which a set becomes a B+ tree: inserting into an array this long still moves little. */
export const SMALL_SET_MAX = 64;
/** sorted-btree's default node size. */
const MAX_NODE_SIZE = 32;

/** Feed ids are strings: sorted-btree's default comparator would first ask whether they are numbers. */
export const compareFeeds = (a: FeedId, b: FeedId): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * A sorted set of feed ids per feed, as a graph's sides need them: membership, counts, and
 * pages in id order after a given id. A set is a sorted array while it has at most
 * {@link SMALL_SET_MAX} members, and a B+ tree after that, O(log n) to change even for a feed
 * with hundreds of thousands of followers. A set that empties is kept, empty.
 */
export class SortedFeedSets {
  private readonly sets = new Map<FeedId, SmallSet | FeedTree>();

  /** Adds `member` to `key`'s set; false if it was there. */
  add(key: FeedId, member: FeedId): boolean {
    const set = this.sets.get(key);
    if (set === undefined) {
      this.sets.set(key, [member]);
      return true;
    }
    if (!Array.isArray(set)) return set.setIfNotPresent(member, undefined);
    const at = lowerBound(set, member);
    if (at < set.length && set[at] === member) return false;
    if (set.length < SMALL_SET_MAX) {
      set.push(member);
      for (let index = set.length - 1; index > at; index--) set[index] = set[index - 1]!;
      set[at] = member;
    } else {
      const tree = treeOfSorted(set);
      tree.set(member, undefined);
      this.sets.set(key, tree);
    }
    return true;
  }

  /** Removes `member` from `key`'s set; false if it was not there. */
  delete(key: FeedId, member: FeedId): boolean {
    const set = this.sets.get(key);
    if (set === undefined) return false;
    if (!Array.isArray(set)) return set.delete(member);
    const at = lowerBound(set, member);
    if (at === set.length || set[at] !== member) return false;
    for (let index = at; index < set.length - 1; index++) set[index] = set[index + 1]!;
    set.pop();
    return true;
  }

  has(key: FeedId, member: FeedId): boolean {
    const set = this.sets.get(key);
    if (set === undefined) return false;
    if (!Array.isArray(set)) return set.has(member);
    const at = lowerBound(set, member);
    return at < set.length && set[at] === member;
  }

  sizeOf(key: FeedId): number {
    const set = this.sets.get(key);
    return set === undefined ? 0 : Array.isArray(set) ? set.length : set.size;
  }

  /** Up to `limit` members of `key`'s set strictly after `after` (from the first when undefined), in order. */
  page(key: FeedId, after: FeedId | undefined, limit: number): FeedId[] {
    const set = this.sets.get(key);
    if (set === undefined) return [];
    if (Array.isArray(set)) {
      const from = after === undefined ? 0 : upperBound(set, after);
      return set.slice(from, from + limit);
    }
    const page: FeedId[] = [];
    for (const feed of set.keys(after)) {
      if (feed === after) continue;
      if (page.length === limit) break;
      page.push(feed);
    }
    return page;
  }

  /** The keys whose sets have members, in no particular order. */
  *keys(): IterableIterator<FeedId> {
    for (const [key, set] of this.sets) if ((Array.isArray(set) ? set.length : set.size) > 0) yield key;
  }

  /** The members of `key`'s set, in order. */
  members(key: FeedId): Iterable<FeedId> {
    const set = this.sets.get(key);
    return set === undefined ? [] : Array.isArray(set) ? set : set.keys();
  }

  /** Forgets `key`'s set whole. */
  drop(key: FeedId): void {
    this.sets.delete(key);
  }

  /** Gives an empty `key` its members, sorted and distinct: in O(members). */
  restore(key: FeedId, sorted: FeedId[]): void {
    this.sets.set(key, sorted.length <= SMALL_SET_MAX ? sorted : treeOfSorted(sorted));
  }
}

function treeOfSorted(keys: readonly FeedId[]): FeedTree {
  return sortedBtreeBulkLoad.bulkLoad<FeedId, undefined>(keys as FeedId[], new Array<undefined>(keys.length).fill(undefined), MAX_NODE_SIZE, compareFeeds) as FeedTree;
}

/** The first index of sorted `values` whose value is not below `value`. */
function lowerBound(values: readonly FeedId[], value: FeedId): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** The first index of sorted `values` whose value is above `value`. */
function upperBound(values: readonly FeedId[], value: FeedId): number {
  let low = 0;
  let high = values.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! <= value) low = middle + 1;
    else high = middle;
  }
  return low;
}

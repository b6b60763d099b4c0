import { justAbove, sortKeyOf, type Activity, type SortKey } from '@feedmill/contracts';
import type { CappedCache } from './capped-cache.js';

export interface TimelinePage {
  items: Activity[];
  /** Sort key of the last item when another page exists, else null. */
  next: SortKey | null;
}

/**
 * Fetches up to `limit` activities below `before` from the followed feeds themselves
 * (fan-out on read), newest first.
 */
export type PullPath = (before: SortKey | undefined, limit: number) => Promise<Activity[]>;

/**
 * One page of a reader's timeline: the cache above its floor, then the pull path below it.
 * Because the cache is exact above its floor, the two never overlap and never leave a gap,
 * so paging with the returned cursor sees every activity once. Without a cache (the reader
 * was never delivered to) everything comes from the pull path.
 */
export async function readTimelinePage(
  cache: CappedCache | undefined,
  before: SortKey | undefined,
  limit: number,
  pull: PullPath,
): Promise<TimelinePage> {
  // One item beyond the page tells whether a next page exists without a second round trip.
  const wanted = limit + 1;
  const fromCache = cache ? cache.newestBelow(before, wanted) : [];
  let items = fromCache;
  if (fromCache.length < wanted && (!cache || cache.floor !== null)) {
    const floorBound = cache?.floor == null ? undefined : justAbove(cache.floor);
    const pullBefore = before === undefined ? floorBound : floorBound === undefined || before < floorBound ? before : floorBound;
    const pulled = await pull(pullBefore, wanted - fromCache.length);
    items = fromCache.concat(pulled);
  }
  if (items.length <= limit) return { items, next: null };
  const page = items.slice(0, limit);
  return { items: page, next: sortKeyOf(page[page.length - 1]!) };
}

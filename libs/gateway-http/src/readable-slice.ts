import { sortKeyOf, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';

/**
 * Pages of a slice read before the page the caller sees is cut short: a slice mostly of
 * feeds the caller may not read answers a short page (even an empty one) with a cursor,
 * rather than scanning the whole slice in one request.
 */
export const MAX_SLICE_ROUNDS = 8;

/** One page of a slice as content answers it: `next` is the key of its last activity. */
export type SlicePageReader = (before: SortKey | undefined, limit: number) => Promise<{ items: Activity[]; next: SortKey | null }>;

/** The feeds among those asked that the caller may read. */
export type ReadableFeeds = (feeds: readonly FeedId[]) => Promise<ReadonlySet<FeedId>>;

/**
 * A page of at most `limit` activities of a slice the caller may read, strictly below
 * `before`, newest first, and the key the next page starts below (`null` at the end).
 *
 * The key handed back never names an activity the caller may not read: it is either the
 * last activity of the page, or, when {@link MAX_SLICE_ROUNDS} reads held too little the
 * caller may see, a time boundary `time|` (no id) below which the next page starts. So that
 * this boundary loses nothing when activities share a time, the scan goes on to the end of
 * the millisecond it stopped in (how long that takes is bounded by how many activities of
 * the slice share that millisecond). A boundary still tells the time of an activity the
 * page left out, and an empty page with a cursor tells that some exist.
 */
export async function readReadableSlice(read: SlicePageReader, readable: ReadableFeeds, before: SortKey | undefined, limit: number): Promise<{ items: Activity[]; next: SortKey | null }> {
  const items: Activity[] = [];
  // The time whose remaining activities are being scanned before the page stops at its boundary.
  let finishing: string | undefined;
  for (let round = 1; ; round++) {
    // One more than the page, so that a full page knows whether more follow.
    const page = await read(before, limit + 1);
    const allowed = await readable(page.items.map((activity) => activity.feed));
    for (const activity of page.items) {
      if (finishing !== undefined && activity.time < finishing) return { items, next: timeBoundary(finishing) };
      if (!allowed.has(activity.feed)) continue;
      if (items.length === limit) return { items, next: sortKeyOf(items[limit - 1]!) };
      items.push(activity);
    }
    if (page.next === null) return { items, next: null };
    before = page.next;
    if (round >= MAX_SLICE_ROUNDS && finishing === undefined) finishing = timeOfKey(before);
  }
}

/** The key below every key of `time` and above every earlier one: `time|`, naming no activity. */
export function timeBoundary(time: string): SortKey {
  return `${time}|`;
}

function timeOfKey(key: SortKey): string {
  return key.slice(0, key.indexOf('|'));
}

import { sortKeyOf, type FeedId, type KeyOf, type SortKey, type TimelineItem } from '@feedmill/contracts';
import type { PullPath, StoredTimeline, TimelinePage } from '../timeline-read.js';
import { PULLED_WHOLE, type PulledEdges } from './push-or-pull.js';

/**
 * One page of a `hybrid` timeline: the stored entries of the pushed edges, the pulled
 * edges' feeds read now, and, below the stored timeline's floor and below each switched
 * edge's bound, the feeds those parts leave to the pull path.
 *
 * Every part returns its newest entries below the cursor within the keys it covers, and the
 * parts cover each feed's keys without overlap, so the newest `limit + 1` of their merge are
 * the page and its cursor, the same as if every edge were pushed. A part that covers only
 * keys below the page's oldest entry cannot change the page, and is not read: a reader
 * whose first page is filled by what is stored and pulled asks nothing below.
 */
export async function readHybridPage(
  stored: StoredTimeline | undefined,
  edges: PulledEdges,
  before: SortKey | undefined,
  limit: number,
  pull: PullPath,
  keyOf: KeyOf = sortKeyOf,
): Promise<TimelinePage> {
  const wanted = limit + 1;
  const pullBelow = stored?.pullBelow ?? null;
  const pulledWhole: FeedId[] = [];
  /** Parts that cover only keys below a bound: the switched edges above the floor, then the floor itself. */
  const below: Array<{ top: SortKey; feeds: FeedId[] | undefined }> = [];
  for (const [feed, from] of edges) {
    if (from === PULLED_WHOLE) pulledWhole.push(feed);
    else if (pullBelow === null || from > pullBelow) below.push({ top: from, feeds: [feed] });
    // Else the floor has risen past the switch: the feed is pulled below the floor like any.
  }
  let items: TimelineItem[] = stored ? await stored.newestBelow(before, wanted) : [];
  if (pulledWhole.length > 0) items = mergeDistinct(items, await pull(before, wanted, { only: pulledWhole }), wanted, keyOf);
  // Below the floor, every followed feed but those read whole or below a bound of their own.
  const except = pullBelow === null ? [] : pulledWhole.concat(below.map((part) => part.feeds![0]!));
  if (pullBelow !== null) below.push({ top: pullBelow, feeds: undefined });
  below.sort((a, b) => (a.top > b.top ? -1 : a.top < b.top ? 1 : 0));
  for (const part of below) {
    if (items.length >= wanted && keyOf(items[wanted - 1]!) >= part.top) break;
    const bound = before === undefined || part.top < before ? part.top : before;
    items = mergeDistinct(items, await pull(bound, wanted, part.feeds ? { only: part.feeds } : { except }), wanted, keyOf);
  }
  if (items.length <= limit) return { items, next: null };
  const page = items.slice(0, limit);
  return { items: page, next: keyOf(page[page.length - 1]!) };
}

/**
 * Two newest-first lists merged, newest first, at most `limit` long. An activity in both
 * (posted to several feeds, one pushed and one pulled) is taken once.
 */
function mergeDistinct(a: readonly TimelineItem[], b: readonly TimelineItem[], limit: number, keyOf: KeyOf): TimelineItem[] {
  if (b.length === 0) return a.length > limit ? a.slice(0, limit) : (a as TimelineItem[]);
  const out: TimelineItem[] = [];
  const taken = new Set<string>();
  let i = 0;
  let j = 0;
  while (out.length < limit && (i < a.length || j < b.length)) {
    const fromA = j >= b.length || (i < a.length && keyOf(a[i]!) >= keyOf(b[j]!));
    const item = fromA ? a[i++]! : b[j++]!;
    if (taken.has(item.id)) continue;
    taken.add(item.id);
    out.push(item);
  }
  return out;
}

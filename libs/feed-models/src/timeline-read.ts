import { sortKeyOf, type Activity, type FeedId, type KeyOf, type SortKey, type TimelineItem } from '@feedmill/contracts';

export interface TimelinePage<Item extends TimelineItem = TimelineItem> {
  items: Item[];
  /** Sort key of the last item when another page exists, else null. */
  next: SortKey | null;
}

/**
 * Which followed feeds a pull reads: some of them by name, or all but some. A hybrid
 * timeline reads its pulled edges' feeds by name, and the rest below its floor.
 */
export type PullScope = { only: readonly FeedId[] } | { except: readonly FeedId[] };

/**
 * Fetches up to `limit` activities below `before` from the followed feeds themselves
 * (fan-out on read), newest first: every followed feed, or those of `scope`.
 */
export type PullPath = (before: SortKey | undefined, limit: number, scope?: PullScope) => Promise<Activity[]>;

/**
 * What a storage model holds of a reader's timeline: the newest entries, exact from
 * `pullBelow` up (every timeline entry with a key at or above it is stored); below it the
 * pull path serves. `pullBelow` null means the stored entries are the whole timeline.
 */
export interface StoredTimeline {
  readonly pullBelow: SortKey | null;
  /** Up to `limit` stored entries with keys below `before`, newest first. */
  newestBelow(before: SortKey | undefined, limit: number): TimelineItem[] | Promise<TimelineItem[]>;
}

/**
 * One page of a reader's timeline: what is stored, then the pull path below it. Because
 * the stored part is exact from its bound up, the two never overlap and never leave a gap,
 * so paging with the returned cursor sees every activity once. With nothing stored (a
 * reader never materialized, or the pull model) everything comes from the pull path.
 */
export async function readTimelinePage(
  stored: StoredTimeline | undefined,
  before: SortKey | undefined,
  limit: number,
  pull: PullPath,
  /** The timeline's order, for the cursor. @defaultValue by time */
  keyOf: KeyOf = sortKeyOf,
): Promise<TimelinePage> {
  // One item beyond the page tells whether a next page exists without a second round trip.
  const wanted = limit + 1;
  const fromStore: TimelineItem[] = stored ? await stored.newestBelow(before, wanted) : [];
  let items = fromStore;
  if (fromStore.length < wanted && (!stored || stored.pullBelow !== null)) {
    const bound = stored?.pullBelow ?? undefined;
    const pullBefore = before === undefined ? bound : bound === undefined || before < bound ? before : bound;
    const pulled = await pull(pullBefore, wanted - fromStore.length);
    items = fromStore.concat(pulled);
  }
  if (items.length <= limit) return { items, next: null };
  const page = items.slice(0, limit);
  return { items: page, next: keyOf(page[page.length - 1]!) };
}

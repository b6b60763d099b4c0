import type { KeyOf, SortKey } from '@feedmill/contracts';

/** A page of the entries newer than a cursor, newest first. */
export interface NewerPage<Item> {
  items: Item[];
  /**
   * Set when more entries newer than the cursor exist below the page (more arrived than one
   * page holds): the key of the page's oldest item, from which ordinary reads go on down to
   * the entries the client already has. Null when the page holds every newer entry.
   */
  next: SortKey | null;
}

/**
 * Newer-than polling: the newest `limit` entries with keys above `after`, newest first,
 * taken from `newest`, the timeline's first `limit + 1` entries (newest first, as any read
 * without a cursor gives them). Reading from the top rather than upwards from the cursor
 * goes through every storage model's ordinary read unchanged, and a poll costs what a
 * first page costs; the extra entry says whether the newer ones overflow the page.
 */
export function newerThan<Item extends { time: string; id: string; bumpedAt?: string }>(newest: readonly Item[], after: SortKey, limit: number, keyOf: KeyOf): NewerPage<Item> {
  let count = 0;
  while (count < newest.length && keyOf(newest[count]!) > after) count++;
  if (count <= limit) return { items: newest.slice(0, count), next: null };
  const items = newest.slice(0, limit);
  return { items, next: keyOf(items[limit - 1]!) };
}

/** The key of a page's newest item, the cursor a client polls with next (`?after=`); null for an empty page. */
export function newestKeyOf(items: readonly { time: string; id: string; bumpedAt?: string }[], keyOf: KeyOf): SortKey | null {
  return items.length === 0 ? null : keyOf(items[0]!);
}

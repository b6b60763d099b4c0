import { lowerBound } from '@feedmill/feed-models';

const identity = (s: string) => s;

/** Inserts into an ascending array of unique strings; returns false when already present. */
export function insertSorted(items: string[], value: string): boolean {
  const last = items[items.length - 1];
  if (last === undefined || last < value) {
    items.push(value);
    return true;
  }
  const index = lowerBound(items, value, identity);
  if (items[index] === value) return false;
  items.splice(index, 0, value);
  return true;
}

export function removeSorted(items: string[], value: string): boolean {
  const index = lowerBound(items, value, identity);
  if (items[index] !== value) return false;
  items.splice(index, 1);
  return true;
}

/** Up to `limit` items strictly after `after`, in order. */
export function pageAfter(items: readonly string[] | undefined, after: string | undefined, limit: number): string[] {
  if (!items) return [];
  let start = after === undefined ? 0 : lowerBound(items, after, identity);
  if (after !== undefined && items[start] === after) start++;
  return items.slice(start, start + limit);
}

export function hasSorted(items: readonly string[] | undefined, value: string): boolean {
  return items !== undefined && items[lowerBound(items, value, identity)] === value;
}

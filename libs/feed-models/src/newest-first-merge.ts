/**
 * Merges lists that are each sorted oldest-first into one newest-first list of at most
 * `limit` items, reading each list from its end. A binary heap over the list tails keeps
 * it O(lists + limit · log lists), so a reader following many feeds stays cheap.
 */
export interface DescendingSource<T> {
  items: readonly T[];
  /** Index of the newest item still to take; -1 when exhausted. */
  next: number;
  /** Items of this source failing it are passed over (a bounded feed's history). @defaultValue every item is taken */
  accept?: (item: T) => boolean;
}

export function mergeNewestFirst<T>(
  sources: DescendingSource<T>[],
  keyOf: (item: T) => string,
  limit: number,
  /** Items failing it are passed over. @defaultValue every item is taken */
  accept?: (item: T) => boolean,
): T[] {
  const heap = sources.filter((s) => s.next >= 0);
  const newer = (a: DescendingSource<T>, b: DescendingSource<T>) => keyOf(a.items[a.next]!) > keyOf(b.items[b.next]!);
  const siftDown = (start: number) => {
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let top = i;
      if (left < heap.length && newer(heap[left]!, heap[top]!)) top = left;
      if (right < heap.length && newer(heap[right]!, heap[top]!)) top = right;
      if (top === i) return;
      [heap[i], heap[top]] = [heap[top]!, heap[i]!];
      i = top;
    }
  };
  for (let i = Math.floor(heap.length / 2) - 1; i >= 0; i--) siftDown(i);
  const out: T[] = [];
  while (out.length < limit && heap.length > 0) {
    const source = heap[0]!;
    const item = source.items[source.next]!;
    if ((!source.accept || source.accept(item)) && (!accept || accept(item))) out.push(item);
    source.next -= 1;
    if (source.next < 0) {
      heap[0] = heap[heap.length - 1]!;
      heap.pop();
    }
    siftDown(0);
  }
  return out;
}

/** Index of the first item whose key is >= `key` in an oldest-first list (binary search). */
export function lowerBound<T>(items: readonly T[], key: string, keyOf: (item: T) => string): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyOf(items[mid]!) < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

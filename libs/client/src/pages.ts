/** A page of a paged read: its items, and the cursor of the next page (null at the end). */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/**
 * Every item of a paged read, fetching each page when the one before is used up: a caller
 * that stops early fetches no more.
 */
export async function* pages<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>): AsyncIterableIterator<T> {
  let cursor: string | undefined;
  for (;;) {
    const page = await fetchPage(cursor);
    yield* page.items;
    if (page.next === null) return;
    cursor = page.next;
  }
}

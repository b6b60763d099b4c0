import { sortKeyOf } from '@feedmill/contracts';
import { newerThan, newestKeyOf } from './newer-than.js';

const at = (second: number) => ({ id: `a${second}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
/** The first `limit + 1` entries of a timeline of seconds 1..10, newest first. */
const top = (limit: number) => Array.from({ length: 10 }, (_, i) => at(10 - i)).slice(0, limit + 1);

describe('newerThan', () => {
  it('gives every entry above the cursor, newest first, and no next when they fit', () => {
    const page = newerThan(top(5), sortKeyOf(at(7)), 5, sortKeyOf);
    expect(page.items.map((a) => a.id)).toEqual(['a10', 'a9', 'a8']);
    expect(page.next).toBeNull();
  });

  it('gives the newest `limit` and the key of the oldest as next when more are newer', () => {
    const page = newerThan(top(3), sortKeyOf(at(2)), 3, sortKeyOf);
    expect(page.items.map((a) => a.id)).toEqual(['a10', 'a9', 'a8']);
    expect(page.next).toBe(sortKeyOf(at(8)));
  });

  it('has no next when exactly `limit` are newer', () => {
    const page = newerThan(top(3), sortKeyOf(at(7)), 3, sortKeyOf);
    expect(page.items).toHaveLength(3);
    expect(page.next).toBeNull();
  });

  it('is empty at the newest entry, and its newest key is then null', () => {
    const page = newerThan(top(3), sortKeyOf(at(10)), 3, sortKeyOf);
    expect(page).toEqual({ items: [], next: null });
    expect(newestKeyOf(page.items, sortKeyOf)).toBeNull();
    expect(newestKeyOf(top(3), sortKeyOf)).toBe(sortKeyOf(at(10)));
  });
});

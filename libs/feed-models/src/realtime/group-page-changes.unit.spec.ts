import { groupPageChanges, type GroupPageChange } from './group-page-changes.js';

interface TestGroup {
  id: string;
  key: string;
  count: number;
}

/** A group whose place is its key: `g(5)` sits above `g(4)`. */
const g = (key: number, count = 1, id = `g${key}`): TestGroup => ({ id, key: String(key).padStart(4, '0'), count });
const same = (a: TestGroup, b: TestGroup) => a.count === b.count && a.key === b.key;

/** What a client shows once it applied the changes to what it showed, as the stream tells it to. */
function applied(shown: readonly TestGroup[], changes: readonly GroupPageChange<TestGroup>[]): TestGroup[] {
  let page = [...shown];
  for (const change of changes) {
    page = page.filter((group) => group.id !== (change.type === 'group' ? change.group.id : change.id));
    if (change.type === 'group') page.splice(change.rank, 0, change.group);
  }
  return page;
}

describe('groupPageChanges', () => {
  it('puts a new group at the top, and leaves unchanged ones alone', () => {
    expect(groupPageChanges([g(3), g(2)], [g(4), g(3), g(2)], 5, same)).toEqual([{ type: 'group', group: g(4), rank: 0 }]);
    expect(groupPageChanges([g(3), g(2)], [g(3), g(2)], 5, same)).toEqual([]);
  });

  it('moves a group that gained an activity to the top, once', () => {
    const grown = g(9, 2, 'g1');
    expect(groupPageChanges([g(3), g(2), g(1)], [grown, g(3), g(2)], 3, same)).toEqual([{ type: 'group', group: grown, rank: 0 }]);
  });

  it('says a group that lost an activity changed, and removes one that lost them all, but not one pushed below a full page', () => {
    const shrunk = g(2, 1);
    expect(groupPageChanges([g(3), g(2, 2)], [g(3), shrunk], 5, same)).toEqual([{ type: 'group', group: shrunk, rank: 1 }]);
    expect(groupPageChanges([g(3), g(2), g(1)], [g(3), g(1)], 5, same)).toEqual([{ type: 'groupRemoved', id: 'g2' }]);
    expect(groupPageChanges([g(3), g(2), g(1)], [g(4), g(3), g(2)], 3, same)).toEqual([{ type: 'group', group: g(4), rank: 0 }]);
    // Taken out of a full page while an older group rises into it from below.
    expect(groupPageChanges([g(4), g(3), g(2)], [g(4), g(2), g(1)], 3, same)).toEqual([
      { type: 'groupRemoved', id: 'g3' },
      { type: 'group', group: g(1), rank: 2 },
    ]);
  });

  it('gives steps that turn any page into the next one, whatever moved where', () => {
    let seed = 7;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 500; round++) {
      const limit = 1 + random(6);
      const groups = (size: number) => {
        const ids = new Set<number>();
        while (ids.size < size) ids.add(random(12));
        return [...ids].map((id) => g(random(20), 1 + random(3), `g${id}`)).sort((a, b) => (a.key === b.key ? (a.id < b.id ? 1 : -1) : a.key < b.key ? 1 : -1));
      };
      const before = groups(random(limit + 1));
      const after = groups(random(limit + 1));
      const shown = applied(before, groupPageChanges(before, after, limit, same));
      expect({ round, page: shown.slice(0, after.length) }).toEqual({ round, page: after });
      // Whatever stayed below the new page was pushed there, not taken out of the feed.
      for (const kept of shown.slice(after.length)) {
        expect(after.length).toBe(limit);
        expect(kept.key <= after[after.length - 1]!.key).toBe(true);
      }
    }
  });
});

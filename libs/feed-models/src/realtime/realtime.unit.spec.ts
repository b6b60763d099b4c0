import { sortKeyOf, type Activity } from '@feedmill/contracts';
import { firstPageChanges } from './first-page-changes.js';
import { StreamRing } from './stream-ring.js';

const at = (second: number, object = 'x'): Activity => ({ id: `a${second}`, feed: 'user:bob', actor: 'bob', verb: 'post', object, time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
const same = (a: Activity, b: Activity) => JSON.stringify(a) === JSON.stringify(b);
/** Newest first. */
const page = (...seconds: number[]) => seconds.map((second) => at(second));

describe('firstPageChanges', () => {
  it('adds new entries oldest first', () => {
    expect(firstPageChanges(page(3, 2), page(5, 4, 3, 2), 5, sortKeyOf, same)).toEqual([
      { type: 'added', activity: at(4) },
      { type: 'added', activity: at(5) },
    ]);
  });

  it('does not remove what newer entries pushed below a full page, but removes what was taken out', () => {
    expect(firstPageChanges(page(3, 2, 1), page(4, 3, 2), 3, sortKeyOf, same)).toEqual([{ type: 'added', activity: at(4) }]);
    expect(firstPageChanges(page(3, 2, 1), page(3, 1), 3, sortKeyOf, same)).toEqual([{ type: 'removed', id: 'a2' }]);
    // Taken out of a full page, with an older entry rising into it from below.
    expect(firstPageChanges(page(4, 3, 2), page(4, 2, 1), 3, sortKeyOf, same)).toEqual([
      { type: 'removed', id: 'a3' },
      { type: 'added', activity: at(1) },
    ]);
  });

  it('reports an entry whose JSON changed as updated', () => {
    const edited = at(2, 'edited');
    expect(firstPageChanges(page(3, 2), [at(3), edited], 5, sortKeyOf, same)).toEqual([{ type: 'updated', activity: edited }]);
    expect(firstPageChanges(page(3, 2), page(3, 2), 5, sortKeyOf, same)).toEqual([]);
  });
});

describe('StreamRing', () => {
  it('numbers events and gives those after a kept id', () => {
    const ring = new StreamRing<string>('e1', 3);
    expect(ring.lastId).toBe('e1-0');
    for (const name of ['a', 'b', 'c', 'd']) ring.append((id) => `${name}@${id}`);
    expect(ring.lastId).toBe('e1-4');
    expect(ring.after('e1-2')!.map((numbered) => numbered.event)).toEqual(['c@e1-3', 'd@e1-4']);
    expect(ring.after('e1-4')).toEqual([]);
    // After e1-1 every later event is still held; after e1-0, a (e1-1) is gone: too old.
    expect(ring.after('e1-1')?.map((numbered) => numbered.event)).toEqual(['b@e1-2', 'c@e1-3', 'd@e1-4']);
    expect(ring.after('e1-0')).toBeUndefined();
  });

  it('refuses ids of another ring, from the future, or malformed', () => {
    const ring = new StreamRing<string>('e1', 3);
    ring.append(() => 'a');
    expect(ring.after('e2-1')).toBeUndefined();
    expect(ring.after('e1-9')).toBeUndefined();
    expect(ring.after('e1-x')).toBeUndefined();
    expect(ring.after('nothing')).toBeUndefined();
  });
});

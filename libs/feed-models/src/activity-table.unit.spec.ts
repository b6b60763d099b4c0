import { justAbove, relevanceKeyOf, sortKeyOf, type Activity } from '@feedmill/contracts';
import { ActivityTable, probeOf, type TimelineOrder } from './activity-table.js';
import { seededRandom } from './testing.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
const activity = (id: string, ms: number, extra?: Activity['extra']): Activity => ({ id, feed: 'user:x', actor: 'x', verb: 'post', object: 'o', time: at(ms), ...(extra ? { extra } : {}) });

describe('ActivityTable', () => {
  it('stores one version once, whatever object carries it, and a changed version apart', () => {
    const table = new ActivityTable();
    const posted = activity('a1', 1, { tags: ['x', { deep: 1 }] });
    const handle = table.intern(posted);
    expect(table.intern(posted)).toBe(handle);
    expect(table.intern(structuredClone(posted))).toBe(handle);
    expect(table.itemOf(table.intern(structuredClone(posted)))).toBe(posted);
    const bumped = { ...posted, bumpedAt: at(50) };
    const bumpedHandle = table.intern(bumped);
    expect(bumpedHandle).not.toBe(handle);
    expect(table.intern({ ...posted, extra: { tags: ['x', { deep: 2 }] } })).not.toBe(handle);
    expect(table.itemOf(handle)).toBe(posted);
    expect(table.itemOf(bumpedHandle)).toBe(bumped);
  });

  it('keeps references apart from copies, one reference object per version', () => {
    const table = new ActivityTable();
    const posted = activity('a1', 1);
    const copy = table.intern(posted);
    const reference = table.internReference(posted);
    expect(reference).not.toBe(copy);
    expect(table.internReference(structuredClone(posted))).toBe(reference);
    expect(table.itemOf(reference)).toEqual({ id: 'a1', feed: 'user:x', time: posted.time });
    expect(table.internReference({ ...posted, bumpedAt: at(9) })).not.toBe(reference);
  });

  it('frees a version when its last hold goes, and reuses its handle', () => {
    const table = new ActivityTable();
    const first = table.intern(activity('a1', 1));
    const second = table.intern({ ...activity('a1', 1), bumpedAt: at(5) });
    table.hold(first);
    table.hold(first);
    table.hold(second);
    table.release(first);
    expect(table.size).toBe(2);
    table.release(first);
    expect(table.size).toBe(1);
    // The remaining version is still found by id, and the freed handle serves the next one.
    expect(table.firstVersionOf('a1')).toBe(second);
    const reused = table.intern(activity('b1', 2));
    expect(reused).toBe(first);
    table.release(second);
    expect(table.firstVersionOf('a1')).toBe(-1);
    table.hold(reused);
    table.release(reused);
    expect(table.size).toBe(0);
  });

  it('rings every live version of an id, and unlinks any one of them', () => {
    const table = new ActivityTable();
    const versions = [0, 1, 2].map((bump) => table.intern({ ...activity('a1', 1), bumpedAt: at(10 + bump) }));
    for (const handle of versions) table.hold(handle);
    // Round the ring from any version back to it.
    const ring = (from: number) => {
      const handles = [from];
      for (let handle = table.nextVersionOf(from); handle !== from; handle = table.nextVersionOf(handle)) handles.push(handle);
      return handles.sort();
    };
    const chain = () => ring(table.firstVersionOf('a1'));
    expect(chain()).toEqual([...versions].sort());
    expect(ring(versions[1]!)).toEqual([...versions].sort());
    table.release(versions[1]!);
    expect(chain()).toEqual([versions[0], versions[2]].sort());
    expect(ring(versions[2]!)).toEqual([versions[0], versions[2]].sort());
    table.release(table.firstVersionOf('a1'));
    expect(chain()).toHaveLength(1);
  });

  it.each<[TimelineOrder, typeof sortKeyOf]>([
    ['time', sortKeyOf],
    ['relevance', relevanceKeyOf],
  ])('compares by %s exactly as the key text does, equal milliseconds and prefix ids included', (order, keyOf) => {
    const random = seededRandom(order.length);
    const table = new ActivityTable();
    const ids = ['a', 'ab', 'abc', 'b', 'B', 'a-1', 'a_1', 'z9'];
    const handles = Array.from({ length: 200 }, (_, i) => {
      const bumped = random() < 0.4 ? { bumpedAt: at(Math.floor(random() * 6)) } : {};
      return table.intern({ ...activity(`${ids[i % ids.length]}${Math.floor(random() * 3)}`, Math.floor(random() * 4)), ...bumped, object: `o${i}` });
    });
    const sign = (n: number) => Math.sign(n);
    const text = (a: string, b: string) => (a < b ? -1 : a === b ? 0 : 1);
    const disagreements: string[] = [];
    for (const a of handles) {
      for (const b of handles.slice(0, 40)) {
        const keyA = keyOf(table.itemOf(a));
        const keyB = keyOf(table.itemOf(b));
        if (sign(table.compare(a, b, order)) !== text(keyA, keyB)) disagreements.push(`compare ${keyA} ${keyB}`);
        if (sign(table.compareWithKey(a, probeOf(keyB), order)) !== text(keyA, keyB)) disagreements.push(`compareWithKey ${keyA} ${keyB}`);
        if (sign(table.compareWithKey(a, probeOf(justAbove(keyB)), order)) !== text(keyA, justAbove(keyB))) disagreements.push(`justAbove ${keyA} ${keyB}`);
      }
    }
    expect(disagreements).toEqual([]);
  });
});

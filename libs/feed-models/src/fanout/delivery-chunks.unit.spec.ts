import type { Activity, FeedId, TimelineDelivery } from '@feedmill/contracts';
import { chunkDeliveries, DELIVERY_BUDGET_BYTES, MAX_READERS_PER_DELIVERY } from './delivery-chunks.js';

const activity: Activity = { id: 'a', feed: 'user:x', actor: 'x', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' };
const readers = (n: number) => Array.from({ length: n }, (_, i) => `timeline:r${i}` as FeedId);

describe('chunkDeliveries', () => {
  it.each(['insert', 'bump', 'update'] as const)('splits a delivery of kind %s to many readers and keeps every reader once, in order', (kind) => {
    const chunks = chunkDeliveries([{ kind, readers: readers(MAX_READERS_PER_DELIVERY * 2 + 5), activity }]);
    const all = chunks.flat() as Array<Extract<TimelineDelivery, { kind: typeof kind }>>;
    expect(Math.max(...all.map((d) => d.readers.length))).toBeLessThanOrEqual(MAX_READERS_PER_DELIVERY);
    expect(all.flatMap((d) => d.readers)).toEqual(readers(MAX_READERS_PER_DELIVERY * 2 + 5));
    expect(new Set(all.map((d) => d.kind))).toEqual(new Set([kind]));
  });

  it('splits every post to the same frozen list of readers into the same slices, and an unfrozen list afresh', () => {
    const slicesOf = (list: readonly FeedId[]) => chunkDeliveries([{ kind: 'insert', readers: list, activity }]).flat().map((d) => (d as { readers: readonly FeedId[] }).readers);
    const followers = Object.freeze(readers(MAX_READERS_PER_DELIVERY * 2 + 5));
    const first = slicesOf(followers);
    const again = slicesOf(followers);
    expect(again).toHaveLength(3);
    again.forEach((slice, i) => expect(slice).toBe(first[i]));
    expect(again.flat()).toEqual(followers);
    // A list built for one batch (a feed followed within it, say) may not come again: nothing is kept for it.
    const built = readers(MAX_READERS_PER_DELIVERY * 2 + 5);
    expect(slicesOf(built)[0]).not.toBe(slicesOf(built)[0]);
  });

  it('keeps requests under the byte budget and deliveries in their order', () => {
    const big = { ...activity, extra: { text: 'x'.repeat(60_000) } };
    const deliveries: TimelineDelivery[] = Array.from({ length: 12 }, (_, i) => ({ kind: 'insert', readers: readers(3), activity: { ...big, id: `a${i}` } }));
    const chunks = chunkDeliveries(deliveries);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(JSON.stringify(chunk).length).toBeLessThan(DELIVERY_BUDGET_BYTES * 1.2);
    expect(chunks.flat().map((d) => (d.kind === 'insert' ? d.activity.id : ''))).toEqual(deliveries.map((d) => (d.kind === 'insert' ? d.activity.id : '')));
  });

  it('returns no chunk for no deliveries', () => {
    expect(chunkDeliveries([])).toEqual([]);
  });
});

describe('splitFollow', () => {
  const at = (i: number): Activity => ({ ...activity, id: `b${i}`, feed: 'user:b', time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), extra: { text: 'x'.repeat(60_000) } });
  // Newest first, as planning gives them: a cap of 12 and one more to tell that older ones exist.
  const recent = Array.from({ length: 13 }, (_, i) => at(12 - i));
  const follow: TimelineDelivery = { kind: 'follow', reader: 'timeline:r', target: 'user:b', recent, exhausted: false };

  it('splits a large backfill into pieces under the budget, oldest first, the oldest carrying exhausted', () => {
    const chunks = chunkDeliveries([follow]);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) expect(JSON.stringify(chunk).length).toBeLessThan(DELIVERY_BUDGET_BYTES * 1.2);
    const pieces = chunks.flat() as Array<Extract<TimelineDelivery, { kind: 'follow' }>>;
    expect(pieces.map((p) => p.exhausted)).toEqual([false, ...pieces.slice(1).map(() => true)]);
    expect(pieces.flatMap((p) => [...p.recent].reverse().map((a) => a.id))).toEqual([...recent].reverse().map((a) => a.id));
  });

  it('gives a bounded follow’s since to the oldest piece alone, which a timeline applies first', () => {
    const bounded = { ...follow, since: `${recent[12]!.time}|b0` };
    const pieces = chunkDeliveries([bounded]).flat() as Array<Extract<TimelineDelivery, { kind: 'follow' }>>;
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.map((p) => p.since)).toEqual([bounded.since, ...pieces.slice(1).map(() => undefined)]);
    expect(pieces.slice(1).every((p) => !('since' in p))).toBe(true);
  });
});

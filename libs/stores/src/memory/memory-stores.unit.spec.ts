import type { Activity, TimelineDelivery } from '@feedmill/contracts';
import { chunkDeliveries } from '@feedmill/feed-models';
import { describeContentStoreContract } from '../contract/content-store.contract.js';
import { describeGraphStoreContract } from '../contract/graph-store.contract.js';
import { describeTimelineStoreContract } from '../contract/timeline-store.contract.js';
import { MemoryContentStore } from './memory-content-store.js';
import { MemoryGraphStore } from './memory-graph-store.js';
import { MemoryTimelineStore } from './memory-timeline-store.js';

describeContentStoreContract('memory', async () => new MemoryContentStore());
describeGraphStoreContract('memory', async () => new MemoryGraphStore());
describeTimelineStoreContract('memory', async (policyOf, now) => new MemoryTimelineStore(policyOf, now));

describe('memory timeline store, chunked deliveries', () => {
  const activity = { id: 'a', feed: 'user:b', actor: 'b', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' } as const;
  const at = (i: number): Activity => ({ ...activity, id: `b${i}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), extra: { text: 'x'.repeat(60_000) } });
  // Newest first, as planning gives them: a cap of 12 and one more to tell that older ones exist.
  const recent = Array.from({ length: 13 }, (_, i) => at(12 - i));
  const follow: TimelineDelivery = { kind: 'follow', reader: 'timeline:r', target: 'user:b', recent, exhausted: false };

  // A follow with a copyLimit is bounded: its backfill starts at `since`.
  const bounded: TimelineDelivery = { ...follow, recent: recent.slice(0, 6), exhausted: true, since: `${recent[5]!.time}|${recent[5]!.id}` };

  it.each([
    ['a follow', follow, 13],
    ['a bounded follow', bounded, 6],
  ] as const)('stores what the whole delivery stores when the pieces of %s are applied in order', async (_name, follow, stored) => {
    const policy = { model: 'ring' as const, cap: 12, inactivityMs: 0 };
    const whole = new MemoryTimelineStore(() => policy);
    const pieced = new MemoryTimelineStore(() => policy);
    await whole.deliver({ after: 0, position: 1, deliveries: [follow] });
    const pieces = chunkDeliveries([follow]);
    expect(pieces.length).toBeGreaterThan(1);
    await pieced.deliver({ after: 0, position: 1, deliveries: pieces.flat() });
    const page = (store: MemoryTimelineStore) => store.readPage('timeline:r', undefined, 20, async () => [at(0)]);
    expect((await page(pieced)).items.map((a) => a.id)).toEqual((await page(whole)).items.map((a) => a.id));
    expect((await page(pieced)).items).toHaveLength(stored);
  });
});

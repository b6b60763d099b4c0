import { sortKeyOf, timelineModels, type FeedId, type SortKey, type TimelineDelivery, type TimelineModel } from '@feedmill/contracts';
import type { PullPath, PullScope } from '@feedmill/feed-models';
import { activityAt } from '@feedmill/feed-models/testing';
import { MemoryTimelineStore, type TimelinePolicy } from '@feedmill/stores';
import { readFullPage } from './hidden-activities.js';

const reader: FeedId = 'timeline:r';
/** Twelve posts of one feed, newest first, past a cap of 5: pages cross the stored part into the pulled one. */
const posts = Array.from({ length: 12 }, (_, i) => activityAt(`a${i}`, 'user:a', 10 + i)).reverse();

const pull: PullPath = async (before: SortKey | undefined, limit: number, scope?: PullScope) => {
  if (scope && 'only' in scope && !scope.only.includes('user:a')) return [];
  if (scope && 'except' in scope && scope.except.includes('user:a')) return [];
  return posts.filter((post) => before === undefined || sortKeyOf(post) < before).slice(0, limit);
};

function policyOf(model: TimelineModel): TimelinePolicy {
  return { model, cap: 5, inactivityMs: 60_000, bucketSize: 2, bucketMs: 3_000, hybrid: { readsPerPost: 1, windowMs: 60_000, hysteresis: 2 } };
}

async function storeWith(model: TimelineModel): Promise<{ store: MemoryTimelineStore; deliver: (...deliveries: TimelineDelivery[]) => Promise<void> }> {
  const store = new MemoryTimelineStore(() => policyOf(model));
  const deliver = async (...deliveries: TimelineDelivery[]) => {
    const after = await store.position();
    await store.deliver({ after, position: after + 1, deliveries });
  };
  await deliver({ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true });
  for (const activity of [...posts].reverse()) await deliver({ kind: 'insert', readers: [reader], activity });
  return { store, deliver };
}

/** Every page of the reader's timeline, each of `size`, as the timeline service reads them. */
async function pagesOf(store: MemoryTimelineStore, size: number): Promise<string[][]> {
  const pages: string[][] = [];
  let before: SortKey | undefined;
  do {
    const hidden = await store.hiddenOf(reader);
    const page = await readFullPage(
      (from, limit) => store.readPage(reader, from, limit, pull),
      async (items) => (hidden ? items.filter((item) => !hidden.has(item.id)) : items),
      before,
      size,
    );
    pages.push(page.items.map((item) => item.id));
    before = page.next ?? undefined;
  } while (before !== undefined);
  return pages;
}

const hide = (id: string, second: number): TimelineDelivery => ({ kind: 'hide', reader, id, time: activityAt(id, 'user:a', second).time });

describe.each(timelineModels.map((model) => [model]))('hiding in a %s timeline', (model) => {
  it('leaves hidden ids out of every page, stored or pulled, keeps pages full, shows them again, and keeps them through a snapshot', async () => {
    const { store, deliver } = await storeWith(model);
    const all = posts.map((post) => post.id);
    expect((await pagesOf(store, 3)).flat()).toEqual(all);
    expect(await store.hiddenOf(reader)).toBeUndefined();

    // a11 is the newest (stored), a8 near the cap, a2 far below it (pulled); a8 twice is one hiding.
    await deliver(hide('a11', 100), hide('a8', 101));
    await deliver(hide('a8', 102), hide('a2', 103));
    const visible = all.filter((id) => !['a11', 'a8', 'a2'].includes(id));
    const pages = await pagesOf(store, 3);
    expect(pages.flat()).toEqual(visible);
    expect(pages.slice(0, -1).every((page) => page.length === 3)).toBe(true);
    expect((await store.hiddenOf(reader))!.page(undefined, 10).items.map((entry) => entry.id)).toEqual(['a2', 'a8', 'a11']);

    const restored = new MemoryTimelineStore(() => policyOf(model));
    restored.restoreSnapshot(store.takeSnapshot());
    expect((await pagesOf(restored, 3)).flat()).toEqual(visible);
    expect((await restored.hiddenOf(reader))!.page(undefined, 10)).toEqual((await store.hiddenOf(reader))!.page(undefined, 10));

    await deliver({ kind: 'show', reader, id: 'a8' });
    expect((await pagesOf(store, 4)).flat()).toEqual(all.filter((id) => !['a11', 'a2'].includes(id)));
    await deliver({ kind: 'show', reader, id: 'a11' }, { kind: 'show', reader, id: 'a2' });
    // Showing all again leaves no set: reads cost nothing more.
    expect(await store.hiddenOf(reader)).toBeUndefined();
    expect((await pagesOf(store, 5)).flat()).toEqual(all);
  });
});

describe('the hidden list', () => {
  it('pages newest hiding first with a position cursor that holds when ids are shown in between', async () => {
    const { store, deliver } = await storeWith('ring');
    for (const [index, id] of ['a1', 'a2', 'a3', 'a4', 'a5'].entries()) await deliver(hide(id, 100 + index));
    const hidden = (await store.hiddenOf(reader))!;
    const first = hidden.page(undefined, 2);
    expect(first.items.map((entry) => entry.id)).toEqual(['a5', 'a4']);
    await deliver({ kind: 'show', reader, id: 'a3' });
    const second = hidden.page(first.next!, 2);
    expect(second.items.map((entry) => entry.id)).toEqual(['a2', 'a1']);
    expect(second.next).toBeNull();
    expect(hidden.page(undefined, 5).items[0]).toEqual({ id: 'a5', time: activityAt('a5', 'user:a', 104).time });
  });
});

/**
 * Each batch of deliveries comes with its fence (the log positions it covers): a repeated
 * delivery of a batch already applied is refused, and a rebuild replays the same batches
 * into a fresh store, which must come out the same.
 */
describe('hiding replayed', () => {
  it('refuses a repeated delivery at the same fence, and a rebuild from the log gives the same pages and hidden list', async () => {
    const live = await storeWith('ring');
    const base = await live.store.position();
    const batches = [
      { after: base, position: base + 10, deliveries: [hide('a9', 100), hide('a3', 101)] },
      { after: base + 10, position: base + 20, deliveries: [{ kind: 'show', reader, id: 'a9' } as TimelineDelivery, hide('a5', 102)] },
    ];
    for (const batch of batches) expect(await live.store.deliver(batch)).toEqual({ applied: true, position: batch.position });
    const pages = await pagesOf(live.store, 4);
    const listed = (await live.store.hiddenOf(reader))!.page(undefined, 10);
    expect(listed.items.map((entry) => entry.id)).toEqual(['a5', 'a3']);

    // The first batch delivered again (a redelivery after a lost reply): refused, nothing changes; a9 stays shown.
    expect(await live.store.deliver(batches[0]!)).toEqual({ applied: false, position: base + 20 });
    expect(await pagesOf(live.store, 4)).toEqual(pages);
    expect((await live.store.hiddenOf(reader))!.page(undefined, 10)).toEqual(listed);

    // A rebuild: the same log replayed into a fresh store.
    const rebuilt = await storeWith('ring');
    for (const batch of batches) expect((await rebuilt.store.deliver(batch)).applied).toBe(true);
    expect(await pagesOf(rebuilt.store, 4)).toEqual(pages);
    expect((await rebuilt.store.hiddenOf(reader))!.page(undefined, 10)).toEqual(listed);
  });
});

describe('a full page read past what the reader does not see', () => {
  /** 400 entries, newest first, keyed by their number; the reader sees every 80th. */
  const keys = Array.from({ length: 400 }, (_, i) => `k${String(399 - i).padStart(3, '0')}`);
  const seen = (key: string) => Number(key.slice(1)) % 80 === 0;

  it('reads at most sixteen times a page, answering a short page whose cursor goes on, and scrolls to every entry seen once', async () => {
    let reads = 0;
    const read = async (before: string | undefined, limit: number) => {
      reads++;
      const from = before === undefined ? 0 : keys.indexOf(before) + 1;
      const items = keys.slice(from, from + limit);
      return { items, next: from + limit < keys.length ? items[items.length - 1]! : null };
    };
    const keep = async (items: string[]) => items.filter(seen);
    const scrolled: string[] = [];
    let cursor: string | undefined;
    let short = 0;
    for (let pages = 0; pages < 100; pages++) {
      reads = 0;
      const page = await readFullPage(read, keep, cursor, 3);
      expect(reads).toBeLessThanOrEqual(16);
      scrolled.push(...page.items);
      if (page.next === null) break;
      if (page.items.length < 3) short++;
      cursor = page.next;
    }
    expect(scrolled).toEqual(keys.filter(seen));
    expect(short).toBeGreaterThan(0);
  });
});

import type { Activity, FeedId, TimelineDelivery } from '@feedmill/contracts';
import { activityAt } from '../contract/recorded.js';
import type { TimelinePolicy } from '../ports.js';
import { MemoryTimelineStore } from './memory-timeline-store.js';

const bumpedAt = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const none = async () => [];

/** A store whose readers' groups are named by their prefix: `linked:*` link, `ranked:*` order by relevance, `cached:*` use the cache model. */
function storeOf(now: () => number = Date.now) {
  const policyOf = (reader: FeedId): TimelinePolicy => {
    const base: TimelinePolicy = { model: 'ring', cap: 5, inactivityMs: 60_000 };
    if (reader.startsWith('linked:')) return { ...base, embed: false };
    if (reader.startsWith('ranked:')) return { ...base, relevancy: true };
    if (reader.startsWith('cached:')) return { ...base, model: 'cache' };
    return base;
  };
  const store = new MemoryTimelineStore(policyOf, now);
  let position = 0;
  const deliver = async (...deliveries: TimelineDelivery[]) => {
    await store.deliver({ after: position, position: ++position, deliveries });
  };
  const page = async (reader: FeedId) => (await store.readPage(reader, undefined, 10, none)).items;
  const follow = (reader: FeedId, target: FeedId = 'user:a', recent: Activity[] = []): TimelineDelivery => ({ kind: 'follow', reader, target, recent, exhausted: true });
  return { store, deliver, page, follow };
}

describe('MemoryTimelineStore, one activity table for all readers', () => {
  it('stores a delivered activity once for its readers, and one reference for those that link', async () => {
    const { store, deliver, page, follow } = storeOf();
    const readers: FeedId[] = ['timeline:r1', 'timeline:r2', 'linked:r3', 'linked:r4'];
    await deliver(...readers.map((reader) => follow(reader)));
    const posted = activityAt('a1', 'user:a', 1);
    await deliver({ kind: 'insert', readers, activity: posted });
    // Another copy of the same version, as a second decode of the same event would give.
    await deliver({ kind: 'insert', readers, activity: structuredClone(posted) });
    const [r1, r2, r3, r4] = await Promise.all(readers.map((reader) => page(reader)));
    expect(r1![0]).toBe(posted);
    expect(r2![0]).toBe(posted);
    expect(r3![0]).toBe(r4![0]);
    expect(r3![0]).toEqual({ id: 'a1', feed: 'user:a', time: posted.time });
    expect(store.storedVersions()).toBe(2);
    expect(await store.counters()).toMatchObject({ entries: 4, delivered: 4 });
  });

  it('frees what no timeline holds any more: removed, unfollowed, trimmed, or never taken', async () => {
    const { store, deliver, follow } = storeOf();
    await deliver(follow('timeline:r1'), follow('timeline:r1', 'user:b'), follow('ranked:r2'));
    await deliver({ kind: 'insert', readers: ['timeline:nobody'], activity: activityAt('x', 'user:a', 1) });
    expect(store.storedVersions()).toBe(0);
    const posts = Array.from({ length: 8 }, (_, i) => activityAt(`a${i}`, 'user:a', 10 + i));
    await deliver(...posts.map((activity): TimelineDelivery => ({ kind: 'insert', readers: ['timeline:r1', 'ranked:r2'], activity })));
    // A cap of 5: five entries each, and the newest dropped one kept as the floor.
    expect(store.storedVersions()).toBe(6);
    await deliver({ kind: 'insert', readers: ['timeline:r1'], activity: activityAt('b1', 'user:b', 30) });
    await deliver({ kind: 'remove', readers: ['timeline:r1', 'ranked:r2'], id: 'a7' });
    await deliver({ kind: 'unfollow', reader: 'ranked:r2', target: 'user:a' });
    await deliver({ kind: 'unfollow', reader: 'timeline:r1', target: 'user:a' });
    // What is left: r1's post of user:b, and the floors: a3 for r1 (raised by that post), a2 for r2.
    expect(store.storedVersions()).toBe(3);
    await deliver({ kind: 'remove', readers: ['timeline:r1'], id: 'b1' });
    expect(store.storedVersions()).toBe(2);
  });

  it('frees an idle cache timeline’s activities when the sweep drops it, and a cache a follow discards', async () => {
    let clock = 1_000_000;
    const { store, deliver, page, follow } = storeOf(() => clock);
    await deliver(follow('cached:r1'));
    const history = [activityAt('a2', 'user:a', 2), activityAt('a1', 'user:a', 1)];
    await store.readPage('cached:r1', undefined, 10, async () => history);
    expect(store.storedVersions()).toBe(2);
    await deliver(follow('cached:r1', 'user:b'));
    expect(store.storedVersions()).toBe(0);
    expect((await store.readPage('cached:r1', undefined, 10, async () => history)).items).toHaveLength(2);
    clock += 60_000 + 10_001;
    await deliver();
    expect(await page('timeline:none')).toEqual([]);
    expect(store.storedVersions()).toBe(0);
  });

  it('takes no holds for a cache build that a follow discarded while it pulled', async () => {
    const { store, deliver, follow } = storeOf();
    await deliver(follow('cached:r1'));
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const reading = store.readPage('cached:r1', undefined, 10, async () => {
      await answered;
      return [activityAt('a1', 'user:a', 1)];
    });
    await deliver({ kind: 'insert', readers: ['cached:r1'], activity: activityAt('a2', 'user:a', 2) }, follow('cached:r1', 'user:b'));
    answer();
    expect((await reading).items.map((a) => a.id)).toEqual(['a1']);
    expect(store.storedVersions()).toBe(0);
    expect(await store.counters()).toMatchObject({ timelines: 0 });
  });

  it('erases a feed from every timeline, entries addressed to a reader and a cache being built included, and frees what they held', async () => {
    const { store, deliver, page, follow } = storeOf();
    await deliver(follow('timeline:r1'), follow('timeline:r1', 'user:b'), follow('ranked:r2'), follow('ranked:r2', 'user:b'), follow('cached:r3'));
    const kept = activityAt('b1', 'user:b', 2);
    await deliver(...[activityAt('a1', 'user:a', 1), kept].map((activity): TimelineDelivery => ({ kind: 'insert', readers: ['timeline:r1', 'ranked:r2'], activity })));
    await deliver({ kind: 'insert', readers: ['timeline:r4'], activity: { ...activityAt('a2', 'user:a', 3), to: ['timeline:r4'] } });
    // cached:r3 is being built: its pull, read before the erasure, is answered after it.
    let answer!: () => void;
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const reading = store.readPage('cached:r3', undefined, 10, async () => {
      await answered;
      return [activityAt('a0', 'user:a', 0)];
    });
    // timeline:r5 took more of user:a than its cap of 5: the newest one dropped is its floor.
    await deliver(follow('timeline:r5'));
    const typed = (id: string, second: number) => activityAt(id, 'user:a', second, { object: `ERASED-TEXT ${id}` });
    await deliver(...[10, 11, 12, 13, 14, 15, 16].map((second): TimelineDelivery => ({ kind: 'insert', readers: ['timeline:r5'], activity: typed(`f${second}`, second) })));
    await deliver({ kind: 'insert', readers: ['cached:r3'], activity: activityAt('a3', 'user:a', 4) }, { kind: 'erase', reader: 'user:a' });
    answer();
    await reading;
    expect({ r1: await page('timeline:r1'), r2: await page('ranked:r2'), r3: await page('cached:r3'), r4: await page('timeline:r4'), r5: await page('timeline:r5') }).toEqual({ r1: [kept], r2: [kept], r3: [], r4: [], r5: [] });
    // What is left of user:a: the floor's key, as a reference without its content, in memory and in a snapshot.
    expect(store.storedVersions()).toBe(2);
    expect(Buffer.from(store.takeSnapshot().payload).includes('ERASED-TEXT')).toBe(false);
  });

  it('shows each reader the version delivered to it, and frees the old one once none holds it', async () => {
    const { store, deliver, page, follow } = storeOf();
    await deliver(follow('timeline:r1'), follow('timeline:r2'), follow('ranked:r3'));
    const posted = activityAt('a1', 'user:a', 1);
    const older = activityAt('a0', 'user:a', 0);
    await deliver(...[older, posted].map((activity): TimelineDelivery => ({ kind: 'insert', readers: ['timeline:r1', 'timeline:r2', 'ranked:r3'], activity })));
    // A bump that reaches r1 and r3 first (a chunk of a large fan-out, say).
    const bumped = { ...older, bumpedAt: bumpedAt(9) };
    await deliver({ kind: 'bump', readers: ['timeline:r1', 'ranked:r3'], activity: bumped });
    expect((await page('timeline:r1')).map((a) => [a.id, a.bumpedAt])).toEqual([
      ['a1', undefined],
      ['a0', bumpedAt(9)],
    ]);
    expect((await page('timeline:r2')).map((a) => [a.id, a.bumpedAt])).toEqual([
      ['a1', undefined],
      ['a0', undefined],
    ]);
    // By relevance the bumped entry moved up.
    expect((await page('ranked:r3')).map((a) => a.id)).toEqual(['a0', 'a1']);
    expect(store.storedVersions()).toBe(3);
    await deliver({ kind: 'bump', readers: ['timeline:r2'], activity: structuredClone(bumped) });
    expect((await page('timeline:r2'))[1]).toBe((await page('timeline:r1'))[1]);
    expect(store.storedVersions()).toBe(2);
  });

  it('puts an updated version in the place of the one each reader holds, one copy for all, and frees the old one', async () => {
    const { store, deliver, page, follow } = storeOf();
    const readers: FeedId[] = ['timeline:r1', 'ranked:r2', 'linked:r3'];
    await deliver(...readers.map((reader) => follow(reader)));
    const posts = [activityAt('a0', 'user:a', 0), activityAt('a1', 'user:a', 1), activityAt('a2', 'user:a', 2)];
    await deliver(...posts.map((activity): TimelineDelivery => ({ kind: 'insert', readers, activity })));
    const reference = (await page('linked:r3'))[1];
    const edited = { ...posts[1]!, object: 'edited', updatedAt: bumpedAt(9) };
    // timeline:stranger follows nothing; timeline:r4 follows but never received a1.
    await deliver(follow('timeline:r4'), { kind: 'update', readers: [...readers, 'timeline:stranger', 'timeline:r4'], activity: edited });
    expect((await page('timeline:r1'))[1]).toBe(edited);
    expect((await page('ranked:r2')).map((a) => a.id)).toEqual(['a2', 'a1', 'a0']);
    expect((await page('ranked:r2'))[1]).toBe(edited);
    // A reference names the activity, not a version: it stays, and the reader gets the new one from content.
    expect((await page('linked:r3'))[1]).toBe(reference);
    expect(await page('timeline:r4')).toEqual([]);
    expect(await store.size('timeline:stranger')).toBe(0);
    // Three copies and three references, the old copy of a1 freed.
    expect(store.storedVersions()).toBe(6);
    expect(await store.counters()).toMatchObject({ entries: 9, delivered: 9 });
  });

  it('updates a held activity delivered again with new content, without counting it as delivered', async () => {
    const { store, deliver, page, follow } = storeOf();
    await deliver(follow('timeline:r1'), follow('ranked:r2'));
    const posts = [activityAt('a0', 'user:a', 0), activityAt('a1', 'user:a', 1)];
    await deliver(...posts.map((activity): TimelineDelivery => ({ kind: 'insert', readers: ['timeline:r1', 'ranked:r2'], activity })));
    const changed = { ...posts[0]!, bumpedAt: bumpedAt(5) };
    await deliver({ kind: 'insert', readers: ['timeline:r1', 'ranked:r2'], activity: changed });
    expect((await page('timeline:r1')).map((a) => [a.id, a.bumpedAt])).toEqual([
      ['a1', undefined],
      ['a0', bumpedAt(5)],
    ]);
    expect((await page('ranked:r2')).map((a) => a.id)).toEqual(['a0', 'a1']);
    expect(await store.counters()).toMatchObject({ entries: 4, delivered: 4 });
    expect(store.storedVersions()).toBe(2);
  });
});

describe('MemoryTimelineStore, a list of readers handed again', () => {
  // Fan-out hands every post of a feed the same frozen list of its followers until they change.
  it('reaches a timeline started since the list was last delivered to, and not one dropped since', async () => {
    const { store, deliver, page, follow } = storeOf();
    const readers: readonly FeedId[] = Object.freeze(['timeline:r1', 'timeline:r2', 'cached:r3']);
    await deliver(follow('timeline:r1'));
    await deliver({ kind: 'insert', readers, activity: activityAt('a1', 'user:a', 1) });
    expect(await page('timeline:r2')).toEqual([]);

    // r2's timeline starts (its first follow); r3's cache is built by a read.
    await deliver(follow('timeline:r2'));
    await store.readPage('cached:r3', undefined, 10, none);
    await deliver({ kind: 'insert', readers, activity: activityAt('a2', 'user:a', 2) });
    expect((await page('timeline:r2')).map((a) => a.id)).toEqual(['a2']);
    expect((await store.readPage('cached:r3', undefined, 10, none)).items.map((a) => a.id)).toEqual(['a2']);

    // r3's cache is discarded (a follow of another feed) and built again: the new one takes the next post, the old one none.
    await deliver(follow('cached:r3', 'user:b'));
    await store.readPage('cached:r3', undefined, 10, none);
    await deliver({ kind: 'insert', readers, activity: activityAt('a3', 'user:a', 3) });
    expect((await store.readPage('cached:r3', undefined, 10, none)).items.map((a) => a.id)).toEqual(['a3']);
    expect((await page('timeline:r1')).map((a) => a.id)).toEqual(['a3', 'a2', 'a1']);
    expect(await store.counters()).toMatchObject({ entries: 6, delivered: 7 });
  });

  it('reaches a reader an addressed activity started a timeline for, when the same list comes again', async () => {
    const { deliver, page, follow } = storeOf();
    const readers: readonly FeedId[] = Object.freeze(['timeline:r1', 'timeline:r2']);
    await deliver(follow('timeline:r1'));
    await deliver({ kind: 'insert', readers, activity: { ...activityAt('a1', 'user:a', 1), to: ['timeline:r2'] } });
    await deliver({ kind: 'insert', readers, activity: activityAt('a2', 'user:a', 2) });
    expect((await page('timeline:r2')).map((a) => a.id)).toEqual(['a2', 'a1']);
  });

  it('looks up again a list that is not frozen: the same array changed since reaches its readers of now', async () => {
    const { deliver, page, follow } = storeOf();
    await deliver(follow('timeline:r1'));
    await deliver(follow('timeline:r2'));
    const readers: FeedId[] = ['timeline:r1'];
    await deliver({ kind: 'insert', readers, activity: activityAt('a1', 'user:a', 1) });
    readers[0] = 'timeline:r2';
    await deliver({ kind: 'insert', readers, activity: activityAt('a2', 'user:a', 2) });
    expect((await page('timeline:r1')).map((a) => a.id)).toEqual(['a1']);
    expect((await page('timeline:r2')).map((a) => a.id)).toEqual(['a2']);
  });
});

describe('MemoryTimelineStore, notification marks', () => {
  it('keeps each reader’s seen and read marks through a snapshot, and a restored store goes on raising them', async () => {
    const { store, deliver } = storeOf();
    const key = (second: number) => `${bumpedAt(second)}|id`;
    await deliver({ kind: 'mark', reader: 'timeline:r1', mark: 'seen', all: key(10), groups: [{ id: 'g-late', upTo: key(20) }] });
    await deliver({ kind: 'mark', reader: 'timeline:r1', mark: 'read', groups: [{ id: 'g-read', upTo: key(15) }] });
    await deliver({ kind: 'mark', reader: 'timeline:r2', mark: 'read', all: key(5) });
    // Marks by log position, as markings record them now.
    await deliver({ kind: 'mark', reader: 'timeline:r3', mark: 'read', allAt: 40, groups: [{ id: 'g-pos', at: 45 }] });
    const restored = storeOf().store;
    restored.restoreSnapshot(store.takeSnapshot());

    for (const reader of ['timeline:r1', 'timeline:r2', 'timeline:r3'] as const) {
      const [before, after] = [await store.notificationMarks(reader), await restored.notificationMarks(reader)];
      expect(after).toBeDefined();
      expect({ reader, seen: after!.seen, read: after!.read }).toEqual({ reader, seen: before!.seen, read: before!.read });
    }
    const r1 = (await restored.notificationMarks('timeline:r1'))!;
    expect([r1.isSeen({ id: 'g-other', key: key(9) }), r1.isSeen({ id: 'g-other', key: key(11) }), r1.isSeen({ id: 'g-late', key: key(20) })]).toEqual([true, false, true]);
    expect([r1.isRead({ id: 'g-read', key: key(15) }), r1.isRead({ id: 'g-read', key: key(16) }), r1.isRead({ id: 'g-late', key: key(1) })]).toEqual([true, false, false]);
    const r3 = (await restored.notificationMarks('timeline:r3'))!;
    expect([r3.isRead({ id: 'g', key: key(1), position: 40 }), r3.isRead({ id: 'g', key: key(1), position: 41 }), r3.isSeen({ id: 'g-pos', key: key(1), position: 45 })]).toEqual([true, false, true]);
    expect(await restored.notificationMarks('timeline:nobody')).toBeUndefined();

    await restored.deliver({ after: await restored.position(), position: (await restored.position()) + 1, deliveries: [{ kind: 'mark', reader: 'timeline:r2', mark: 'seen', all: key(30) }] });
    const r2 = (await restored.notificationMarks('timeline:r2'))!;
    expect([r2.isSeen({ id: 'g', key: key(30) }), r2.isRead({ id: 'g', key: key(30) }), r2.isRead({ id: 'g', key: key(5) })]).toEqual([true, false, true]);
  });
});

describe('MemoryTimelineStore, its running count of entries', () => {
  /** What `counters()` reports against a walk over every reader's timeline, as it was counted before. */
  async function countedAndWalked(store: MemoryTimelineStore, readers: readonly FeedId[]) {
    const sizes = await Promise.all(readers.map((reader) => store.size(reader)));
    return { counted: (await store.counters()).entries, walked: sizes.reduce((sum, size) => sum + size, 0) };
  }

  it('equals the walk after inserts past the cap, bumps, removals, unfollows, follows that raise the floor, an erasure, a swept cache and a snapshot', async () => {
    let clock = 1_000_000;
    const { store, deliver, follow } = storeOf(() => clock);
    const readers: FeedId[] = ['timeline:r1', 'timeline:r2', 'ranked:r3', 'linked:r4', 'cached:r5'];
    const expectCounted = async (entries: number) => {
      const { counted, walked } = await countedAndWalked(store, readers);
      expect({ counted, walked }).toEqual({ counted: entries, walked: entries });
    };
    await deliver(...readers.map((reader) => follow(reader)), ...readers.map((reader) => follow(reader, 'user:b')));
    // Seven posts of user:a each: trimmed to the cap of 5 (the cache model's reader holds none until it reads).
    await deliver(...Array.from({ length: 7 }, (_, i): TimelineDelivery => ({ kind: 'insert', readers, activity: activityAt(`a${i}`, 'user:a', 10 + i) })));
    await expectCounted(4 * 5);
    await store.readPage('cached:r5', undefined, 10, async () => [activityAt('c1', 'user:a', 3), activityAt('c0', 'user:a', 2)]);
    await expectCounted(4 * 5 + 2);
    await deliver({ kind: 'bump', readers, activity: { ...activityAt('a3', 'user:a', 13), bumpedAt: bumpedAt(59) } });
    await deliver({ kind: 'remove', readers, id: 'a6' });
    await deliver({ kind: 'unfollow', reader: 'timeline:r1', target: 'user:a' });
    // A follow whose feed has older activities than these raises the floor, cutting what is below it.
    await deliver(follow('timeline:r2', 'user:c', [activityAt('c9', 'user:c', 40), activityAt('c8', 'user:c', 30)]), { kind: 'follow', reader: 'ranked:r3', target: 'user:c', recent: [activityAt('c9', 'user:c', 40)], exhausted: false });
    await deliver({ kind: 'insert', readers: ['timeline:r2', 'linked:r4'], activity: activityAt('b1', 'user:b', 50) });
    const before = await countedAndWalked(store, readers);
    expect(before.counted).toBe(before.walked);
    await deliver({ kind: 'erase', reader: 'user:b' });
    const erased = await countedAndWalked(store, readers);
    expect(erased).toEqual({ counted: erased.walked, walked: before.walked - 2 });
    // The idle cache is swept on the next delivery past its inactivity.
    clock += 60_000 + 10_001;
    await deliver();
    expect(await store.size('cached:r5')).toBe(0);
    const swept = await countedAndWalked(store, readers);
    expect(swept.counted).toBe(swept.walked);

    const restored = storeOf().store;
    restored.restoreSnapshot(store.takeSnapshot());
    expect(await countedAndWalked(restored, readers)).toEqual(swept);
  });

  it('equals the walk after a run of inserts large enough to be applied reader by reader', async () => {
    const { store, deliver, follow } = storeOf();
    const readers = Array.from({ length: 100 }, (_, i): FeedId => `timeline:r${i}`);
    await deliver(...readers.map((reader) => follow(reader)));
    // 100 posts to 100 readers: 10,000 entries in one request, past the 8,192 that switch to reader by reader.
    await deliver(...Array.from({ length: 100 }, (_, i): TimelineDelivery => ({ kind: 'insert', readers, activity: activityAt(`a${i}`, 'user:a', i) })));
    expect(await countedAndWalked(store, readers)).toEqual({ counted: 100 * 5, walked: 100 * 5 });
  });
});

import { sortKeyOf, type Activity, type FeedId, type TimelineDelivery } from '@feedmill/contracts';
import type { PullScope } from '@feedmill/feed-models';
import { activityAt } from '../contract/recorded.js';
import type { TimelinePolicy } from '../ports.js';
import { MemoryTimelineStore } from './memory-timeline-store.js';

const reader: FeedId = 'timeline:r';
const minute = 60_000;

/**
 * A hybrid store on a clock the test moves, the activities of each feed as content would
 * hold them, and a pull path over them that records what it was asked.
 */
function hybridStore(policy: Partial<TimelinePolicy> = {}) {
  let clock = Date.UTC(2026, 0, 1);
  const store = new MemoryTimelineStore(() => ({ model: 'hybrid', cap: 50, inactivityMs: 0, hybrid: { readsPerPost: 1, windowMs: 60 * minute, hysteresis: 2 }, ...policy }), () => clock);
  const posted: Activity[] = [];
  const following = new Set<FeedId>();
  const pulls: Array<PullScope | undefined> = [];
  let position = 0;
  const deliver = (...deliveries: TimelineDelivery[]) => store.deliver({ after: position, position: ++position, deliveries });
  const pull = async (before: string | undefined, limit: number, scope?: PullScope) => {
    pulls.push(scope);
    const inScope = (feed: FeedId) => following.has(feed) && (!scope || ('only' in scope ? scope.only.includes(feed) : !scope.except.includes(feed)));
    return posted.filter((a) => inScope(a.feed) && (before === undefined || sortKeyOf(a) < before)).sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1)).slice(0, limit);
  };
  let second = 0;
  return {
    store,
    pulls,
    /** Moves the clock; posts carry the clock's time. */
    wait: (ms: number) => (clock += ms),
    /** A follow, its backfill in `pieces` deliveries (oldest first, as fan-out splits a large one), `between` run after each but the last. */
    follow: async (target: FeedId, pieces = 1, between: () => Promise<void> = async () => undefined) => {
      following.add(target);
      const recent = posted.filter((a) => a.feed === target).reverse();
      const size = Math.max(1, Math.ceil(recent.length / pieces));
      let end = recent.length;
      do {
        await deliver({ kind: 'follow', reader, target, recent: recent.slice(Math.max(0, end - size), end), exhausted: true });
        end -= size;
        if (end > 0) await between();
      } while (end > 0);
    },
    post: async (feed: FeedId, readers: FeedId[] = [reader]) => {
      const activity = activityAt(`p${++second}`, feed, 0, { time: new Date(clock + second).toISOString() });
      posted.push(activity);
      await deliver({ kind: 'insert', readers, activity });
      return activity;
    },
    /** Edits a posted activity as content would, and delivers the new version to `readers`. */
    update: async (activity: Activity, object: string, readers: FeedId[] = [reader]) => {
      const updated = { ...activity, object, updatedAt: new Date(clock).toISOString() };
      posted[posted.findIndex((a) => a.id === activity.id)] = updated;
      await deliver({ kind: 'update', readers, activity: updated });
      return updated;
    },
    read: async (limit = 10, before?: string) => store.readPage(reader, before, limit, pull),
    scroll: async (pageSize: number) => {
      const seen: string[] = [];
      let before: string | undefined;
      do {
        const page = await store.readPage(reader, before, pageSize, pull);
        seen.push(...page.items.map((a) => a.id));
        before = page.next ?? undefined;
      } while (before !== undefined);
      return seen;
    },
    expected: () => posted.filter((a) => following.has(a.feed)).sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1)).map((a) => a.id),
    deliver,
  };
}

describe('MemoryTimelineStore, hybrid timelines', () => {
  it('brings back the whole history at a follow after an unfollow that kept a pushed edge, what was posted while unfollowed included', async () => {
    const t = hybridStore();
    await t.follow('user:a');
    // An idle reader's edge turns to pull at the first post; reads then switch it to push, with a bound.
    const kept = [await t.post('user:a')];
    for (let i = 0; i < 6; i++) await t.read();
    kept.push(await t.post('user:a'), await t.post('user:a'));
    for (let i = 0; i < 6; i++) await t.read();
    expect(await t.scroll(2)).toEqual([...kept].reverse().map((a) => a.id));
    expect((await t.store.counters()).entriesWritten).toBeGreaterThan(0);
    await t.deliver({ kind: 'unfollow', reader, target: 'user:a', keepHistory: true });
    // Posted while unfollowed: fan-out delivers it to no one here.
    const during = await t.post('user:a', []);
    await t.follow('user:a');
    const again = await t.post('user:a');
    expect(await t.scroll(3)).toEqual([again.id, during.id, ...[...kept].reverse().map((a) => a.id)]);
  });

  it('turns an idle reader’s edge to pull at the producer’s post: nothing is written, reads ask the feed by name', async () => {
    const t = hybridStore();
    await t.follow('user:a');
    const post = await t.post('user:a');
    expect(await t.store.size(reader)).toBe(0);
    expect((await t.store.counters()).entriesWritten).toBe(0);
    expect((await t.read()).items.map((a) => a.id)).toEqual([post.id]);
    expect(t.pulls).toEqual([{ only: ['user:a'] }]);
  });

  it('pushes the posts of a producer its reader reads often, and pulls what came before the switch', async () => {
    const t = hybridStore();
    await t.follow('user:a');
    await t.post('user:a');
    await t.post('user:a');
    expect(await t.store.size(reader)).toBe(0);
    // Reads at the hysteresis (2) times the posts turn the edge at the next post: 10 >= 3 * 2.
    for (let i = 0; i < 10; i++) await t.read();
    await t.post('user:a');
    expect(await t.store.size(reader)).toBe(0);
    const later = [await t.post('user:a'), await t.post('user:a')];
    expect(await t.store.size(reader)).toBe(2);
    expect((await t.store.counters()).entriesWritten).toBe(2);
    expect(await t.scroll(2)).toEqual(t.expected());
    // A first page that the stored posts fill (with one more to tell that a next page
    // exists) asks nothing below the switch; one that reaches below it does.
    t.pulls.length = 0;
    expect((await t.read(1)).items.map((a) => a.id)).toEqual([later[1]!.id]);
    expect(t.pulls).toEqual([]);
    expect((await t.read(2)).items.map((a) => a.id)).toEqual([later[1]!.id, later[0]!.id]);
    expect(t.pulls).toEqual([{ only: ['user:a'] }]);
  });

  it('turns a pushed edge back to pull once its producer posts far more than its reader reads', async () => {
    const t = hybridStore();
    await t.follow('user:a');
    await t.follow('user:b');
    for (let i = 0; i < 6; i++) await t.read();
    await t.post('user:a');
    await t.post('user:b');
    expect(await t.store.size(reader)).toBe(2);
    // user:a posts 12 more times without a read: past reads * hysteresis, it leaves the stored timeline.
    for (let i = 0; i < 12; i++) await t.post('user:a');
    expect(await t.store.size(reader)).toBe(1);
    expect(await t.scroll(3)).toEqual(t.expected());
  });

  it('keeps every activity once when a large backfill comes in pieces and the side changes between them', async () => {
    const t = hybridStore({ cap: 8 });
    // Another hybrid reader's timeline, so that the store counts the posts it is delivered.
    await t.deliver({ kind: 'follow', reader: 'timeline:other', target: 'user:a', recent: [], exhausted: true });
    for (let i = 0; i < 12; i++) await t.post('user:a', ['timeline:other']);
    // The first piece is pulled (the producer posted, the reader never read); reads after it
    // make the next ones pushed.
    const sizes: number[] = [];
    await t.follow('user:a', 3, async () => {
      sizes.push(await t.store.size(reader));
      if (sizes.length === 1) for (let i = 0; i < 40; i++) await t.read();
    });
    expect(sizes).toEqual([0, 0]);
    expect(await t.scroll(5)).toEqual(t.expected());
    // Pushed since the switch: the next post is stored, everything before it pulled.
    await t.post('user:a');
    expect(await t.store.size(reader)).toBe(1);
    expect(await t.scroll(4)).toEqual(t.expected());
  });

  it('replaces an updated activity where a pushed edge stored it and stores nothing for a pulled one; an update is no post', async () => {
    const t = hybridStore();
    await t.follow('user:a');
    await t.follow('user:b');
    for (let i = 0; i < 6; i++) await t.read();
    const pushed = await t.post('user:a');
    // user:b posts far more than its reader reads: its edge turns to pull.
    const pulled: Activity[] = [];
    for (let i = 0; i < 14; i++) pulled.push(await t.post('user:b'));
    expect(await t.store.size(reader)).toBe(1);
    const written = (await t.store.counters()).entriesWritten;
    // Many updates of user:a's post: as many as would turn its edge to pull if they were posts.
    let current = pushed;
    for (let i = 0; i < 14; i++) current = await t.update(current, `edit ${i}`);
    const pulledEdit = await t.update(pulled[3]!, 'pulled edit');
    expect({ size: await t.store.size(reader), written: (await t.store.counters()).entriesWritten }).toEqual({ size: 1, written });
    const page = (await t.read(20)).items;
    expect(page.map((a) => a.id)).toEqual(t.expected());
    expect(page.find((a) => a.id === pushed.id)).toEqual(current);
    expect(page.find((a) => a.id === pulledEdit.id)).toEqual(pulledEdit);
    // Still pushed: the next post of user:a is stored.
    await t.post('user:a');
    expect(await t.store.size(reader)).toBe(2);
  });

  it('counts a post once when fan-out splits its readers over several deliveries', async () => {
    const t = hybridStore();
    await t.follow('user:a');
    for (let i = 0; i < 3; i++) await t.read();
    // Three reads, and one post delivered in two pieces: one post, so the edge stays pushed.
    const post = activityAt('split', 'user:a', 0, { time: new Date(Date.UTC(2026, 0, 1)).toISOString() });
    await t.deliver({ kind: 'insert', readers: ['timeline:other'], activity: post }, { kind: 'insert', readers: [reader], activity: post });
    expect(await t.store.size(reader)).toBe(1);
  });
});

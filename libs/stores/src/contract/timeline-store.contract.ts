import { isReference, isWithinBound, justAbove, relevanceKeyOf, sortKeyOf, timelineModels, type Activity, type EdgeBound, type FeedId, type KeyOf, type TimelineDelivery, type TimelineItem, type TimelineModel } from '@feedmill/contracts';
import type { PullScope } from '@feedmill/feed-models';
import type { TimelinePolicy, TimelineStore } from '../ports.js';
import { activityAt } from './recorded.js';
import { seededRandom } from '@feedmill/feed-models/testing';

const activity = (id: string, feed: FeedId, second: number) => activityAt(id, feed, second);

/** Makes an empty store whose readers have the policies `policyOf` gives, reading time from `now`. */
export type TimelineStoreFactory = (policyOf: (reader: FeedId) => TimelinePolicy, now: () => number) => Promise<TimelineStore>;

/**
 * Readers of two groups: `timeline:*` with the policy under test and `wide:*` with the same
 * model and a larger cap, so that every scenario also checks that one group's policy never
 * leaks into another's timelines.
 */
const WIDE_CAP_FACTOR = 2;
function twoGroups(policy: TimelinePolicy): (reader: FeedId) => TimelinePolicy {
  const wide = { ...policy, cap: policy.cap * WIDE_CAP_FACTOR + 1 };
  return (reader) => (reader.startsWith('wide:') ? wide : policy);
}


/** The models that store entries (all but `pull`) among those under test. */
function timelineModelsWithEntries(models: readonly TimelineModel[]): TimelineModel[] {
  return models.filter((model) => model !== 'pull');
}

/**
 * Whether a pull in `scope` reads an activity of the reader's timeline: by name, only its
 * feed's; else every followed feed's but the excepted, and whatever was addressed to the
 * reader (the reader's own feed is read too).
 */
function inScope(a: Activity, reader: FeedId, scope: PullScope | undefined): boolean {
  if (!scope) return true;
  if ('only' in scope) return scope.only.includes(a.feed);
  return !scope.except.includes(a.feed) || (a.to?.includes(reader) ?? false);
}

/**
 * For `hybrid` timelines in the random plays: thresholds that a few reads or posts cross, so
 * that edges change sides many times in a play.
 */
const FLIPPING: TimelinePolicy['hybrid'] = { readsPerPost: 0.4, windowMs: 120_000, hysteresis: 1.5 };

/** What a reader sees of an activity: its id and every field a change may touch. */
const versionOf = (a: Activity) => `${a.id} ${a.object} ${JSON.stringify(a.extra ?? null)} bumped ${a.bumpedAt ?? '-'} updated ${a.updatedAt ?? '-'}`;

/**
 * Plays random posts, removals, bumps, updates, follows, unfollows and reads against a store
 * and a reference (the activities of the feeds each reader follows now, in the timeline's
 * order, as they are now), delivering as fan-out does, then scrolls every reader's timeline.
 * Some follows carry a `since` bound (a copy limit) and some unfollows keep the history: the
 * reference then holds what the bounds let in, by time key and log position, as the pull
 * path reads it; removals, updates and bumps reach the readers keeping a history.
 * It then scrolls every reader's timeline
 * and compares it with the reference: the same activities in the same places, each in its
 * latest version. References are read as the timeline service reads them, from the
 * activities as they are now.
 */
async function playAgainstReference(
  store: TimelineStore,
  policyOf: (reader: FeedId) => TimelinePolicy,
  seed: number,
  keyOf: KeyOf = sortKeyOf,
  /** A fresh store of the same model, to check that replaying the deliveries gives the same pages. */
  rebuilt?: TimelineStore,
): Promise<void> {
  const random = seededRandom(seed);
  const newestFirst = (a: Activity, b: Activity) => (keyOf(a) < keyOf(b) ? 1 : -1);
  const feeds: FeedId[] = ['user:a', 'user:b', 'user:c'];
  const readers: FeedId[] = ['timeline:r', 'wide:s'];
  const posted = new Map<FeedId, Activity[]>(feeds.map((f) => [f, []]));
  const following = new Map<FeedId, Set<FeedId>>(readers.map((r) => [r, new Set()]));
  /** Per reader, the bound of each bounded follow and of each feed unfollowed with its history kept. */
  const bounds = new Map<FeedId, Map<FeedId, EdgeBound>>(readers.map((r) => [r, new Map()]));
  /** Each activity's log position: the delivery that added it. */
  const addedAt = new Map<string, number>();
  const follows = (reader: FeedId, a: Activity) => following.get(reader)!.has(a.feed) || bounds.get(reader)!.get(a.feed)?.unfollowedAt !== undefined;
  const shows = (reader: FeedId, a: Activity) => {
    if (a.to?.includes(reader)) return true;
    if (!follows(reader, a)) return false;
    const bound = bounds.get(reader)!.get(a.feed);
    return !bound || isWithinBound(bound, sortKeyOf(a), addedAt.get(a.id)!);
  };
  /** Who an activity reaches: its feed's followers and the readers it was addressed to. */
  const readersOf = (a: Activity) => readers.filter((r) => following.get(r)!.has(a.feed) || a.to?.includes(r));
  /** Who a change to a held activity reaches: those whose timeline shows it. */
  const holdersOf = (a: Activity) => readers.filter((r) => shows(r, a));
  const timelineOf = (reader: FeedId) => feeds.flatMap((f) => posted.get(f)!.filter((a) => shows(reader, a))).sort(newestFirst);
  const pullFor = (reader: FeedId) => async (before: string | undefined, limit: number, scope?: PullScope) =>
    timelineOf(reader)
      .filter((a) => inScope(a, reader, scope) && (before === undefined || keyOf(a) < before))
      .slice(0, limit);
  let position = 0;
  let counter = 0;
  const delivered: TimelineDelivery[][] = [];
  const deliver = async (deliveries: TimelineDelivery[]) => {
    expect(await store.deliver({ after: position, position: position + 1, deliveries })).toEqual({ applied: true, position: position + 1 });
    delivered.push(deliveries);
    position++;
  };
  /** A linked entry as the reader gets it: the activity as it is now, or a mark that it is gone. */
  const hydrated = (item: TimelineItem) => {
    if (!isReference(item)) return versionOf(item);
    const now = posted.get(item.feed)?.find((a) => a.id === item.id);
    return now ? versionOf(now) : `${item.id} removed`;
  };
  const scroll = async (reader: FeedId, pageSize: number, from: TimelineStore = store) => {
    const seen: string[] = [];
    let before: string | undefined;
    for (let pages = 0; pages < 500; pages++) {
      const page = await from.readPage(reader, before, pageSize, pullFor(reader));
      seen.push(...page.items.map(hydrated));
      if (page.next === null) break;
      before = page.next;
    }
    return seen;
  };

  for (let step = 0; step < 150; step++) {
    const roll = random();
    const feed = feeds[Math.floor(random() * feeds.length)]!;
    const reader = readers[Math.floor(random() * readers.length)]!;
    if (roll < 0.5) {
      const a = activity(`p${++counter}`, feed, Math.floor(random() * 500));
      // Some are addressed to a reader, which holds them whether or not it follows the feed.
      if (random() < 0.25) a.to = [reader];
      posted.get(feed)!.push(a);
      addedAt.set(a.id, position + 1);
      const to = readersOf(a);
      if (to.length > 0) await deliver([{ kind: 'insert', readers: to, activity: a }]);
    } else if (roll < 0.56) {
      const list = posted.get(feed)!;
      if (list.length === 0) continue;
      const index = Math.floor(random() * list.length);
      const bumped = { ...list[index]!, bumpedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, 500 + Math.floor(random() * 500))).toISOString() };
      list[index] = bumped;
      const to = holdersOf(bumped);
      if (to.length > 0) await deliver([{ kind: 'bump', readers: to, activity: bumped }]);
    } else if (roll < 0.62) {
      const list = posted.get(feed)!;
      if (list.length === 0) continue;
      const index = Math.floor(random() * list.length);
      const edit = ++counter;
      const updated: Activity = { ...list[index]!, object: `edit${edit}`, updatedAt: new Date(Date.UTC(2026, 0, 2, 0, 0, edit)).toISOString() };
      if (random() < 0.5) updated.extra = { edit };
      list[index] = updated;
      const to = holdersOf(updated);
      if (to.length > 0) await deliver([{ kind: 'update', readers: to, activity: updated }]);
    } else if (roll < 0.68) {
      const list = posted.get(feed)!;
      if (list.length === 0) continue;
      const [removed] = list.splice(Math.floor(random() * list.length), 1);
      await deliver([{ kind: 'remove', readers: readers.filter((r) => shows(r, removed!) || follows(r, removed!)), id: removed!.id }]);
    } else if (roll < 0.77) {
      if (following.get(reader)!.has(feed)) continue;
      following.get(reader)!.add(feed);
      bounds.get(reader)!.delete(feed);
      const { cap } = policyOf(reader);
      // A third of the follows take a copy limit: a bound at one of the feed's activities, or above them all.
      const byTime = [...posted.get(feed)!].sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1));
      const limit = random() < 0.33 ? Math.floor(random() * 4) : undefined;
      const since = limit === undefined || byTime.length <= limit ? undefined : limit === 0 ? justAbove(sortKeyOf(byTime[0]!)) : sortKeyOf(byTime[limit - 1]!);
      if (since !== undefined) bounds.get(reader)!.set(feed, { feed, since, followedAt: position + 1 });
      const recent = posted
        .get(feed)!
        .filter((a) => since === undefined || sortKeyOf(a) >= since)
        .sort(newestFirst)
        .slice(0, cap + 1);
      await deliver([since === undefined ? { kind: 'follow', reader, target: feed, recent, exhausted: recent.length <= cap } : { kind: 'follow', reader, target: feed, recent, exhausted: recent.length <= cap, since }]);
    } else if (roll < 0.84) {
      if (!following.get(reader)!.delete(feed)) continue;
      // Half of the unfollows keep the history the feed delivered.
      if (random() < 0.5) {
        bounds.get(reader)!.set(feed, { ...bounds.get(reader)!.get(feed), feed, unfollowedAt: position + 1 });
        await deliver([{ kind: 'unfollow', reader, target: feed, keepHistory: true }]);
      } else {
        bounds.get(reader)!.delete(feed);
        await deliver([{ kind: 'unfollow', reader, target: feed }]);
      }
    } else {
      // A first page, which the cache model builds from.
      const page = await store.readPage(reader, undefined, 3, pullFor(reader));
      expect(page.items.map(hydrated)).toEqual(timelineOf(reader).slice(0, 3).map(versionOf));
    }
  }
  for (const reader of readers) {
    expect({ reader, seen: await scroll(reader, 4) }).toEqual({ reader, seen: timelineOf(reader).map(versionOf) });
    expect(await store.size(reader)).toBeLessThanOrEqual(policyOf(reader).cap);
  }
  if (!rebuilt) return;
  // A rebuild: the same deliveries, in the same order, into a store that starts empty.
  for (const [index, deliveries] of delivered.entries()) await rebuilt.deliver({ after: index, position: index + 1, deliveries });
  for (const reader of readers) {
    expect({ reader, rebuilt: await scroll(reader, 3, rebuilt) }).toEqual({ reader, rebuilt: await scroll(reader, 3) });
  }
}

/**
 * The behaviour every timeline store must have, for every storage model: what a reader
 * pages through equals the activities of the feeds it follows, whatever is stored.
 */
export function describeTimelineStoreContract(name: string, createWith: TimelineStoreFactory, models: readonly TimelineModel[] = timelineModels): void {
  describe.each(models.map((model) => [model]))(`TimelineStore contract: ${name}, %s model`, (model: TimelineModel) => {
    const play = async (policy: TimelinePolicy, seed: number, keyOf?: KeyOf, rebuild = false) => {
      const policyOf = twoGroups(model === 'hybrid' ? { ...policy, hybrid: FLIPPING } : policy);
      const store = await createWith(policyOf, Date.now);
      await playAgainstReference(store, policyOf, seed, keyOf, rebuild ? await createWith(policyOf, Date.now) : undefined);
      return store;
    };

    it.each([1, 2, 3, 4])('pages the same timeline as the reference after random deliveries and reads (seed %i)', async (seed) => {
      await play({ model, cap: 4, inactivityMs: 60_000 }, seed);
    });

    it('gives the same pages when rebuilt from the same deliveries', async () => {
      const policy = { model, cap: 4, inactivityMs: 60_000 };
      await play(policy, 11, sortKeyOf, true);
      await play({ ...policy, relevancy: true }, 12, relevanceKeyOf, true);
    });

    it.each([6, 7])('orders by relevance, bumps raising entries, the same as the reference (seed %i)', async (seed) => {
      await play({ model, cap: 4, inactivityMs: 60_000, relevancy: true }, seed, relevanceKeyOf);
    });

    it('keeps storing up to its cap after many removals and unfollows', async () => {
      const cap = 6;
      const store = await createWith(twoGroups({ model, cap, inactivityMs: 60_000 }), Date.now);
      const reader: FeedId = 'timeline:r';
      let position = 0;
      const deliver = (deliveries: TimelineDelivery[]) => store.deliver({ after: position, position: ++position, deliveries });
      let second = 0;
      const post = async (feed: FeedId, count: number) => {
        const posted = Array.from({ length: count }, () => activity(`p${++second}`, feed, second));
        await deliver(posted.map((a) => ({ kind: 'insert', readers: [reader], activity: a })));
        return posted;
      };
      await deliver([{ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true }, { kind: 'follow', reader, target: 'user:b', recent: [], exhausted: true }]);
      for (let round = 0; round < 4; round++) {
        const posted = await post('user:a', cap);
        await deliver(posted.slice(0, cap - 1).map((a) => ({ kind: 'remove', readers: [reader], id: a.id })));
        await post('user:b', 2);
        await deliver([{ kind: 'unfollow', reader, target: 'user:b' }]);
        await deliver([{ kind: 'follow', reader, target: 'user:b', recent: [], exhausted: true }]);
      }
      await post('user:a', 2 * cap);
      const size = await store.size(reader);
      // Size buckets drop a whole bucket (at most half the cap) at a time; a cache is dropped
      // by some changes and built again at the next read; a pull timeline stores nothing, nor
      // does a hybrid one whose reader never reads.
      const least = model === 'pull' || model === 'cache' || model === 'hybrid' ? 0 : model === 'size-buckets' ? Math.ceil(cap / 2) : cap;
      expect(size).toBeGreaterThanOrEqual(least);
      expect(size).toBeLessThanOrEqual(cap);
    });

    it('pages the same timeline when it links instead of embedding, and stores only references', async () => {
      const store = await play({ model, cap: 4, inactivityMs: 60_000, embed: false }, 5);
      const posted = activity('linked', 'user:a', 999);
      const reader: FeedId = 'timeline:linked';
      const position = await store.position();
      await store.deliver({ after: position, position: position + 1, deliveries: [{ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true }, { kind: 'insert', readers: [reader], activity: posted }] });
      const page = await store.readPage(reader, undefined, 5, async () => [posted]);
      expect(page.items).toHaveLength(1);
      // A model that stores nothing serves the activity itself from the pull path, as does a
      // hybrid timeline whose reader has not read (its edge turned to pull at the post).
      expect(page.items[0]).toEqual(model === 'pull' || model === 'hybrid' ? posted : { id: 'linked', feed: 'user:a', time: posted.time });
    });
  });

  describe(`TimelineStore contract: ${name}, pull model`, () => {
    it('stores nothing', async () => {
      const store = await createWith(() => ({ model: 'pull', cap: 10, inactivityMs: 0 }), Date.now);
      await store.deliver({ after: 0, position: 1, deliveries: [{ kind: 'follow', reader: 'timeline:r', target: 'user:a', recent: [], exhausted: true }, { kind: 'insert', readers: ['timeline:r'], activity: activity('a1', 'user:a', 1) }] });
      await store.readPage('timeline:r', undefined, 10, async () => [activity('a1', 'user:a', 1)]);
      expect(await store.counters()).toMatchObject({ timelines: 0, entries: 0 });
    });
  });

  describe(`TimelineStore contract: ${name}, cache model`, () => {
    const reader: FeedId = 'timeline:r';
    const insert = (a: Activity): TimelineDelivery => ({ kind: 'insert', readers: [reader], activity: a });

    it('builds a reader’s cache at its first read, keeps it while read, and drops it when idle', async () => {
      let clock = 1_000_000;
      const store = await createWith(() => ({ model: 'cache', cap: 3, inactivityMs: 60_000 }), () => clock);
      const history = [activity('a2', 'user:a', 2), activity('a1', 'user:a', 1)];
      await store.deliver({ after: 0, position: 1, deliveries: [{ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: false }, insert(activity('a0', 'user:a', 0))] });
      expect(await store.size(reader)).toBe(0);
      let pulls = 0;
      const pull = async (_before: string | undefined, limit: number) => (pulls++, history.slice(0, limit));
      expect((await store.readPage(reader, undefined, 10, pull)).items.map((a) => a.id)).toEqual(['a2', 'a1']);
      expect(await store.size(reader)).toBe(2);
      await store.deliver({ after: 1, position: 2, deliveries: [insert(activity('a3', 'user:a', 3))] });
      expect((await store.readPage(reader, undefined, 1, pull)).items.map((a) => a.id)).toEqual(['a3']);
      expect(pulls).toBe(1);
      clock += 61_000 + 10_000;
      await store.deliver({ after: 2, position: 3, deliveries: [] });
      expect(await store.size(reader)).toBe(0);
    });

    it.each<[string, TimelineDelivery[]]>([
      ['a removal', [{ kind: 'remove', readers: [reader], id: 'a2' }]],
      ['an unfollow', [{ kind: 'unfollow', reader, target: 'user:b' }]],
      ['a removal and an unfollow', [{ kind: 'remove', readers: [reader], id: 'a2' }, { kind: 'unfollow', reader, target: 'user:b' }]],
    ])('keeps %s that arrives while a build is pulling', async (_what, changes) => {
      const store = await createWith(() => ({ model: 'cache', cap: 5, inactivityMs: 60_000 }), Date.now);
      await store.deliver({ after: 0, position: 1, deliveries: [{ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true }, { kind: 'follow', reader, target: 'user:b', recent: [], exhausted: true }] });
      let history = [activity('b1', 'user:b', 3), activity('a2', 'user:a', 2), activity('a1', 'user:a', 1)];
      let pulling!: () => void;
      const started = new Promise<void>((resolve) => (pulling = resolve));
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      // The first pull reads the followed feeds, then answers only after the changes below.
      const slowPull = async (before: string | undefined, limit: number) => {
        const snapshot = history.filter((a) => before === undefined || sortKeyOf(a) < before).slice(0, limit);
        pulling();
        await answered;
        return snapshot;
      };
      const reading = store.readPage(reader, undefined, 10, slowPull);
      await started;
      await store.deliver({ after: 1, position: 2, deliveries: changes });
      const gone = new Set(changes.map((change) => (change.kind === 'remove' ? change.id : 'b1')));
      history = history.filter((a) => !gone.has(a.id));
      answer();
      await reading;
      const pull = async (before: string | undefined, limit: number) => history.filter((a) => before === undefined || sortKeyOf(a) < before).slice(0, limit);
      expect((await store.readPage(reader, undefined, 10, pull)).items.map((a) => a.id)).toEqual(history.map((a) => a.id));
    });
  });

  describe(`TimelineStore contract: ${name}, updates`, () => {
    const reader: FeedId = 'timeline:r';

    it('shows an update that arrives while a cache build is pulling, not the version the pull read', async () => {
      const store = await createWith(() => ({ model: 'cache', cap: 5, inactivityMs: 60_000 }), Date.now);
      const history = [activity('a2', 'user:a', 2), activity('a1', 'user:a', 1)];
      await store.deliver({ after: 0, position: 1, deliveries: [{ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true }] });
      let pulling!: () => void;
      const started = new Promise<void>((resolve) => (pulling = resolve));
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => (answer = resolve));
      const stalePull = async (_before: string | undefined, limit: number) => {
        const read = history.slice(0, limit);
        pulling();
        await answered;
        return read;
      };
      const reading = store.readPage(reader, undefined, 10, stalePull);
      await started;
      const edited = { ...history[1]!, object: 'edited', updatedAt: activity('x', 'user:a', 9).time };
      await store.deliver({ after: 1, position: 2, deliveries: [{ kind: 'update', readers: [reader], activity: edited }] });
      answer();
      await reading;
      const now = [history[0]!, edited];
      const pull = async (_before: string | undefined, limit: number) => now.slice(0, limit);
      expect((await store.readPage(reader, undefined, 10, pull)).items).toEqual(now);
    });

    it.each(timelineModelsWithEntries(models))('keeps an updated entry in its place in a %s timeline, by time and by relevance, and adds none to a reader not holding it', async (model) => {
      for (const relevancy of [false, true]) {
        const store = await createWith(() => ({ model, cap: 3, inactivityMs: 60_000, relevancy }), Date.now);
        const posts = [1, 2, 3, 4].map((second) => activity(`a${second}`, 'user:a', second));
        posts[0] = { ...posts[0]!, bumpedAt: activity('x', 'user:a', 5).time };
        const keyOf = relevancy ? relevanceKeyOf : sortKeyOf;
        const newestFirst = () => [...posts].sort((a, b) => (keyOf(a) < keyOf(b) ? 1 : -1));
        const pull = async (before: string | undefined, limit: number) => newestFirst().filter((a) => before === undefined || keyOf(a) < before).slice(0, limit);
        await store.deliver({ after: 0, position: 1, deliveries: [{ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true }, ...posts.map((a): TimelineDelivery => ({ kind: 'insert', readers: [reader, 'timeline:stranger'], activity: a }))] });
        await store.readPage(reader, undefined, 1, pull);
        const sizeBefore = await store.size(reader);
        // a3 is held in both orders; a2 is held by time, and by relevance (a1's bump keeps it
        // above) has fallen below the cap, to be served from the pull path.
        for (const [index, id] of [[2, 'a3'], [1, 'a2']] as const) {
          posts[index] = { ...posts[index]!, object: `edited ${id}`, updatedAt: activity('x', 'user:a', 9).time };
          await store.deliver({ after: await store.position(), position: (await store.position()) + 1, deliveries: [{ kind: 'update', readers: [reader, 'timeline:stranger'], activity: posts[index]! }] });
        }
        const seen = (await store.readPage(reader, undefined, 2, pull)).items;
        const rest = (await store.readPage(reader, keyOf(seen[1] as Activity), 10, pull)).items;
        expect({ relevancy, items: [...seen, ...rest] }).toEqual({ relevancy, items: newestFirst() });
        expect({ relevancy, size: await store.size(reader), stranger: await store.size('timeline:stranger') }).toEqual({ relevancy, size: sizeBefore, stranger: 0 });
      }
    });
  });

  describe(`TimelineStore contract: ${name}, erasure`, () => {
    const reader: FeedId = 'timeline:r';
    const other: FeedId = 'timeline:o';
    it.each(timelineModelsWithEntries(models))('takes an erased feed out of every %s timeline, the entries addressed to a reader too', async (model) => {
      const store = await createWith(() => ({ model, cap: 10, inactivityMs: 60_000 }), Date.now);
      const kept = activity('k1', 'user:k', 1);
      const x1 = activity('x1', 'user:x', 2);
      const x2: Activity = { ...activity('x2', 'user:x', 3), to: [other] };
      const follow = (who: FeedId, target: FeedId): TimelineDelivery => ({ kind: 'follow', reader: who, target, recent: [], exhausted: true });
      const pullOf = (items: Activity[]) => async (before: string | undefined, limit: number) => items.filter((a) => before === undefined || sortKeyOf(a) < before).slice(0, limit);
      const ids = async (who: FeedId, items: Activity[]) => (await store.readPage(who, undefined, 10, pullOf(items))).items.map((a) => a.id);
      await store.deliver({
        after: 0,
        position: 1,
        deliveries: [follow(reader, 'user:k'), follow(reader, 'user:x'), follow(other, 'user:k'), { kind: 'insert', readers: [reader], activity: kept }, { kind: 'insert', readers: [reader], activity: x1 }, { kind: 'insert', readers: [reader, other], activity: x2 }],
      });
      // A cache is built at its first read, from what the pull path holds then.
      expect(await ids(reader, [x2, x1, kept])).toEqual(['x2', 'x1', 'k1']);
      expect(await ids(other, [x2])).toEqual(['x2']);
      await store.deliver({ after: 1, position: 2, deliveries: [{ kind: 'erase', reader: 'user:x' }] });
      // Content has forgotten the feed too: the pull path gives only what is left.
      expect(await ids(reader, [kept])).toEqual(['k1']);
      expect(await ids(other, [])).toEqual([]);
      expect(await store.position()).toBe(2);
    });
  });

  describe(`TimelineStore contract: ${name}, ring model`, () => {
    const create = (cap: number) => createWith(() => ({ model: 'ring', cap, inactivityMs: 0 }), Date.now);
    const reader: FeedId = 'timeline:r';
    const follow = (target: FeedId, recent: Activity[] = [], exhausted = true): TimelineDelivery => ({ kind: 'follow', reader, target, recent, exhausted });
    const insert = (a: Activity, readers: FeedId[] = [reader]): TimelineDelivery => ({ kind: 'insert', readers, activity: a });

    it('applies each batch once and refuses one that does not start where it stands', async () => {
      const store = await create(3);
      expect(await store.deliver({ after: 0, position: 4, deliveries: [follow('user:a')] })).toEqual({ applied: true, position: 4 });
      expect(await store.deliver({ after: 9, position: 10, deliveries: [insert(activity('a1', 'user:a', 1))] })).toEqual({ applied: false, position: 4 });
      expect(await store.size(reader)).toBe(0);
      await store.deliver({ after: 4, position: 5, deliveries: [insert(activity('a1', 'user:a', 1)), insert(activity('a1', 'user:a', 1))] });
      expect(await store.size(reader)).toBe(1);
      expect(await store.position()).toBe(5);
    });

    it('applies a request fenced where it stands without moving, reader by reader, and moves with an empty one', async () => {
      // Timeline applies a failed request this way, one reader at a time, then moves the position.
      const store = await create(3);
      const other: FeedId = 'timeline:other';
      await store.deliver({ after: 0, position: 4, deliveries: [follow('user:a'), { kind: 'follow', reader: other, target: 'user:a', recent: [], exhausted: true }] });
      expect(await store.deliver({ after: 4, position: 4, deliveries: [insert(activity('a1', 'user:a', 1))] })).toEqual({ applied: true, position: 4 });
      expect(await store.position()).toBe(4);
      expect(await store.size(reader)).toBe(1);
      expect(await store.size(other)).toBe(0);
      expect(await store.deliver({ after: 4, position: 4, deliveries: [insert(activity('a1', 'user:a', 1), [other])] })).toEqual({ applied: true, position: 4 });
      expect(await store.size(other)).toBe(1);
      expect(await store.deliver({ after: 4, position: 7, deliveries: [] })).toEqual({ applied: true, position: 7 });
      expect(await store.position()).toBe(7);
      expect(await store.deliver({ after: 4, position: 4, deliveries: [insert(activity('a2', 'user:a', 2))] })).toEqual({ applied: false, position: 7 });
      expect(await store.size(reader)).toBe(1);
    });

    it('never holds more than the cap, and serves what fell below it from the pull path', async () => {
      const store = await create(3);
      const posted = Array.from({ length: 6 }, (_, i) => activity(`a${i}`, 'user:a', i));
      await store.deliver({ after: 0, position: 1, deliveries: [follow('user:a'), ...posted.map((a) => insert(a))] });
      expect(await store.size(reader)).toBe(3);
      const pulled: Array<string | undefined> = [];
      const pull = async (before: string | undefined, limit: number) => {
        pulled.push(before);
        return [...posted].reverse().filter((a) => before === undefined || sortKeyOf(a) < before).slice(0, limit);
      };
      const first = await store.readPage(reader, undefined, 2, pull);
      expect(first.items.map((a) => a.id)).toEqual(['a5', 'a4']);
      expect(pulled).toEqual([]);
      const second = await store.readPage(reader, first.next!, 10, pull);
      expect(second.items.map((a) => a.id)).toEqual(['a3', 'a2', 'a1', 'a0']);
      expect(second.next).toBeNull();
      expect(pulled.length).toBe(1);
    });

    it('delivers only to readers it materializes, and removes by activity and by unfollow', async () => {
      const store = await create(10);
      await store.deliver({
        after: 0,
        position: 1,
        deliveries: [
          follow('user:a'),
          follow('user:b'),
          insert(activity('a1', 'user:a', 1), [reader, 'timeline:stranger']),
          insert(activity('b1', 'user:b', 2)),
          insert(activity('b2', 'user:b', 3)),
          { kind: 'remove', readers: [reader], id: 'b1' },
        ],
      });
      expect(await store.size('timeline:stranger')).toBe(0);
      const none = async () => [];
      expect((await store.readPage(reader, undefined, 10, none)).items.map((a) => a.id)).toEqual(['b2', 'a1']);
      await store.deliver({ after: 1, position: 2, deliveries: [{ kind: 'unfollow', reader, target: 'user:b' }] });
      expect((await store.readPage(reader, undefined, 10, none)).items.map((a) => a.id)).toEqual(['a1']);
      expect(await store.counters()).toEqual({ timelines: 1, entries: 1, delivered: 3, entriesWritten: 3 });
    });

    it('reads everything from the pull path for a reader it never materialized', async () => {
      const store = await create(10);
      const page = await store.readPage('timeline:new', undefined, 2, async (_before, limit) =>
        [activity('x2', 'user:x', 2), activity('x1', 'user:x', 1), activity('x0', 'user:x', 0)].slice(0, limit),
      );
      expect(page.items.map((a) => a.id)).toEqual(['x2', 'x1']);
      expect(page.next).not.toBeNull();
    });
  
});
}

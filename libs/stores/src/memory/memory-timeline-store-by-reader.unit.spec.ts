import { jest } from '@jest/globals';
import type { Activity, FeedId, TimelineDelivery } from '@feedmill/contracts';
import { activityAt } from '../contract/recorded.js';
import type { TimelinePolicy } from '../ports.js';
import { EntriesByTimeline } from './entries-by-timeline.js';
import { MemoryTimelineStore } from './memory-timeline-store.js';

/**
 * A catch-up hands the memory store requests of thousands of posts, and it applies a large
 * run of inserts reader by reader. These plays are delivered twice: one delivery per request
 * (post by post, as a live fan-out does) and all of them in a few large requests; every
 * reader's timeline, and what the store counts and keeps, must come out the same.
 */

/** Readers' groups by prefix: `linked:` stores references, `ranked:` orders by relevance, `hybrid:` pushes or pulls per edge; the rest `ring`. */
function policyOf(reader: FeedId): TimelinePolicy {
  const base: TimelinePolicy = { model: 'ring', cap: 20, inactivityMs: 60_000 };
  if (reader.startsWith('linked:')) return { ...base, embed: false };
  if (reader.startsWith('ranked:')) return { ...base, relevancy: true };
  if (reader.startsWith('hybrid:')) return { ...base, model: 'hybrid', hybrid: { readsPerPost: 1, windowMs: 3_600_000, hysteresis: 2 } };
  return base;
}

/** A seeded generator (mulberry32): the same play every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Long runs of posts to random readers between follows, unfollows, removals and bumps; some posts again (a copy, or a new version), some addressed to readers with no timeline yet. */
function play(seed: number, readers: readonly FeedId[]): TimelineDelivery[] {
  const chance = random(seed);
  const pick = <T>(values: readonly T[]): T => values[Math.floor(chance() * values.length)]!;
  const producers = Array.from({ length: 8 }, (_, i): FeedId => `user:p${i}`);
  const deliveries: TimelineDelivery[] = readers.map((reader) => ({ kind: 'follow', reader, target: pick(producers), recent: [], exhausted: true }));
  const posted: Activity[] = [];
  let second = 0;
  for (let round = 0; round < 6; round++) {
    for (let post = 0; post < 160; post++) {
      const followers = readers.filter(() => chance() < 0.4);
      const roll = chance();
      let activity: Activity;
      if (roll < 0.05 && posted.length > 0) activity = structuredClone(pick(posted));
      else if (roll < 0.1 && posted.length > 0) activity = { ...pick(posted), object: `edited ${post}` };
      else {
        // Times repeat now and then, and arrive out of order: keys tie on the millisecond, and not every post is the newest.
        second += chance() < 0.2 ? 0 : 1;
        const addressed: FeedId[] | undefined = chance() < 0.05 ? [`timeline:new${round}-${post}`] : undefined;
        activity = activityAt(`a${round}-${post}`, pick(producers), second - (chance() < 0.1 ? 30 : 0), addressed && { to: addressed });
        posted.push(activity);
      }
      deliveries.push({ kind: 'insert', readers: [...followers, ...(activity.to ?? [])], activity });
    }
    const victim = pick(posted);
    deliveries.push({ kind: 'remove', readers: readers.filter(() => chance() < 0.5), id: victim.id });
    const bumped = pick(posted);
    deliveries.push({ kind: 'bump', readers: readers.filter(() => chance() < 0.5), activity: { ...bumped, bumpedAt: activityAt('b', bumped.feed, second + 1).time } });
    const reader = pick(readers);
    deliveries.push({ kind: 'unfollow', reader, target: pick(producers) });
    deliveries.push({ kind: 'follow', reader, target: pick(producers), recent: posted.slice(-30).reverse(), exhausted: false });
  }
  return deliveries;
}

async function deliverAll(requests: TimelineDelivery[][]): Promise<MemoryTimelineStore> {
  const store = new MemoryTimelineStore(policyOf, () => 0);
  let position = 0;
  for (const deliveries of requests) {
    const reply = await store.deliver({ after: position, position: position + 1, deliveries });
    expect(reply).toEqual({ applied: true, position: ++position });
  }
  return store;
}

async function contentsOf(store: MemoryTimelineStore, readers: readonly FeedId[]) {
  const pages = await Promise.all(readers.map(async (reader) => [reader, (await store.readPage(reader, undefined, 1_000, async () => [])).items] as const));
  return { pages, counters: await store.counters(), versions: store.storedVersions() };
}

describe('MemoryTimelineStore, large runs of inserts applied reader by reader', () => {
  const addressedReaders = Array.from({ length: 6 }, (_, round) => Array.from({ length: 160 }, (_, post) => `timeline:new${round}-${post}` as FeedId)).flat();

  it.each([1, 2, 3])('gives every reader the timeline that post-by-post delivery gives (play %i)', async (seed) => {
    const readers: FeedId[] = Array.from({ length: 150 }, (_, i) => (['timeline:', 'linked:', 'ranked:'] as const)[i % 3] + `r${i}`) as FeedId[];
    const deliveries = play(seed, readers);
    const grouped = jest.spyOn(EntriesByTimeline.prototype, 'forEach');
    const oneByOne = await contentsOf(await deliverAll(deliveries.map((delivery) => [delivery])), [...readers, ...addressedReaders]);
    expect(grouped).not.toHaveBeenCalled();
    const inLargeRequests = await contentsOf(await deliverAll([deliveries.slice(0, 500), deliveries.slice(500)]), [...readers, ...addressedReaders]);
    // Each round's 160 posts to about 60 readers each are a run above the threshold.
    expect(grouped).toHaveBeenCalled();
    grouped.mockRestore();
    expect(inLargeRequests).toEqual(oneByOne);
    // The play is not trivial: timelines were trimmed to their cap, and addressed readers got timelines.
    expect(oneByOne.pages.some(([, items]) => items.length === 20)).toBe(true);
    expect(oneByOne.pages.filter(([reader, items]) => reader.includes(':new') && items.length > 0).length).toBeGreaterThan(10);
  });

  it('applies a run post by post where a hybrid reader takes part, to the same effect', async () => {
    const readers: FeedId[] = Array.from({ length: 150 }, (_, i) => (['timeline:', 'hybrid:', 'ranked:'] as const)[i % 3] + `r${i}`) as FeedId[];
    const deliveries = play(4, readers);
    const grouped = jest.spyOn(EntriesByTimeline.prototype, 'forEach');
    const oneByOne = await contentsOf(await deliverAll(deliveries.map((delivery) => [delivery])), [...readers, ...addressedReaders]);
    const inLargeRequests = await contentsOf(await deliverAll([deliveries]), [...readers, ...addressedReaders]);
    // Every run reaches a hybrid reader: none is grouped, and the timelines an addressed post started while the run was looked at are not left behind.
    expect(grouped).not.toHaveBeenCalled();
    grouped.mockRestore();
    expect(inLargeRequests).toEqual(oneByOne);
  });
});

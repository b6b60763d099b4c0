import { sortKeyOf, type Activity, type FeedId, type TimelineItem } from '@feedmill/contracts';
import { CappedCache } from './capped-cache.js';
import { readTimelinePage, storedCache } from './timeline-read.js';
import { mergeNewestFirst } from './newest-first-merge.js';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const activity = (id: string, feed: FeedId, second: number): Activity => ({ id, feed, actor: 'a', verb: 'post', object: 'o', time: at(second) });

describe('CappedCache', () => {
  it('never holds more than its cap and raises its floor to the newest entry it dropped', () => {
    const cache = new CappedCache(3);
    for (let i = 1; i <= 5; i++) cache.insert(activity(`a${i}`, 'user:x', i));
    expect(cache.size).toBe(3);
    expect(cache.newestBelow(undefined, 10).map((a) => a.id)).toEqual(['a5', 'a4', 'a3']);
    expect(cache.floor).toBe(sortKeyOf(activity('a2', 'user:x', 2)));
  });

  it('ignores an activity it already holds and one that belongs below its floor', () => {
    const cache = new CappedCache(2);
    cache.insert(activity('a3', 'user:x', 3));
    cache.insert(activity('a4', 'user:x', 4));
    cache.insert(activity('a5', 'user:x', 5));
    expect(cache.insert(activity('a5', 'user:x', 5))).toBe(false);
    expect(cache.insert(activity('a1', 'user:x', 1))).toBe(false);
    expect(cache.newestBelow(undefined, 10).map((a) => a.id)).toEqual(['a5', 'a4']);
  });

  it('inserts out-of-order activities in sort order', () => {
    const cache = new CappedCache(10);
    for (const s of [5, 1, 3, 2, 4]) cache.insert(activity(`a${s}`, 'user:x', s));
    expect(cache.newestBelow(undefined, 10).map((a) => a.id)).toEqual(['a5', 'a4', 'a3', 'a2', 'a1']);
    expect(cache.newestBelow(sortKeyOf(activity('a3', 'user:x', 3)), 10).map((a) => a.id)).toEqual(['a2', 'a1']);
  });

  it('removes one activity, or every activity of an unfollowed feed', () => {
    const cache = new CappedCache(10);
    cache.insert(activity('a1', 'user:x', 1));
    cache.insert(activity('b1', 'user:y', 2));
    cache.insert(activity('a2', 'user:x', 3));
    expect(cache.remove('b1')).toBe(true);
    expect(cache.remove('b1')).toBe(false);
    cache.insert(activity('b2', 'user:y', 4));
    expect(cache.removeFeed('user:x')).toBe(2);
    expect(cache.newestBelow(undefined, 10).map((a) => a.id)).toEqual(['b2']);
  });

  it('raises its floor when a followed feed has more history than was merged', () => {
    const cache = new CappedCache(10);
    cache.insert(activity('y1', 'user:y', 1));
    cache.insert(activity('y5', 'user:y', 5));
    cache.mergeFeed([activity('x6', 'user:x', 6), activity('x3', 'user:x', 3)], false);
    expect(cache.floor).toBe(sortKeyOf(activity('x3', 'user:x', 3)));
    expect(cache.newestBelow(undefined, 10).map((a) => a.id)).toEqual(['x6', 'y5']);
  });
});

describe('mergeNewestFirst', () => {
  it('takes the newest items across sources up to the limit', () => {
    const keyOf = (n: number) => String(n).padStart(3, '0');
    const merged = mergeNewestFirst(
      [
        { items: [1, 4, 9], next: 2 },
        { items: [2, 3, 10], next: 2 },
        { items: [], next: -1 },
        { items: [5, 6, 7, 8], next: 3 },
      ],
      keyOf,
      6,
    );
    expect(merged).toEqual([10, 9, 8, 7, 6, 5]);
  });
});

/** A tiny seeded generator, so that a failure reproduces. */
function random(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('a capped timeline read through cache and pull path', () => {
  it.each([1, 2, 3, 4, 5])('equals the reference timeline page by page (seed %i)', async (seed) => {
    const next = random(seed);
    const feeds: FeedId[] = ['user:a', 'user:b', 'user:c', 'user:d'];
    const posted = new Map<FeedId, Activity[]>(feeds.map((f) => [f, []]));
    const followed = new Set<FeedId>();
    const cache = new CappedCache(7);
    let counter = 0;

    const recentOf = (feed: FeedId, limit: number) => [...posted.get(feed)!].sort((x, y) => (sortKeyOf(y) < sortKeyOf(x) ? -1 : 1)).slice(0, limit);

    for (let step = 0; step < 300; step++) {
      const roll = next();
      const feed = feeds[Math.floor(next() * feeds.length)]!;
      if (roll < 0.6) {
        // Times jump around so that late, out-of-order activities happen too.
        const a = activity(`p${++counter}`, feed, Math.floor(next() * 1000));
        posted.get(feed)!.push(a);
        if (followed.has(feed)) cache.insert(a);
      } else if (roll < 0.75) {
        const list = posted.get(feed)!;
        if (list.length > 0) {
          const [removed] = list.splice(Math.floor(next() * list.length), 1);
          cache.remove(removed!.id);
        }
      } else if (roll < 0.88) {
        if (!followed.has(feed)) {
          followed.add(feed);
          const recent = recentOf(feed, cache.cap + 1);
          cache.mergeFeed(recent.slice(0, cache.cap + 1), recent.length <= cache.cap);
        }
      } else if (followed.delete(feed)) {
        cache.removeFeed(feed);
      }
      expect(cache.size).toBeLessThanOrEqual(cache.cap);
    }

    const reference = [...followed].flatMap((f) => posted.get(f)!).sort((x, y) => (sortKeyOf(y) < sortKeyOf(x) ? -1 : 1));
    const pull = async (before: string | undefined, limit: number) =>
      [...followed]
        .flatMap((f) => posted.get(f)!)
        .filter((a) => before === undefined || sortKeyOf(a) < before)
        .sort((x, y) => (sortKeyOf(y) < sortKeyOf(x) ? -1 : 1))
        .slice(0, limit);

    const seen: TimelineItem[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const page = await readTimelinePage(storedCache(cache), cursor, 3, pull);
      seen.push(...page.items);
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(seen.map((a) => a.id)).toEqual(reference.map((a) => a.id));
  });
});

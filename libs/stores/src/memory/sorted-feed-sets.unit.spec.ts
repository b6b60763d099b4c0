import type { FeedId } from '@feedmill/contracts';
import { seededRandom } from '@feedmill/feed-models/testing';
import { SMALL_SET_MAX, SortedFeedSets } from './sorted-feed-sets.js';

/** What the sets must behave as: a plain set per key, sorted when read. */
class ModelSets {
  readonly sets = new Map<FeedId, Set<FeedId>>();

  add(key: FeedId, member: FeedId): boolean {
    const set = this.sets.get(key) ?? new Set<FeedId>();
    this.sets.set(key, set);
    if (set.has(member)) return false;
    set.add(member);
    return true;
  }

  delete(key: FeedId, member: FeedId): boolean {
    return this.sets.get(key)?.delete(member) ?? false;
  }

  sorted(key: FeedId): FeedId[] {
    return [...(this.sets.get(key) ?? [])].sort();
  }
}

describe('sorted feed sets', () => {
  it('behave as a sorted set per key, through growing past the small size and shrinking again', () => {
    const random = seededRandom(5);
    const sets = new SortedFeedSets();
    const model = new ModelSets();
    // Key 0 gets most members: its set becomes a tree; the others stay arrays.
    const key = (): FeedId => `user:k${random() < 0.6 ? 0 : Math.floor(random() * 4)}`;
    const member = (): FeedId => `timeline:m${Math.floor(random() * SMALL_SET_MAX * 3)}`;
    let largest = 0;
    for (let step = 0; step < 6_000; step++) {
      const [k, m] = [key(), member()];
      // Adds outnumber deletes at first, then deletes take over, so that sets grow and then shrink.
      const deleting = random() < (step < 3_000 ? 0.25 : 0.7);
      expect({ step, changed: deleting ? sets.delete(k, m) : sets.add(k, m) }).toEqual({ step, changed: deleting ? model.delete(k, m) : model.add(k, m) });
      largest = Math.max(largest, sets.sizeOf('user:k0'));
      if (step % 100 === 0) {
        for (const k of model.sets.keys()) {
          const sorted = model.sorted(k);
          expect({ k, members: [...sets.members(k)], size: sets.sizeOf(k) }).toEqual({ k, members: sorted, size: sorted.length });
          const after = sorted[Math.floor(random() * sorted.length)];
          const limit = 1 + Math.floor(random() * 10);
          const from = after === undefined ? 0 : sorted.indexOf(after) + 1;
          expect(sets.page(k, after, limit)).toEqual(sorted.slice(from, from + limit));
          expect(sets.has(k, m)).toBe(model.sets.get(k)?.has(m) ?? false);
        }
        expect([...sets.keys()].sort()).toEqual([...model.sets.keys()].filter((k) => model.sets.get(k)!.size > 0).sort());
      }
    }
    expect(largest).toBeGreaterThan(SMALL_SET_MAX);
    expect(sets.sizeOf('user:k0')).toBeLessThan(SMALL_SET_MAX);
  });

  it('pages after an id that is not a member, and know nothing of keys never added', () => {
    const sets = new SortedFeedSets();
    for (const member of ['timeline:b', 'timeline:d', 'timeline:f'] as FeedId[]) sets.add('user:x', member);
    expect(sets.page('user:x', 'timeline:c', 10)).toEqual(['timeline:d', 'timeline:f']);
    expect(sets.page('user:x', 'timeline:z', 10)).toEqual([]);
    expect(sets.page('user:y', undefined, 10)).toEqual([]);
    expect(sets.sizeOf('user:y')).toBe(0);
    expect(sets.has('user:y', 'timeline:b')).toBe(false);
    expect(sets.delete('user:y', 'timeline:b')).toBe(false);
  });

  it('restores sets of any size from sorted members, and keeps changing them', () => {
    const sets = new SortedFeedSets();
    const large = Array.from({ length: SMALL_SET_MAX * 4 }, (_, i) => `timeline:${String(i).padStart(4, '0')}` as FeedId);
    sets.restore('user:large', [...large]);
    sets.restore('user:small', ['timeline:a', 'timeline:c']);
    expect([...sets.members('user:large')]).toEqual(large);
    expect(sets.add('user:large', 'timeline:0000a')).toBe(true);
    expect(sets.page('user:large', 'timeline:0000', 2)).toEqual(['timeline:0000a', 'timeline:0001']);
    expect(sets.add('user:small', 'timeline:b')).toBe(true);
    expect([...sets.members('user:small')]).toEqual(['timeline:a', 'timeline:b', 'timeline:c']);
  });
});

import type { Activity, FeedId } from '@feedmill/contracts';
import { activityAt } from '../testing.js';
import { DecayedCount, ProducerPosts, shouldPush, type HybridPolicy } from './push-or-pull.js';

const policy: HybridPolicy = { readsPerPost: 1, windowMs: 60_000, hysteresis: 2 };
const at = (second: number, id: string, feed: FeedId = 'user:a', bumpedAt?: string): Activity => activityAt(id, feed, second, bumpedAt ? { bumpedAt } : {});

describe('DecayedCount', () => {
  it('adds one per event and decays by e every window', () => {
    const count = new DecayedCount();
    expect(count.valueAt(0, 1000)).toBe(0);
    expect(count.add(0, 1000)).toBe(1);
    expect(count.add(0, 1000)).toBe(2);
    expect(count.valueAt(1000, 1000)).toBeCloseTo(2 / Math.E, 10);
    expect(count.add(1000, 1000)).toBeCloseTo(2 / Math.E + 1, 10);
  });

  it('does not grow for a time before its last event (clocks may disagree)', () => {
    const count = new DecayedCount();
    count.add(5000, 1000);
    expect(count.valueAt(1000, 1000)).toBe(1);
    expect(count.add(1000, 1000)).toBe(2);
    expect(count.state).toEqual({ count: 2, at: 5000 });
  });
});

describe('shouldPush', () => {
  it('gives a new edge the side of the ratio, ties to push', () => {
    expect(shouldPush(0, 0, undefined, policy)).toBe(true);
    expect(shouldPush(3, 3, undefined, policy)).toBe(true);
    expect(shouldPush(2, 3, undefined, policy)).toBe(false);
    expect(shouldPush(2, 3, undefined, { ...policy, readsPerPost: 0.5 })).toBe(true);
  });

  it('keeps an edge on its side until the ratio passes the threshold by the hysteresis', () => {
    // Pushed: stays while reads * 2 >= posts.
    expect(shouldPush(5, 10, true, policy)).toBe(true);
    expect(shouldPush(4.9, 10, true, policy)).toBe(false);
    // Pulled: turns only once reads >= posts * 2.
    expect(shouldPush(19, 10, false, policy)).toBe(false);
    expect(shouldPush(20, 10, false, policy)).toBe(true);
  });
});

describe('ProducerPosts', () => {
  it('counts a post once however many deliveries carry it', () => {
    const posts = new ProducerPosts(60_000);
    const post = at(0, 'p1');
    const ms = Date.parse(post.time);
    expect(posts.count(post, ms)).toBe(1);
    expect(posts.count(post, ms)).toBe(1);
    expect(posts.count(at(0, 'p2'), ms)).toBe(2);
    expect(posts.valueAt('user:a', ms)).toBe(2);
    expect(posts.valueAt('user:b', ms)).toBe(0);
  });

  it('keeps each order’s greatest key, from posts, bumps and what follows find', () => {
    const posts = new ProducerPosts(60_000);
    expect(posts.newestKey('user:a', 'time')).toBe('');
    const late = at(50, 'p1');
    posts.count(late, 0);
    // An older time posted later moves neither key.
    posts.count(at(10, 'p2'), 0);
    expect(posts.newestKey('user:a', 'time')).toBe(`${late.time}|p1`);
    const bumped = at(10, 'p2', 'user:a', new Date(Date.UTC(2026, 0, 1, 0, 5)).toISOString());
    posts.saw(bumped);
    expect(posts.newestKey('user:a', 'time')).toBe(`${late.time}|p1`);
    expect(posts.newestKey('user:a', 'relevance')).toBe(`${bumped.bumpedAt}|p2`);
    posts.saw(at(70, 'p0', 'user:b'));
    expect(posts.newestKey('user:b', 'time')).toBe(`${at(70, 'p0').time}|p0`);
    expect(posts.valueAt('user:b', 0)).toBe(0);
  });

  it('restores what its entries gave', () => {
    const posts = new ProducerPosts(60_000);
    posts.count(at(1, 'p1'), 1000);
    posts.count(at(2, 'p2', 'user:b'), 2000);
    const restored = new ProducerPosts(60_000);
    for (const e of posts.entries()) restored.restore(e.feed, e.count, e.at, e.lastId, e.newestByTime, e.newestByRelevance);
    expect([...restored.entries()]).toEqual([...posts.entries()]);
    expect(restored.count(at(2, 'p2', 'user:b'), 2000)).toBe(1);
  });
});

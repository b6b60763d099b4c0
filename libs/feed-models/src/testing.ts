import type { Activity, FeedId } from '@feedmill/contracts';

/**
 * Numbers in [0, 1) from a seed (mulberry32), for randomized tests: the same seed gives the
 * same sequence, so a failure replays.
 */
export function seededRandom(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An activity posted at a second of 2026-01-01 (UTC). */
export function activityAt(id: string, feed: FeedId, second: number, extra: Partial<Activity> = {}): Activity {
  return { id, feed, actor: 'a', verb: 'post', object: 'o', time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(), ...extra };
}

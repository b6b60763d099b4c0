import * as prand from 'pure-rand';
import type { FeedmillClient } from '@feedmill/client';
import type { FeedId } from '@feedmill/contracts';

export const PRODUCERS = 100;
export const READERS = 2_000;
export const FOLLOWS_PER_READER = 10;
/** Posts kept per producer: past it the oldest is removed, so that what content retains stays level. */
export const LIVE_POSTS_PER_PRODUCER = 20;

const producerOf = (i: number) => `user:s${i}` as FeedId;
const readerOf = (i: number) => `timeline:s${i}` as FeedId;

/**
 * The soak's requests: reads of timelines (three in four), posts (each producer's oldest
 * removed past {@link LIVE_POSTS_PER_PRODUCER}) and follow churn (a reader swaps one of its
 * {@link FOLLOWS_PER_READER} producers for another). What the server must retain is level
 * over time, whatever the duration: live posts, edges and timelines (capped) all are.
 */
export class SoakWorkload {
  private readonly rng: prand.RandomGenerator;
  private readonly live = Array.from({ length: PRODUCERS }, () => [] as string[]);
  private readonly following = Array.from({ length: READERS }, (_, r) => Array.from({ length: FOLLOWS_PER_READER }, (_, k) => (r * 7 + k * 13) % PRODUCERS));
  /** Readers and producers with a request in flight that changes them: their next change waits. */
  private readonly busy = new Set<string>();

  constructor(private readonly client: FeedmillClient, seed: number) {
    this.rng = prand.xoroshiro128plus(seed);
    prand.unsafeSkipN(this.rng, 16);
  }

  /** Every reader follows its first producers: bulk imports. */
  async seed(): Promise<void> {
    const follows = this.following.flatMap((producers, r) => producers.map((p) => ({ source: readerOf(r), target: producerOf(p) })));
    for (let from = 0; from < follows.length; from += 10_000) await this.client.followMany(follows.slice(from, from + 10_000));
  }

  private int(max: number): number {
    return prand.unsafeUniformIntDistribution(0, max - 1, this.rng);
  }

  /** One request of the mix, awaited. */
  async next(): Promise<void> {
    const roll = this.int(100);
    if (roll < 75) {
      await this.client.readFeed(readerOf(this.int(READERS)), { limit: 25 });
      return;
    }
    if (roll < 95) {
      const p = this.int(PRODUCERS);
      if (this.busy.has(`p${p}`)) return this.next();
      this.busy.add(`p${p}`);
      try {
        const { id } = await this.client.addActivity(producerOf(p), { actor: `s${p}`, verb: 'post', object: `soak:${this.int(1_000_000)}` });
        this.live[p]!.push(id);
        if (this.live[p]!.length > LIVE_POSTS_PER_PRODUCER) await this.client.removeActivity(producerOf(p), this.live[p]!.shift()!);
      } finally {
        this.busy.delete(`p${p}`);
      }
      return;
    }
    const r = this.int(READERS);
    if (this.busy.has(`r${r}`)) return this.next();
    this.busy.add(`r${r}`);
    try {
      const followed = this.following[r]!;
      const at = this.int(followed.length);
      let next = this.int(PRODUCERS);
      while (followed.includes(next)) next = (next + 1) % PRODUCERS;
      await this.client.unfollow(readerOf(r), producerOf(followed[at]!));
      await this.client.follow(readerOf(r), producerOf(next));
      followed[at] = next;
    } finally {
      this.busy.delete(`r${r}`);
    }
  }
}

import * as prand from 'pure-rand';
import type { FeedId } from '@feedmill/contracts';
import type { FeedClient } from '@feedmill/harness';

/** A seeded source of choices: a failing run replays from its seed. */
export class SeededChoices {
  private readonly rng: prand.RandomGenerator;

  constructor(readonly seed: number) {
    this.rng = prand.xoroshiro128plus(seed);
    prand.unsafeSkipN(this.rng, 16); // the first outputs of a small seed are poorly mixed
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return prand.unsafeUniformIntDistribution(min, max, this.rng);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(0, items.length - 1)]!;
  }
}

/**
 * What the clients were told, per write: an acknowledged write (its HTTP answer arrived) must
 * be in the log; a write whose answer never came (the server died under it) may or may not be.
 * Each reader's follows, and each producer's posts and removals, come from one client at a
 * time, so that the last acknowledged write of an edge or an activity is its state, unless a
 * later one is unanswered.
 */
export class AcknowledgedWrites {
  /** Posted activities by id, with their feed, and whether a removal was acknowledged or is unanswered. */
  readonly posts = new Map<string, { feed: FeedId; removed: 'no' | 'acknowledged' | 'unanswered' }>();
  /** Per edge `reader>producer`: the state the last acknowledged follow or unfollow left, and whether a later one is unanswered. */
  readonly edges = new Map<string, { following: boolean; unanswered: boolean }>();
  /** Posts sent whose answer never came: they may be in the log or not. */
  unansweredPosts = 0;
  acknowledged = 0;

  edge(reader: FeedId, producer: FeedId) {
    const key = `${reader}>${producer}`;
    let edge = this.edges.get(key);
    if (!edge) this.edges.set(key, (edge = { following: false, unanswered: false }));
    return edge;
  }
}

export interface WorkloadShape {
  producers: FeedId[];
  readers: FeedId[];
  /** Concurrent clients; each owns the readers and producers whose index modulo this is its own. */
  clients: number;
}

/**
 * Concurrent posts, follows, unfollows, removals and reads, drawn from `choices`, until
 * `stop` resolves or the server stops answering; every answer is written down in `writes`.
 */
export async function runMixedWorkload(api: FeedClient, shape: WorkloadShape, writes: AcknowledgedWrites, choices: SeededChoices, stop: Promise<void>, label: string): Promise<{ sent: number; failed: number }> {
  let stopped = false;
  void stop.then(() => (stopped = true));
  let sent = 0;
  let failed = 0;
  let serial = 0;
  const client = async (index: number) => {
    const ownReaders = shape.readers.filter((_, i) => i % shape.clients === index);
    const ownProducers = shape.producers.filter((_, i) => i % shape.clients === index);
    while (!stopped) {
      const roll = choices.int(0, 99);
      sent++;
      try {
        if (roll < 45 && ownProducers.length) {
          const feed = choices.pick(ownProducers);
          writes.unansweredPosts++;
          const answer = await api.post(feed, { actor: feed.split(':')[1]!, verb: 'post', object: `${label}-${serial++}` });
          writes.unansweredPosts--;
          if (answer.status !== 201) throw new Error(`post answered ${answer.status}: ${JSON.stringify(answer.body)}`);
          writes.posts.set((answer.body as { id: string }).id, { feed, removed: 'no' });
          writes.acknowledged++;
        } else if (roll < 65 && ownReaders.length) {
          const reader = choices.pick(ownReaders);
          const producer = choices.pick(shape.producers);
          const edge = writes.edge(reader, producer);
          const follow = !edge.following || choices.int(0, 3) === 0;
          edge.unanswered = true;
          const answer = follow ? await api.follow(reader, producer) : await api.unfollow(reader, producer);
          if (answer.status !== 204) throw new Error(`${follow ? 'follow' : 'unfollow'} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
          edge.unanswered = false;
          edge.following = follow;
          writes.acknowledged++;
        } else if (roll < 75 && ownProducers.length) {
          const mine = [...writes.posts].filter(([, post]) => post.removed === 'no' && ownProducers.includes(post.feed));
          if (mine.length === 0) continue;
          const [id, post] = choices.pick(mine.slice(-50));
          post.removed = 'unanswered';
          const answer = await api.remove(post.feed, id);
          if (answer.status !== 204) throw new Error(`removal answered ${answer.status}: ${JSON.stringify(answer.body)}`);
          post.removed = 'acknowledged';
          writes.acknowledged++;
        } else {
          const answer = await api.page(choices.pick(shape.readers), 25);
          if (answer.status !== 200) throw new Error(`read answered ${answer.status}`);
        }
      } catch (error) {
        failed++;
        // The server died under the request: expected once the kill came, a failure before it.
        if (!stopped) throw error;
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: shape.clients }, (_, index) => client(index)));
  return { sent, failed };
}

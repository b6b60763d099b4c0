import type { Redis } from 'ioredis';
import { activityKey, encodeFanoutJob, FANOUT_QUEUE, feedKey, followersKey, SnowflakeIds } from './redis-design.js';
import { execPipeline, type FanoutEvent, type FanoutHost } from './redis-fanout.js';

/** The fields both systems store of a post. */
export interface RedisPost {
  id: number;
  feed: string;
  actor: string;
  verb: string;
  object: string;
  time: string;
}

/**
 * Home feeds as teams build them on Redis, after Mastodon's FeedManager: a post is stored
 * once and accepted as soon as its fan-out job is queued; fan-out workers (see
 * `redis-fanout.ts`) take jobs from the queue and write the post's id into every
 * follower's sorted set; a read takes the newest ids of the reader's set and MGETs their
 * bodies. Clients use the connections they are given, in turn.
 */
export class RedisHomeFeeds {
  private readonly ids = new SnowflakeIds();
  private clientTurn = 0;
  /** Jobs queued by {@link post}, and jobs the workers finished, successfully or not. */
  private queued = 0;
  private finished = 0;
  /** Timeline entries written, and when (on `performance.now()`) Redis acknowledged the last of them. */
  delivered = 0;
  lastDeliveryAt = 0;
  fanoutFailures = 0;
  firstFanoutFailure?: string;
  /** Why the workers stopped working, if they did. */
  private crashed?: string;

  constructor(
    private readonly clients: readonly Redis[],
    private readonly fanout: FanoutHost,
  ) {
    if (clients.length === 0) throw new Error('RedisHomeFeeds needs at least one client connection');
  }

  /** Client connections in turn: concurrent calls spread over them. */
  private client(): Redis {
    return this.clients[this.clientTurn++ % this.clients.length]!;
  }

  async follow(reader: string, producer: string): Promise<void> {
    await this.client().sadd(followersKey(producer), reader);
  }

  /** Many follows in one pipelined round trip: how a team imports a graph into Redis. */
  async followMany(edges: ReadonlyArray<readonly [reader: string, producer: string]>): Promise<void> {
    const pipeline = this.client().pipeline();
    for (const [reader, producer] of edges) pipeline.sadd(followersKey(producer), reader);
    await execPipeline(pipeline);
  }

  /** Stores the post once and queues its fan-out, in one round trip; returns it. */
  async post(producer: string, content: { actor: string; verb: string; object: string }): Promise<RedisPost> {
    const id = this.ids.next(Date.now());
    const post: RedisPost = { id, feed: `user:${producer}`, ...content, time: new Date(SnowflakeIds.timeOf(id)).toISOString() };
    await execPipeline(this.client().pipeline().set(activityKey(id), JSON.stringify(post)).lpush(FANOUT_QUEUE, encodeFanoutJob({ id, producer })));
    this.queued++;
    return post;
  }

  /** A reader's newest `limit` posts as the JSON page an API would send. */
  async readPage(reader: string, limit: number): Promise<string> {
    const bodies = await this.newestBodies(reader, limit);
    return `{"items":[${bodies.join(',')}]}`;
  }

  async newest(reader: string, limit: number): Promise<RedisPost[]> {
    return (await this.newestBodies(reader, limit)).map((body) => JSON.parse(body) as RedisPost);
  }

  private async newestBodies(reader: string, limit: number): Promise<string[]> {
    const redis = this.client();
    const ids = await redis.zrevrange(feedKey(reader), 0, limit - 1);
    if (ids.length === 0) return [];
    // A post whose body is gone (deleted) is left out of the page.
    return (await redis.mget(ids.map(activityKey))).filter((body): body is string => body !== null);
  }

  /** Whether a post has reached a reader's feed. */
  async inFeed(reader: string, id: number): Promise<boolean> {
    return (await this.client().zscore(feedKey(reader), String(id))) !== null;
  }

  async startWorkers(): Promise<void> {
    await this.fanout.start((event) => this.onFanout(event));
  }

  /** Waits until every queued job is done, then lets the workers go. */
  async stopWorkers(): Promise<void> {
    await this.drained();
    await this.fanout.stop();
  }

  /** Lets the workers go at once, whatever is queued: after a failure. */
  async abandonWorkers(): Promise<void> {
    await this.fanout.stop();
  }

  /** Resolves once every job queued so far has been carried out. */
  async drained(timeoutMs = 600_000): Promise<void> {
    const target = this.queued;
    const deadline = performance.now() + timeoutMs;
    while (this.finished < target) {
      if (this.crashed !== undefined) throw new Error(`fan-out stopped: ${this.crashed}`);
      if (performance.now() > deadline) throw new Error(`fan-out did not drain in ${timeoutMs} ms: ${this.finished} of ${target} jobs done`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  private onFanout(event: FanoutEvent): void {
    if (event.kind === 'delivered') {
      this.delivered += event.readers;
      this.lastDeliveryAt = Math.max(this.lastDeliveryAt, event.at - performance.timeOrigin);
      return;
    }
    if (event.kind === 'crashed') {
      this.crashed = event.message;
      return;
    }
    this.finished++;
    if (event.failure !== undefined) {
      this.fanoutFailures++;
      this.firstFanoutFailure ??= event.failure;
    }
  }
}

import type { ChainableCommander, Redis } from 'ioredis';
import {
  activityKey,
  decodeFanoutJob,
  encodeFanoutJob,
  FANOUT_QUEUE,
  FEED_KEEP,
  feedKey,
  FOLLOWERS_PER_PIPELINE,
  followersKey,
  SnowflakeIds,
  trimStopRank,
} from './redis-design.js';

/** How long an idle fan-out worker blocks on the queue before it looks whether to stop. */
const IDLE_POLL_SECONDS = 0.1;

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
 * once and accepted as soon as its fan-out job is queued; fan-out workers take jobs from
 * the queue, read the author's followers and, per {@link FOLLOWERS_PER_PIPELINE} followers,
 * pipeline a ZADD and a trim into each follower's sorted set; a read takes the newest ids
 * of the reader's set and MGETs their bodies.
 *
 * Clients use the connections they are given; each worker has a connection of its own, as
 * a blocking pop holds its connection.
 */
export class RedisHomeFeeds {
  private readonly ids = new SnowflakeIds();
  private clientTurn = 0;
  private stopping = false;
  private workers: Array<Promise<void>> = [];
  /** Jobs queued by {@link post} and finished by a worker, successfully or not. */
  private queued = 0;
  private finished = 0;
  /** Timeline entries written, and when the last of them was acknowledged by Redis. */
  delivered = 0;
  lastDeliveryAt = 0;
  fanoutFailures = 0;
  firstFanoutFailure?: string;

  constructor(
    private readonly clients: readonly Redis[],
    private readonly workerConnections: readonly Redis[],
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

  /** Stores the post once and queues its fan-out, in one round trip; returns its id. */
  async post(producer: string, content: { actor: string; verb: string; object: string }): Promise<RedisPost> {
    const id = this.ids.next(Date.now());
    const post: RedisPost = { id, feed: `user:${producer}`, ...content, time: new Date(SnowflakeIds.timeOf(id)).toISOString() };
    await exec(this.client().pipeline().set(activityKey(id), JSON.stringify(post)).lpush(FANOUT_QUEUE, encodeFanoutJob({ id, producer })));
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

  startWorkers(): void {
    this.stopping = false;
    this.workers = this.workerConnections.map((redis) => this.work(redis));
  }

  /** Waits until every queued job is done, then lets the workers go. */
  async stopWorkers(): Promise<void> {
    await this.drained();
    this.stopping = true;
    await Promise.all(this.workers);
    this.workers = [];
  }

  /** Resolves once every job queued so far has been carried out. */
  async drained(timeoutMs = 600_000): Promise<void> {
    const target = this.queued;
    const deadline = performance.now() + timeoutMs;
    while (this.finished < target) {
      if (performance.now() > deadline) throw new Error(`fan-out did not drain in ${timeoutMs} ms: ${this.finished} of ${target} jobs done`);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  private async work(redis: Redis): Promise<void> {
    while (!this.stopping) {
      const popped = await redis.brpop(FANOUT_QUEUE, IDLE_POLL_SECONDS);
      if (!popped) continue;
      try {
        await this.fanOut(redis, popped[1]);
      } catch (error) {
        // A failed job is counted and reported; the queue flows on.
        this.fanoutFailures++;
        this.firstFanoutFailure ??= (error as Error).message;
      }
      this.finished++;
    }
  }

  private async fanOut(redis: Redis, payload: string): Promise<void> {
    const job = decodeFanoutJob(payload);
    const followers = await redis.smembers(followersKey(job.producer));
    const stop = trimStopRank(FEED_KEEP);
    for (let start = 0; start < followers.length; start += FOLLOWERS_PER_PIPELINE) {
      const chunk = followers.slice(start, start + FOLLOWERS_PER_PIPELINE);
      const pipeline = redis.pipeline();
      for (const reader of chunk) pipeline.zadd(feedKey(reader), job.id, job.id).zremrangebyrank(feedKey(reader), 0, stop);
      await exec(pipeline);
      this.delivered += chunk.length;
      this.lastDeliveryAt = performance.now();
    }
  }
}

/** Runs a pipeline; a failed command fails the whole call. */
async function exec(pipeline: ChainableCommander): Promise<void> {
  const replies = await pipeline.exec();
  for (const [error] of replies ?? []) if (error) throw error;
}

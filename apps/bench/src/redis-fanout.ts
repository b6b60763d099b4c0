import { Worker } from 'node:worker_threads';
import type { ChainableCommander, Redis } from 'ioredis';
import { closeAll, openConnection } from './redis-connect.js';
import { decodeFanoutJob, FANOUT_QUEUE, FEED_KEEP, feedKey, FOLLOWERS_PER_PIPELINE, followersKey, trimStopRank, type RedisTarget } from './redis-design.js';

/** How long an idle fan-out worker blocks on the queue before it looks whether to stop. */
const IDLE_POLL_SECONDS = 0.1;

/**
 * What fan-out workers tell: entries written to readers' feeds (`at` in milliseconds on
 * {@link sharedClock}, when Redis acknowledged them), and each job done, failed or not.
 */
export type FanoutEvent = { kind: 'delivered'; readers: number; at: number } | { kind: 'job'; failure?: string } | { kind: 'crashed'; message: string };

/** A clock that threads share: `performance.now()` counts from each thread's own start. */
export const sharedClock = (): number => performance.timeOrigin + performance.now();

/**
 * Where the fan-out workers run. In the benchmark they run in a thread of their own, as a
 * job queue's workers run in processes of their own (Sidekiq beside Puma), so that they do
 * not share an event loop with the clients.
 */
export interface FanoutHost {
  start(report: (event: FanoutEvent) => void): Promise<void>;
  /** Lets the workers finish the job in hand and go; does nothing when they are not running. */
  stop(): Promise<void>;
}

/** Runs a pipeline; a failed command fails the whole call. */
export async function execPipeline(pipeline: ChainableCommander): Promise<void> {
  const replies = await pipeline.exec();
  for (const [error] of replies ?? []) if (error) throw error;
}

/**
 * One fan-out job: read the author's followers, then per {@link FOLLOWERS_PER_PIPELINE} of
 * them pipeline a ZADD of the post's id and a trim to {@link FEED_KEEP} into each one's feed.
 */
export async function fanOutJob(redis: Redis, payload: string, report: (event: FanoutEvent) => void): Promise<void> {
  const job = decodeFanoutJob(payload);
  const followers = await redis.smembers(followersKey(job.producer));
  const stop = trimStopRank(FEED_KEEP);
  for (let start = 0; start < followers.length; start += FOLLOWERS_PER_PIPELINE) {
    const chunk = followers.slice(start, start + FOLLOWERS_PER_PIPELINE);
    const pipeline = redis.pipeline();
    for (const reader of chunk) pipeline.zadd(feedKey(reader), job.id, job.id).zremrangebyrank(feedKey(reader), 0, stop);
    await execPipeline(pipeline);
    report({ kind: 'delivered', readers: chunk.length, at: sharedClock() });
  }
}

/** Workers that each pop jobs on a connection of their own (a blocking pop holds it) until stopped. */
export class FanoutLoops {
  private stopping = false;
  private loops: Array<Promise<void>> = [];

  constructor(private readonly connections: readonly Redis[]) {}

  start(report: (event: FanoutEvent) => void): void {
    this.stopping = false;
    this.loops = this.connections.map((redis) => this.work(redis, report));
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.loops);
    this.loops = [];
  }

  private async work(redis: Redis, report: (event: FanoutEvent) => void): Promise<void> {
    while (!this.stopping) {
      const popped = await redis.brpop(FANOUT_QUEUE, IDLE_POLL_SECONDS);
      if (!popped) continue;
      try {
        await fanOutJob(redis, popped[1], report);
        report({ kind: 'job' });
      } catch (error) {
        // A failed job is counted and reported; the queue flows on.
        report({ kind: 'job', failure: (error as Error).message });
      }
    }
  }
}

/** Fan-out workers in this thread, on connections the caller owns. */
export function fanoutInThisThread(connections: readonly Redis[]): FanoutHost {
  const loops = new FanoutLoops(connections);
  return {
    start: async (report) => loops.start(report),
    stop: () => loops.stop(),
  };
}

/** What the fan-out thread is started with. */
export interface FanoutThreadData {
  target: RedisTarget;
  workers: number;
}

/** Messages from the fan-out thread. */
export type FanoutThreadMessage = FanoutEvent | { kind: 'ready' } | { kind: 'stopped' } | { kind: 'failed'; message: string };

/** Fan-out workers in a worker thread of their own, with their own connections. */
export function fanoutInWorkerThread(target: RedisTarget, workers: number): FanoutHost {
  let running: { thread: Worker; exited: Promise<void> } | undefined;
  return {
    start: (report) =>
      new Promise<void>((resolve, reject) => {
        const data: FanoutThreadData = { target, workers };
        const thread = new Worker(new URL('./redis-fanout-thread.js', import.meta.url), { workerData: data });
        let started = false;
        running = { thread, exited: new Promise<void>((done) => thread.once('exit', () => done())) };
        thread.on('message', (message: FanoutThreadMessage) => {
          if (message.kind === 'ready') {
            started = true;
            resolve();
          } else if (message.kind === 'failed') reject(new Error(`the fan-out thread could not connect: ${message.message}`));
          else if (message.kind !== 'stopped') report(message);
        });
        thread.once('error', (error) => (started ? report({ kind: 'crashed', message: error.message }) : reject(error)));
        // Exiting before it is told to stop leaves jobs undone: waiting for them would hang.
        thread.once('exit', (code) => {
          if (running?.thread === thread) report({ kind: 'crashed', message: `the fan-out thread exited with code ${code}` });
        });
      }),
    stop: async () => {
      if (!running) return;
      const { thread, exited } = running;
      running = undefined;
      thread.postMessage('stop');
      // The thread exits once its loops are done: each waits at most one idle poll.
      const timeout = setTimeout(() => void thread.terminate(), 10_000);
      await exited;
      clearTimeout(timeout);
    },
  };
}

/** The fan-out thread's body: connect, report ready, work until told to stop. */
export async function serveFanoutThread(data: FanoutThreadData, port: { postMessage(message: FanoutThreadMessage): void; once(event: 'message', listener: () => void): void; close(): void }): Promise<void> {
  const connections = Array.from({ length: data.workers }, (_, i) => openConnection(data.target, `feedmill-bench-fanout-${i}`));
  try {
    await Promise.all(connections.map((redis) => redis.connect()));
  } catch (error) {
    closeAll(connections);
    port.postMessage({ kind: 'failed', message: (error as Error).message });
    port.close();
    return;
  }
  const loops = new FanoutLoops(connections);
  loops.start((event) => port.postMessage(event));
  port.once('message', () => {
    void loops.stop().then(() => {
      closeAll(connections);
      port.postMessage({ kind: 'stopped' });
      port.close();
    });
  });
  port.postMessage({ kind: 'ready' });
}

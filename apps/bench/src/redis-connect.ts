import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';
import { Redis } from 'ioredis';
import type { RedisTarget } from './redis-design.js';

/** How long a Redis that is not there may take to say so. */
const CONNECT_TIMEOUT_MS = 1_500;

/**
 * A connection that fails fast instead of retrying: the benchmark reports a missing Redis
 * and goes on without it, and a Redis that goes away mid-run fails that run's baseline.
 */
export function openConnection(target: RedisTarget, name: string): Redis {
  const redis = new Redis({
    host: target.host,
    port: target.port,
    db: target.db,
    ...(target.username ? { username: target.username } : {}),
    ...(target.password ? { password: target.password } : {}),
    ...(target.tls ? { tls: {} } : {}),
    connectionName: name,
    lazyConnect: true,
    connectTimeout: CONNECT_TIMEOUT_MS,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  // Failures surface as rejected commands; without a listener ioredis prints each one.
  redis.on('error', () => undefined);
  return redis;
}

/** Connects, or says in one line why not. */
export async function connectOrExplain(target: RedisTarget, name: string): Promise<{ redis: Redis } | { reason: string }> {
  const explain = (why: string) => ({ reason: `no Redis answered at ${target.shown}: ${why}` });
  // Where nothing listens, a plain socket says so at once, and in the system's words.
  const refused = await tcpRefusal(target.host, target.port);
  if (refused !== undefined) return explain(refused);
  const redis = openConnection(target, name);
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => (lastError = error));
  try {
    await redis.connect();
    await redis.ping();
    return { redis };
  } catch (error) {
    redis.disconnect();
    // ioredis rejects with "Connection is closed." and reports the cause as an event.
    return explain((lastError ?? (error as Error)).message);
  }
}

/** Why a TCP connection to host:port fails, or undefined when it opens. */
function tcpRefusal(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: CONNECT_TIMEOUT_MS });
    const done = (why: string | undefined) => {
      socket.destroy();
      resolve(why);
    };
    socket.once('connect', () => done(undefined));
    socket.once('timeout', () => done(`no answer in ${CONNECT_TIMEOUT_MS} ms`));
    socket.once('error', (error) => done(error.message));
  });
}

/** Drops the connections, whatever state they are in. */
export function closeAll(connections: Iterable<Redis>): void {
  for (const redis of connections) redis.disconnect();
}

const LOCK_KEY = 'feedmill:bench:lock';
const LOCK_TTL_SECONDS = 120;

/**
 * Holds one Redis database for one run: the benchmark flushes the database it measures,
 * and two runs at once on one machine would flush each other's data and share its memory
 * figure. The lock expires on its own if its run dies, and is renewed while the run lives.
 */
export class RedisRunLock {
  private readonly token = randomUUID();
  private renewal?: NodeJS.Timeout;

  private constructor(private readonly redis: Redis) {}

  /**
   * Waits up to `waitMs` for the database, then empties it and holds it. Returns undefined
   * when another run still holds it.
   */
  static async flushAndHold(redis: Redis, waitMs: number): Promise<RedisRunLock | undefined> {
    const lock = new RedisRunLock(redis);
    const deadline = Date.now() + waitMs;
    for (;;) {
      // Taking the lock and flushing are one step, so no other run slips in between.
      const taken = await redis.eval(
        `if redis.call('exists', KEYS[1]) == 1 then return 0 end
         redis.call('flushdb')
         redis.call('set', KEYS[1], ARGV[1], 'EX', ARGV[2])
         return 1`,
        1,
        LOCK_KEY,
        lock.token,
        LOCK_TTL_SECONDS,
      );
      if (taken === 1) break;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
    lock.renewal = setInterval(() => void lock.renew().catch(() => undefined), (LOCK_TTL_SECONDS * 1000) / 4);
    lock.renewal.unref();
    return lock;
  }

  /** The lock's own key, which {@link flushAndHold} leaves in the database: not a measured key. */
  static readonly key = LOCK_KEY;

  private async renew(): Promise<void> {
    await this.redis.eval(`if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('expire', KEYS[1], ARGV[2]) end return 0`, 1, LOCK_KEY, this.token, LOCK_TTL_SECONDS);
  }

  /** Empties the database (the run's data is of no use afterwards) and lets the next run in. */
  async flushAndRelease(): Promise<void> {
    clearInterval(this.renewal);
    await this.redis.eval(`if redis.call('get', KEYS[1]) == ARGV[1] then redis.call('flushdb') return 1 end return 0`, 1, LOCK_KEY, this.token);
  }
}

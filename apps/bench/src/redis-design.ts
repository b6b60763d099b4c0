/**
 * The home-feed design teams hand-roll on Redis (Mastodon's FeedManager, Misskey): the
 * pure parts, so that they can be tested without a server.
 *
 * - `followers:<producer>`: a set of reader names.
 * - `activity:<id>`: a post's JSON, stored once.
 * - `feed:<reader>`: a sorted set of post ids scored by the id itself, trimmed to the
 *   newest {@link FEED_KEEP} after every insert.
 * - `fanout:jobs`: the queue of posts waiting for fan-out, drained by a few workers.
 */

/** Entries kept per home feed: the same cap as feedmill's timelines in the benchmark. */
export const FEED_KEEP = 800;
/** Followers written per pipeline by a fan-out worker, as Mastodon batches its follower query. */
export const FOLLOWERS_PER_PIPELINE = 1000;
export const FANOUT_QUEUE = 'fanout:jobs';

export const followersKey = (producer: string): string => `followers:${producer}`;
export const feedKey = (reader: string): string => `feed:${reader}`;
export const activityKey = (id: number | string): string => `activity:${id}`;

/** ZREMRANGEBYRANK's stop rank that keeps the newest `keep` members of a sorted set. */
export function trimStopRank(keep: number): number {
  return -(keep + 1);
}

/**
 * Snowflake ids, as Mastodon gives its statuses: milliseconds since an epoch, then a
 * sequence within the millisecond. The id is also the feed score, and a score is a double,
 * so the id must stay an exact integer below 2^53: 41 bits of milliseconds (69 years from
 * the epoch) and 12 bits of sequence (4,096 ids per millisecond). Ids only grow, even if
 * the clock steps back: a millisecond that runs out of sequence borrows the next.
 */
export class SnowflakeIds {
  static readonly EPOCH_MS = Date.UTC(2024, 0, 1);
  static readonly SEQUENCE_BITS = 12;
  private static readonly PER_MS = 2 ** SnowflakeIds.SEQUENCE_BITS;
  private lastMs = -1;
  private sequence = 0;

  /** The next id, for a post made at `nowMs` (epoch milliseconds). */
  next(nowMs: number): number {
    const ms = Math.max(0, Math.floor(nowMs) - SnowflakeIds.EPOCH_MS);
    if (ms > this.lastMs) {
      this.lastMs = ms;
      this.sequence = 0;
    } else if (++this.sequence === SnowflakeIds.PER_MS) {
      this.lastMs++;
      this.sequence = 0;
    }
    return this.lastMs * SnowflakeIds.PER_MS + this.sequence;
  }

  /** The epoch milliseconds an id was made at. */
  static timeOf(id: number): number {
    return Math.floor(id / SnowflakeIds.PER_MS) + SnowflakeIds.EPOCH_MS;
  }
}

/** A fan-out job: which post, and whose followers receive it. */
export interface FanoutJob {
  id: number;
  producer: string;
}

export function encodeFanoutJob(job: FanoutJob): string {
  return `${job.id} ${job.producer}`;
}

export function decodeFanoutJob(payload: string): FanoutJob {
  const space = payload.indexOf(' ');
  const id = Number(payload.slice(0, space));
  if (space <= 0 || !Number.isSafeInteger(id) || space === payload.length - 1) throw new Error(`not a fan-out job: ${JSON.stringify(payload)}`);
  return { id, producer: payload.slice(space + 1) };
}

/** The database the baseline flushes and uses: the one REDIS_URL names, or a dedicated one. */
export const DEDICATED_DB = 15;

export interface RedisTarget {
  /** The URL as given, for the report (credentials masked). */
  shown: string;
  host: string;
  port: number;
  db: number;
  username?: string;
  password?: string;
  tls: boolean;
}

/** Reads `redis://[user:password@]host[:port][/db]` (or `rediss://`); no db means {@link DEDICATED_DB}. */
export function redisTarget(url: string): RedisTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`REDIS_URL must be a redis:// URL, not ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new Error(`REDIS_URL must start with redis:// or rediss://, not ${parsed.protocol}//`);
  const path = parsed.pathname.replace(/^\//, '');
  const db = path === '' ? DEDICATED_DB : Number(path);
  if (!Number.isInteger(db) || db < 0) throw new Error(`REDIS_URL's path must be a database number, not ${JSON.stringify(parsed.pathname)}`);
  const masked = new URL(parsed.href);
  if (masked.password) masked.password = '***';
  return {
    shown: masked.href,
    host: parsed.hostname.replace(/^\[|\]$/g, '') || '127.0.0.1',
    port: parsed.port === '' ? 6379 : Number(parsed.port),
    db,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    tls: parsed.protocol === 'rediss:',
  };
}

/** Whether the server runs on this machine, so that its CPU can be sampled by pid. */
export function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** The `key:value` lines of a reply to `INFO`. */
export function parseInfo(text: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0 && !line.startsWith('#')) fields[line.slice(0, colon)] = line.slice(colon + 1).trim();
  }
  return fields;
}

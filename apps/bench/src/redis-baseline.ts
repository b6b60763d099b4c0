import { loadavg } from 'node:os';
import type { Redis } from 'ioredis';
import { runClientLoad, type ClientLoadResult } from './client-load.js';
import { mergeLoads } from './http-load.js';
import { CpuMeter, round } from './deployment.js';
import { Latencies, type LatencySummary } from './latency.js';
import { compareNewest, type NewestCheck, type NewestPage } from './newest-check.js';
import type { Profile } from './profiles.js';
import { progressBar } from './progress.js';
import { closeAll, connectOrExplain, openConnection, RedisRunLock } from './redis-connect.js';
import { activityKey, FEED_KEEP, FOLLOWERS_PER_PIPELINE, feedKey, isLoopback, parseInfo, type RedisTarget } from './redis-design.js';
import { fanoutInWorkerThread } from './redis-fanout.js';
import { RedisHomeFeeds } from './redis-home-feeds.js';
import type { ReplayedPost } from './warm-posts.js';
import { importBatches, IMPORT_REQUESTS_IN_FLIGHT, Workload, type MixedPlan } from './workload.js';

/** Connections the clients share: Redis serves one command at a time, so a few suffice. */
const CLIENT_CONNECTIONS = 4;
/** Fan-out workers, each draining the queue on a connection of its own, in a thread beside the clients' (Sidekiq runs 5 by default). */
const FANOUT_WORKERS = 4;
/** How long to wait for another run that holds the database. */
const LOCK_WAIT_MS = 5 * 60_000;

export type RedisBaselineResults =
  | { available: false; url: string; db: number; reason: string }
  | {
      available: true;
      url: string;
      db: number;
      redisVersion: string;
      /** Whether this Redis writes anything to disk: append-only file, and RDB snapshot rules (null where CONFIG is refused). */
      persistence: { aof: boolean; rdbSave: string | null };
      design: { keepPerFeed: number; pageSize: number; followersPerPipeline: number; fanoutWorkers: number; clientConnections: number; clients: number };
      loading: { edges: number; edgesPerSecond: number; edgeLatencyMs: LatencySummary };
      warm: { posts: number; postsPerSecond: number; postLatencyMs: LatencySummary; deliveries: number; seconds: number; deliveriesPerSecond: number };
      mixed: { seconds: number; postsPerSecond: number; postLatencyMs: LatencySummary; readsPerSecond: number; readLatencyMs: LatencySummary };
      postToVisibleMs: LatencySummary;
      /** The machine's 1-minute load average as the mixed phase began. */
      mixedLoadAverage: number;
      /** Per stored entry with the post bodies left out, as feedmill's figure leaves its activities out. */
      memory: { usedMemoryBefore: number; usedMemoryAfter: number; entries: number; postBodies: number; bytesPerTimelineEntry: number };
      cpu: { redisServer: { meanCores: number; maxCores: number; samples: number } | null; benchProcess: { meanCores: number; maxCores: number; samples: number } };
      check: NewestCheck;
      failures: { calls: number; fanoutJobs: number; first?: string };
      throughput: { mixed: Array<Record<string, number>> };
    };

/** What the report's charts need beyond the figures. */
export interface RedisSamples {
  read: number[];
}

export interface RedisBaselineInput {
  target: RedisTarget;
  profile: Profile;
  seed: number;
  /** The warm-up posts in feedmill's timeline order. */
  warmPosts: readonly ReplayedPost[];
  /** The mixed phase's reads and posts, as feedmill's readers and posters made them. */
  plan: MixedPlan;
  pageSize: number;
  /** feedmill's newest entries of the sampled readers after the warm-up, to compare with. */
  check: { readers: readonly string[]; newest: number; feedmill: ReadonlyMap<string, NewestPage> };
  say: (line: string) => void;
}

/**
 * The Redis home-feed baseline, phase by phase as feedmill's: follow edges, warm-up posts
 * until every entry is in Redis, the check against feedmill's timelines, then the mixed
 * phase with the same clients, duration, mix and draws. Returns why not when no Redis
 * answers or another run holds its database.
 */
export async function runRedisBaseline(input: RedisBaselineInput): Promise<{ results: RedisBaselineResults; samples: RedisSamples }> {
  const { target, profile, say } = input;
  const none = { read: [] };
  const connected = await connectOrExplain(target, 'feedmill-bench-admin');
  if ('reason' in connected) return { results: { available: false, url: target.shown, db: target.db, reason: connected.reason }, samples: none };
  const admin = connected.redis;
  const connections: Redis[] = [admin];
  let lock: RedisRunLock | undefined;
  let feeds: RedisHomeFeeds | undefined;
  try {
    lock = await RedisRunLock.flushAndHold(admin, LOCK_WAIT_MS);
    if (lock) say(`Redis baseline: database ${target.db} of ${target.shown} flushed and held for this run`);
    else {
      const reason = `another benchmark run held database ${target.db} of ${target.shown} for ${LOCK_WAIT_MS / 60_000} minutes`;
      return { results: { available: false, url: target.shown, db: target.db, reason }, samples: none };
    }
    const server = parseInfo(await admin.info('server'));
    const persistence = { aof: parseInfo(await admin.info('persistence'))['aof_enabled'] === '1', rdbSave: await rdbSaveRules(admin) };
    const clients = Array.from({ length: CLIENT_CONNECTIONS }, (_, i) => openConnection(target, `feedmill-bench-client-${i}`));
    connections.push(...clients);
    await Promise.all(clients.map((redis) => redis.connect()));
    feeds = new RedisHomeFeeds(clients, fanoutInWorkerThread(target, FANOUT_WORKERS));
    const measured = await measure(feeds, admin, input, server['process_id'] !== undefined && isLoopback(target.host) ? Number(server['process_id']) : undefined);
    return {
      results: {
        available: true,
        url: target.shown,
        db: target.db,
        redisVersion: server['redis_version'] ?? 'unknown',
        persistence,
        design: { keepPerFeed: FEED_KEEP, pageSize: input.pageSize, followersPerPipeline: FOLLOWERS_PER_PIPELINE, fanoutWorkers: FANOUT_WORKERS, clientConnections: CLIENT_CONNECTIONS, clients: profile.mixedReaders + profile.mixedPosters },
        ...measured.results,
      },
      samples: measured.samples,
    };
  } finally {
    await feeds?.abandonWorkers();
    await lock?.flushAndRelease().catch(() => undefined);
    closeAll(connections);
  }
}

async function measure(feeds: RedisHomeFeeds, admin: Redis, input: RedisBaselineInput, redisPid: number | undefined) {
  const { profile, say } = input;
  // The same seed as feedmill's workload: the same graph, and the same sequence of draws.
  const workload = new Workload(profile, input.seed);
  const empty = new Latencies();
  const byKind = (run: ClientLoadResult, kind: string) => run.byKind[kind] ?? { ok: 0, failed: 0, latency: empty };

  // 1. The social graph, imported in batches as feedmill's is.
  const batches = importBatches(workload.edges);
  let bar = progressBar('Redis: follows', batches.length);
  let batch = 0;
  const follows = await runClientLoad({
    clients: IMPORT_REQUESTS_IN_FLIGHT,
    amount: batches.length,
    next: () => {
      const edges = batches[batch++]!.map(([reader, producer]) => [`r${reader}`, `p${producer}`] as const);
      return { kind: 'follow', run: () => feeds.followMany(edges) };
    },
    onProgress: (done) => bar.update(done),
  });
  bar.stop();

  // 2. History: feedmill's warm-up posts in its order, until every entry is in Redis.
  const usedMemoryBefore = await usedMemory(admin);
  await feeds.startWorkers();
  bar = progressBar('Redis: warm-up posts', input.warmPosts.length);
  let next = 0;
  const fanoutStarted = performance.now();
  const warm = await runClientLoad({
    clients: profile.connections,
    amount: input.warmPosts.length,
    next: () => {
      const post = input.warmPosts[next++];
      return post && { kind: 'post', run: () => feeds.post(post.producer, { actor: post.actor, verb: post.verb, object: post.object }) };
    },
    onProgress: (done) => bar.update(done),
  });
  bar.stop();
  await feeds.drained();
  const deliveries = feeds.delivered;
  // Until the last entry was acknowledged by Redis: every post is then visible.
  const fanoutSeconds = ((deliveries > 0 ? feeds.lastDeliveryAt : performance.now()) - fanoutStarted) / 1000;
  say(`Redis fan-out delivered ${deliveries} timeline entries in ${round(fanoutSeconds, 2)} s`);
  const usedMemoryAfter = await usedMemory(admin);
  const entries = await countEntries(admin, workload.readers.length);
  const postBodies = await postBodiesMemory(admin, input.warmPosts.length);

  // 3. The same timelines as feedmill's, entry for entry.
  const redisNewest = new Map<string, NewestPage>();
  for (const reader of input.check.readers) redisNewest.set(reader, (await feeds.newest(reader, input.check.newest)).map(({ actor, object }) => ({ actor, object })));
  const check = compareNewest(input.check.readers, input.check.newest, input.check.feedmill, redisNewest);

  // 4. The mixed phase.
  const mixedLoadAverage = round(loadavg()[0]!, 2);
  const serverCpu = redisPid === undefined ? undefined : new CpuMeter();
  serverCpu?.start(() => [redisPid!]);
  const benchCpu = new CpuMeter();
  benchCpu.start(() => [process.pid]);
  let mixedOver = false;
  const probes = postToVisible(feeds, workload, profile.probes, () => mixedOver);
  bar = progressBar(`Redis: mixed: ${profile.mixedReaders} readers, ${profile.mixedPostsPerSecond} posts/s for ${profile.mixedSeconds}s`, profile.mixedSeconds);
  const mixedStarted = performance.now();
  const ticker = setInterval(() => bar.update(Math.round((performance.now() - mixedStarted) / 1000)), 1000);
  const { reads, posts } = input.plan;
  let read = 0;
  let posted = 0;
  const mixedRuns = await Promise.all([
    runClientLoad({
      clients: profile.mixedReaders,
      seconds: profile.mixedSeconds,
      next: () => {
        const reader = `r${reads[read++ % reads.length]!}`;
        return { kind: 'read', run: () => feeds.readPage(reader, input.pageSize) };
      },
    }),
    runClientLoad({
      clients: profile.mixedPosters,
      seconds: profile.mixedSeconds,
      pace: profile.mixedPostsPerSecond,
      next: () => {
        const { producer, object } = posts[posted++ % posts.length]!;
        return { kind: 'post', run: () => feeds.post(`p${producer}`, { actor: `p${producer}`, verb: 'post', object }) };
      },
    }),
  ]);
  const mixed = { ...mergeLoads(mixedRuns), ...firstOf(...mixedRuns.map((run) => run.firstError)) };
  mixedOver = true;
  clearInterval(ticker);
  bar.stop();
  const visible = await probes;
  const cpu = { redisServer: serverCpu?.stop() ?? null, benchProcess: benchCpu.stop() };
  await feeds.stopWorkers();

  const rate = (count: number, seconds: number) => Math.round(count / seconds);
  return {
    results: {
      loading: { edges: workload.edges.length, edgesPerSecond: rate(workload.edges.length, follows.seconds), edgeLatencyMs: byKind(follows, 'follow').latency.summary() },
      warm: {
        posts: input.warmPosts.length,
        postsPerSecond: rate(byKind(warm, 'post').ok, warm.seconds),
        postLatencyMs: byKind(warm, 'post').latency.summary(),
        deliveries,
        seconds: round(fanoutSeconds, 2),
        deliveriesPerSecond: rate(deliveries, fanoutSeconds),
      },
      mixed: {
        seconds: round(mixed.seconds, 2),
        postsPerSecond: rate(byKind(mixed, 'post').ok, mixed.seconds),
        postLatencyMs: byKind(mixed, 'post').latency.summary(),
        readsPerSecond: rate(byKind(mixed, 'read').ok, mixed.seconds),
        readLatencyMs: byKind(mixed, 'read').latency.summary(),
      },
      postToVisibleMs: visible.summary(),
      mixedLoadAverage,
      memory: { usedMemoryBefore, usedMemoryAfter, entries, postBodies, bytesPerTimelineEntry: round((usedMemoryAfter - usedMemoryBefore - postBodies) / Math.max(1, entries), 1) },
      cpu,
      check,
      failures: {
        calls: follows.errors + warm.errors + mixed.errors,
        fanoutJobs: feeds.fanoutFailures,
        ...firstOf(follows.firstError, warm.firstError, mixed.first, feeds.firstFanoutFailure),
      },
      throughput: { mixed: mixed.perSecond },
    },
    samples: { read: byKind(mixed, 'read').latency.samples() },
  };
}

function firstOf(...messages: Array<string | undefined>): { first?: string } {
  const first = messages.find((m) => m !== undefined);
  return first === undefined ? {} : { first };
}

/**
 * Time from a post's acceptance to its id being in one follower's feed, measured as
 * feedmill's probes measure it: one probe at a time beside the load, polled every
 * millisecond, 50 ms apart.
 */
async function postToVisible(feeds: RedisHomeFeeds, workload: Workload, count: number, stop: () => boolean): Promise<Latencies> {
  const latencies = new Latencies();
  for (let probe = 0; probe < count && !stop(); probe++) {
    const probed = workload.nextProbe();
    if (!probed) continue;
    const { producer } = probed;
    const reader = `r${probed.reader}`;
    const posted = await feeds.post(`p${producer}`, { actor: `p${producer}`, verb: 'probe', object: `probe:${probe}` });
    const accepted = performance.now();
    while (!(await feeds.inFeed(reader, posted.id))) {
      if (performance.now() - accepted > 60_000) throw new Error(`Redis probe ${posted.id} never reached ${reader}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    latencies.recordMs(performance.now() - accepted);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return latencies;
}

async function rdbSaveRules(admin: Redis): Promise<string | null> {
  try {
    const reply = (await admin.config('GET', 'save')) as string[];
    return reply[1] ?? null;
  } catch {
    return null;
  }
}

async function usedMemory(admin: Redis): Promise<number> {
  return Number(parseInfo(await admin.info('memory'))['used_memory']);
}

/**
 * What the post bodies take: `MEMORY USAGE` of a sample of them, times their number
 * (every post's body is kept, as feedmill's log keeps every activity).
 */
async function postBodiesMemory(admin: Redis, bodies: number): Promise<number> {
  const [, sample] = await admin.scan('0', 'MATCH', activityKey('*'), 'COUNT', 2_000);
  if (sample.length === 0) return 0;
  const pipeline = admin.pipeline();
  for (const key of sample) pipeline.call('MEMORY', 'USAGE', key);
  const sizes = ((await pipeline.exec()) ?? []).map(([error, bytes]) => (error ? 0 : Number(bytes)));
  return Math.round((sizes.reduce((sum, bytes) => sum + bytes, 0) / sizes.length) * bodies);
}

/** Entries stored in every reader's feed (after trimming), counted in pipelined batches. */
async function countEntries(admin: Redis, readers: number): Promise<number> {
  let total = 0;
  for (let start = 0; start < readers; start += 10_000) {
    const pipeline = admin.pipeline();
    for (let r = start; r < Math.min(readers, start + 10_000); r++) pipeline.zcard(feedKey(`r${r}`));
    for (const [error, count] of (await pipeline.exec()) ?? []) {
      if (error) throw error;
      total += count as number;
    }
  }
  return total;
}

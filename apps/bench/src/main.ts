import 'reflect-metadata';
import { cpus, totalmem } from 'node:os';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { decodeFeedEvents, timelineModels, type TimelineModel } from '@feedmill/contracts';
import { readAllEvents } from '@feedmill/harness';
import { BenchDeployment, round, type Mode } from './deployment.js';
import { loadGraphAndHistory, PAGE_SIZE, runMixedPhase } from './feedmill-phases.js';
import { HttpDriver } from './http-driver.js';
import { measureInProcess } from './in-process.js';
import { Latencies } from './latency.js';
import { feedmillNewest, sampleReaders } from './newest-check.js';
import { profiles, type Profile } from './profiles.js';
import { say } from './progress.js';
import { runRedisBaseline, type RedisBaselineResults, type RedisSamples } from './redis-baseline.js';
import { redisTarget } from './redis-design.js';
import { writeReport, type BenchResults } from './report.js';
import { totalWork, workByPhase } from './timeline-work.js';
import { versusRedis } from './versus-redis.js';
import { postsInTimelineOrder } from './warm-posts.js';
import { drawMixedPlan, drawPosts, IMPORT_BATCH, Workload } from './workload.js';

/** Readers whose newest entries must be the same on feedmill and on Redis, and how many entries. */
const CHECKED_READERS = 200;
const CHECKED_NEWEST = 20;

const { values } = parseArgs({
  options: {
    profile: { type: 'string', default: 'small' },
    mode: { type: 'string', default: 'standalone' },
    out: { type: 'string' },
    seed: { type: 'string', default: '42' },
    model: { type: 'string', default: 'ring' },
    'mixed-readers': { type: 'string' },
    'mixed-posters': { type: 'string' },
    'mixed-posts-per-second': { type: 'string' },
    'http-workers': { type: 'string' },
    'mixed-seconds': { type: 'string' },
  },
});

const chosen: Profile | undefined = profiles[values.profile as Profile['name']];
if (!chosen) throw new Error(`--profile must be one of ${Object.keys(profiles).join(', ')}`);

/** A count option: its value, or the profile's when it is not given. */
type CountOption = 'mixed-readers' | 'mixed-posters' | 'mixed-posts-per-second' | 'mixed-seconds' | 'http-workers';
function countOption(name: CountOption, otherwise: number): number {
  const value = values[name] === undefined ? otherwise : Number(values[name]);
  if (!Number.isInteger(value) || value < 0) throw new Error(`--${name} must be a whole number, 0 or more`);
  return value;
}
/** The options of this run that change its figures, as given on the command line. */
function optionsGiven(names: CountOption[]): string {
  return names.map((name) => (values[name] === undefined ? '' : ` --${name} ${values[name]}`)).join('');
}
const profile: Profile = {
  ...chosen,
  mixedReaders: countOption('mixed-readers', chosen.mixedReaders),
  mixedPosters: countOption('mixed-posters', chosen.mixedPosters),
  mixedPostsPerSecond: countOption('mixed-posts-per-second', chosen.mixedPostsPerSecond),
  mixedSeconds: countOption('mixed-seconds', chosen.mixedSeconds),
};
if (profile.mixedReaders === 0 || profile.mixedPosters === 0 || profile.mixedPostsPerSecond === 0 || profile.mixedSeconds === 0) throw new Error('the mixed phase needs readers, posters, posts per second and seconds');
/** The standalone's HTTP workers, when given; else the standalone's default. */
const httpWorkers = values['http-workers'] === undefined ? undefined : countOption('http-workers', 0);
if (values.mode !== 'standalone' && values.mode !== 'cluster') throw new Error('--mode must be standalone or cluster');
const mode = values.mode as Mode;
const model = values.model as TimelineModel;
if (!(timelineModels as readonly string[]).includes(model)) throw new Error(`--model must be one of ${timelineModels.join(', ')}`);
const seed = Number(values.seed);
const redis = redisTarget(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
const outDir = resolve(values.out ?? `bench-results/${profile.name}-${mode}-${values.model}`);
Logger.overrideLogger(['error', 'warn']);

const startedAt = new Date();
say(`feedmill benchmark: profile ${profile.name}, ${mode}, ${model} timelines, seed ${seed} -> ${outDir}`);
const workload = new Workload(profile, seed);
say(`workload: ${workload.readers.length} readers, ${workload.producers.length} producers, ${workload.edges.length} follow edges, top producer has ${workload.followerCountSummary().max} followers`);

const deployment = new BenchDeployment(mode, model, httpWorkers === undefined ? {} : { HTTP_WORKERS: String(httpWorkers) });
const http = new HttpDriver(() => deployment.baseUrl);
say(`HTTP load from ${http.name}${http.name === 'wrk' ? '' : ' (wrk is not installed: autocannon takes about a core of this machine from the system under test)'}`);
try {
  await deployment.start();
  say(`${mode} deployment ready at ${deployment.baseUrl}`);

  // 1. The social graph, imported through the bulk endpoint; 2. history: posts only, until fan-out delivered all of them.
  const underLoad = { deployment, http, workload, profile };
  const { follows, followsHead, followsSettledSeconds, warm, warmHead, fanoutSeconds, deliveries, work: workBeforeMixed } = await loadGraphAndHistory(underLoad, drawPosts(workload, profile.warmPosts));
  // What the Redis baseline's timelines must equal, entry for entry, after the same posts.
  const checkedReaders = sampleReaders(CHECKED_READERS, profile.readers).map((i) => `r${i}`);
  const feedmillPages = await feedmillNewest(deployment.baseUrl, checkedReaders, CHECKED_NEWEST);

  // 3. The mixed phase: readers and posters at once, with post-to-visible probes and CPU sampling beside them.
  const plan = drawMixedPlan(workload);
  const { load: mixed, postToVisible, cpu: cpuUse, loadAverage: mixedLoadAverage, work: mixedWork } = await runMixedPhase(underLoad, plan, profile.probes);

  // 4. Rebuild: restart on the same log and time until every timeline is back.
  say('restarting to measure the rebuild');
  await deployment.stop();
  const rebuildStarted = performance.now();
  await deployment.start();
  const events = await deployment.settled();
  const rebuildSeconds = (performance.now() - rebuildStarted) / 1000;
  say(`rebuilt ${events} events in ${round(rebuildSeconds, 2)} s`);
  await deployment.stop();

  // 5. In-process figures and the naive baseline, from the same log.
  const log = await deployment.openLog();
  const warmPosts = postsInTimelineOrder(decodeFeedEvents(await readAllEvents(log)), followsHead, warmHead);
  const inProcess = await measureInProcess(log, workload, deployment.natsUrl, (phase) => say(`in-process: ${phase}`));
  await log.close();

  // 6. The Redis home-feed baseline, with feedmill stopped.
  let redisRun: { results: RedisBaselineResults; samples: RedisSamples };
  try {
    redisRun = await runRedisBaseline({ target: redis, profile, seed, warmPosts, plan, pageSize: PAGE_SIZE, check: { readers: checkedReaders, newest: CHECKED_NEWEST, feedmill: feedmillPages }, say });
  } catch (error) {
    const reason = `the Redis baseline failed: ${(error as Error).message}`;
    say(`!!! ${reason}`);
    redisRun = { results: { available: false, url: redis.shown, db: redis.db, reason }, samples: { read: [] } };
  }
  const redisResults = redisRun.results;
  if (!redisResults.available) say(`Redis baseline not measured: ${redisResults.reason}`);
  else if (redisResults.check.mismatches > 0) {
    say(`!!! feedmill and Redis timelines DIFFER for ${redisResults.check.mismatches} of ${redisResults.check.readers} readers:`);
    for (const example of redisResults.check.examples) say(`!!!   ${example}`);
  } else say(`feedmill and Redis hold the same newest ${CHECKED_NEWEST} entries for all ${redisResults.check.readers} checked readers`);

  const empty = new Latencies();
  const byKind = (kind: string) => mixed.byKind[kind] ?? { ok: 0, failed: 0, latency: empty };
  const failures = [follows, warm, mixed].reduce(
    (sum, run) => ({
      httpNon2xx: sum.httpNon2xx + Object.values(run.byKind).reduce((n, k) => n + k.failed, 0),
      transportErrors: sum.transportErrors + run.errors,
    }),
    { httpNon2xx: 0, transportErrors: 0 },
  );
  const results: BenchResults = {
    profile: profile.name,
    mode,
    seed,
    command: `npm run bench -- --profile ${profile.name} --mode ${mode}${model === 'ring' ? '' : ` --model ${model}`}${optionsGiven(['mixed-readers', 'mixed-posters', 'mixed-posts-per-second', 'mixed-seconds', 'http-workers'])}${values.seed === '42' ? '' : ` --seed ${seed}`}`,
    model,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version, platform: process.platform },
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    workload: {
      readers: profile.readers,
      producers: profile.producers,
      followEdges: workload.edges.length,
      followers: workload.followerCountSummary(),
      warmPosts: profile.warmPosts,
      mixedSeconds: profile.mixedSeconds,
      mixedReaders: profile.mixedReaders,
      mixedPosters: profile.mixedPosters,
      mixedPostsPerSecond: profile.mixedPostsPerSecond,
      connections: profile.connections,
      loadGenerator: http.name,
      httpWorkers: httpWorkers ?? null,
    },
    loading: {
      // Every batch but the last holds IMPORT_BATCH follows.
      followsPerSecond: Math.round(Math.min(workload.edges.length, (follows.byKind['follow']?.ok ?? 0) * IMPORT_BATCH) / follows.seconds),
      followsSettledPerSecond: Math.round(workload.edges.length / followsSettledSeconds),
      followLatencyMs: (follows.byKind['follow']?.latency ?? empty).summary(),
      warmPostsPerSecond: Math.round((warm.byKind['post']?.ok ?? 0) / warm.seconds),
      warmPostLatencyMs: (warm.byKind['post']?.latency ?? empty).summary(),
    },
    posts: { acceptedPerSecond: Math.round(byKind('post').ok / mixed.seconds), latencyMs: byKind('post').latency.summary() },
    fanout: { deliveries, seconds: round(fanoutSeconds, 2), deliveriesPerSecond: Math.round(deliveries / fanoutSeconds) },
    fanoutInProcess: inProcess.fanoutInProcess,
    postToVisibleMs: postToVisible.summary(),
    reads: { http: { readsPerSecond: Math.round(byKind('read').ok / mixed.seconds), latencyMs: byKind('read').latency.summary() }, inProcess: inProcess.reads.ours },
    rebuild: {
      deployment: { events, seconds: round(rebuildSeconds, 2), eventsPerSecond: Math.round(events / rebuildSeconds) },
      inProcessProjections: inProcess.projectionRebuild,
    },
    memory: inProcess.memory,
    cpu: cpuUse,
    mixedLoadAverage,
    baseline: { fanout: inProcess.fanout, reads: { ours: inProcess.reads.ours, naive: inProcess.reads.naive, speedup: inProcess.reads.speedup } },
    work: workByPhase(workBeforeMixed, mixedWork),
    failures,
    throughput: { mixed: mixed.perSecond, warm: warm.perSecond },
    redis: redisResults,
    versusRedis: null,
  };
  if (redisResults.available) results.versusRedis = versusRedis(results, redisResults);
  await writeReport(outDir, results, {
    post: byKind('post').latency.samples(),
    read: byKind('read').latency.samples(),
    postToVisible: postToVisible.samples(),
    inProcessOurs: inProcess.reads.samples.ours,
    inProcessNaive: inProcess.reads.samples.naive,
    redisRead: redisRun.samples.read,
  });
  say(`done in ${results.durationSeconds} s: ${outDir}/report.md, report.html, results.json`);
  say(`posts ${results.posts.acceptedPerSecond}/s, reads ${results.reads.http.readsPerSecond}/s (p99 ${results.reads.http.latencyMs.p99} ms), post-to-visible p50 ${results.postToVisibleMs.p50} ms, fan-out ${results.fanout.deliveriesPerSecond}/s`);
  say(`timeline work ${totalWork(results.work.total)}: ${results.work.total.entriesWritten} entries written, ${results.work.total.feedsQueried} feeds queried at read time`);
  if (redisResults.available) {
    say(`Redis: posts ${redisResults.mixed.postsPerSecond}/s, reads ${redisResults.mixed.readsPerSecond}/s (p99 ${redisResults.mixed.readLatencyMs.p99} ms), post-to-visible p50 ${redisResults.postToVisibleMs.p50} ms, fan-out ${redisResults.warm.deliveriesPerSecond}/s`);
  }
} finally {
  await deployment.dispose();
}

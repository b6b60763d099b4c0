import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { closeAll, connectOrExplain } from './redis-connect.js';
import { redisTarget } from './redis-design.js';
import type { BenchResults } from './report.js';
import { IMPORT_BATCH } from './workload.js';

/**
 * The smoke check of the benchmark: the small profile runs to the end and every figure is
 * present and plausible. No figure is compared with a time: the machine decides those.
 */
let out: string;
let results: BenchResults;
let output = '';
/** Whether a Redis answers here: then the run must have compared with it. */
let redisAnswers: boolean;

beforeAll(async () => {
  const probe = await connectOrExplain(redisTarget(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379'), 'feedmill-bench-smoke');
  redisAnswers = 'redis' in probe;
  if ('redis' in probe) closeAll([probe.redis]);
  out = await mkdtemp(join(tmpdir(), 'feedmill-bench-smoke-'));
  const child = spawn(process.execPath, ['--expose-gc', resolve('apps/bench/dist/main.js'), '--profile', 'small', '--mixed-seconds', '5', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`the benchmark exited with ${code}:\n${output.slice(-4000)}`);
  results = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as BenchResults;
}, 300_000);

afterAll(() => rm(out, { recursive: true, force: true }));

const latencies = (r: BenchResults) => ({
  'posts (mixed)': r.posts.latencyMs,
  'reads (HTTP)': r.reads.http.latencyMs,
  'reads (in-process)': r.reads.inProcess.latencyMs,
  'post to visible': r.postToVisibleMs,
  follows: r.loading.followLatencyMs,
  'warm-up posts': r.loading.warmPostLatencyMs,
  'naive reads': r.baseline.reads.naive.latencyMs,
});

it('reports every latency with p50 <= p95 <= p99 <= max, from real samples', () => {
  for (const [name, l] of Object.entries(latencies(results))) {
    expect({ name, counted: l.count > 0, positive: l.p50 > 0, ordered: l.p50 <= l.p95 && l.p95 <= l.p99 && l.p99 <= l.max }).toEqual({
      name,
      counted: true,
      positive: true,
      ordered: true,
    });
  }
});

it('reports every throughput, and they agree with the workload', () => {
  const rates = {
    posts: results.posts.acceptedPerSecond,
    reads: results.reads.http.readsPerSecond,
    readsInProcess: results.reads.inProcess.readsPerSecond,
    fanout: results.fanout.deliveriesPerSecond,
    fanoutInProcess: results.fanoutInProcess.deliveriesPerSecond,
    follows: results.loading.followsPerSecond,
    warmPosts: results.loading.warmPostsPerSecond,
    rebuild: results.rebuild.deployment.eventsPerSecond,
    rebuildInProcess: results.rebuild.inProcessProjections.eventsPerSecond,
  };
  for (const [name, rate] of Object.entries(rates)) expect({ name, rate: Number.isFinite(rate) && rate > 0 }).toEqual({ name, rate: true });
  // Readers and posters both had their answers in the mixed phase, each counted once.
  expect(results.reads.http.latencyMs.count).toBeGreaterThan(0);
  expect(results.posts.latencyMs.count).toBeGreaterThan(0);
  // Every follow import (one event per request), warm-up post and mixed-phase post is in the log that was rebuilt.
  expect(results.rebuild.deployment.events).toBeGreaterThanOrEqual(
    Math.ceil(results.workload.followEdges / IMPORT_BATCH) + results.workload.warmPosts + results.posts.latencyMs.count,
  );
  expect(results.fanout.deliveries).toBeGreaterThan(results.workload.warmPosts);
  // All push (ring): every warm-up delivery is an entry the timeline store wrote before the mixed phase.
  expect(results.work.beforeMixed.entriesWritten).toBeGreaterThanOrEqual(results.fanout.deliveries);
  expect(results.work.total.entriesWritten).toBe(results.work.beforeMixed.entriesWritten + results.work.mixed.entriesWritten);
  expect(results.failures).toEqual({ httpNon2xx: 0, transportErrors: 0 });
});

it('reports memory, CPU and the baseline ratios within plausible bounds', () => {
  expect(results.memory.bytesPerFollowEdge).toBeGreaterThan(8);
  expect(results.memory.bytesPerFollowEdge).toBeLessThan(10_000);
  // Four bytes of handle at least; activities are counted apart.
  expect(results.memory.bytesPerTimelineEntry).toBeGreaterThan(4);
  expect(results.memory.bytesPerTimelineEntry).toBeLessThan(10_000);
  expect(results.cpu.samples).toBeGreaterThan(0);
  expect(results.cpu.meanCores).toBeGreaterThan(0);
  expect(results.cpu.meanCores).toBeLessThanOrEqual(results.machine.cpus + 0.5);
  for (const ratio of [results.baseline.fanout.speedup, results.baseline.reads.speedup]) {
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeLessThan(Number.POSITIVE_INFINITY);
  }
  expect(results.baseline.fanout.deliveries).toBeGreaterThan(0);
  expect(results.baseline.fanout.naive.requests).toBeGreaterThan(results.baseline.fanout.ours.requests);
});

it('writes a report that shows the figures and the charts', async () => {
  const markdown = await readFile(join(out, 'report.md'), 'utf8');
  expect(markdown).toContain(`${results.posts.acceptedPerSecond.toLocaleString('en')} /s`);
  expect(markdown).toContain('npm run bench -- --profile small --mode standalone');
  expect(markdown).toContain(`| timeline work: entries written + feeds queried at read time`);
  const html = await readFile(join(out, 'report.html'), 'utf8');
  expect((html.match(/<svg /g) ?? []).length).toBeGreaterThanOrEqual(4);
  expect(output).toMatch(/mixed: 16 readers, 200 posts\/s/);
  expect(['wrk', 'autocannon']).toContain(results.workload.loadGenerator);
  expect(markdown).toContain(`HTTP load from ${results.workload.loadGenerator}`);
});

it('compares with Redis home feeds where a Redis answers, on the same timelines, and says why not where none does', async () => {
  const markdown = await readFile(join(out, 'report.md'), 'utf8');
  expect(markdown).toContain('## feedmill vs Redis home feeds');
  const redis = results.redis;
  if (!redisAnswers || (!redis.available && /another benchmark run held/.test(redis.reason))) {
    expect(redis.available).toBe(false);
    expect(results.versusRedis).toBeNull();
    expect(markdown).toContain(`Not measured: ${redis.available ? '' : redis.reason}`);
    return;
  }
  if (!redis.available) throw new Error(`a Redis answers, but the baseline did not run: ${redis.reason}`);
  // Both sides hold the same timelines: the same deliveries, the same newest entries.
  expect(redis.warm.deliveries).toBe(results.fanout.deliveries);
  expect(redis.check).toMatchObject({ readers: 200, newest: 20, matches: 200, mismatches: 0 });
  expect(redis.check.entries).toBeGreaterThan(200);
  expect(redis.failures).toEqual({ calls: 0, fanoutJobs: 0 });
  for (const [name, l] of Object.entries({ reads: redis.mixed.readLatencyMs, posts: redis.mixed.postLatencyMs, 'post to visible': redis.postToVisibleMs, follows: redis.loading.edgeLatencyMs })) {
    expect({ name, counted: l.count > 0, ordered: l.p50 <= l.p99 && l.p99 <= l.max }).toEqual({ name, counted: true, ordered: true });
  }
  expect(redis.mixed.readsPerSecond).toBeGreaterThan(0);
  expect(redis.mixed.postsPerSecond).toBeGreaterThan(0);
  expect(redis.memory.entries).toBeGreaterThan(0);
  expect(redis.memory.entries).toBeLessThanOrEqual(redis.warm.deliveries);
  expect(redis.memory.bytesPerTimelineEntry).toBeGreaterThan(8);
  // Every shared figure has both sides and a ratio, in the JSON and in the report's one table.
  const rows = results.versusRedis!;
  expect(rows.length).toBeGreaterThanOrEqual(10);
  for (const row of rows) {
    if (row.figure.startsWith('memory') && row.feedmill === null) continue;
    expect({ figure: row.figure, ratio: row.ratio !== null && row.ratio > 0 && Number.isFinite(row.ratio) }).toEqual({ figure: row.figure, ratio: true });
  }
  expect(markdown).toContain('| figure | feedmill | Redis | ratio |');
  expect(markdown).toContain(`| timeline reads (mixed phase) | ${results.reads.http.readsPerSecond.toLocaleString('en')} /s | ${redis.mixed.readsPerSecond.toLocaleString('en')} /s |`);
  expect(markdown).toContain(`flushed before and after the run`);
  const html = await readFile(join(out, 'report.html'), 'utf8');
  expect(html).toContain('<h2>feedmill vs Redis home feeds</h2>');
  expect(output).toMatch(/feedmill and Redis hold the same newest 20 entries for all 200 checked readers/);
});

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ModelComparison, ModelFigures } from './model-comparison.js';
import { profiles } from './profiles.js';

/**
 * The smoke check of the models comparison: two models on the small profile and one this
 * build does not have, which is skipped with its reason rather than ending the run.
 */
let out: string;
let comparison: ModelComparison;
let output = '';

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'feedmill-bench-models-'));
  const child = spawn(process.execPath, [resolve('apps/bench/dist/models.js'), '--profile', 'small', '--models', 'ring,pull,no-such-model', '--mixed-seconds', '5', '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`the comparison exited with ${code}:\n${output.slice(-4000)}`);
  comparison = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as ModelComparison;
}, 300_000);

afterAll(() => rm(out, { recursive: true, force: true }));

const figures = (model: string): ModelFigures => {
  const run = comparison.runs.find((r) => r.model === model);
  if (run?.outcome !== 'measured') throw new Error(`${model} was not measured: ${JSON.stringify(run)}`);
  return run.figures;
};

it('measures each model on the same requests, with no failures, and the same timelines', () => {
  for (const model of ['ring', 'pull']) {
    const { mixed, warmUp, failures } = figures(model);
    expect({ model, failures }).toEqual({ model, failures: { httpNon2xx: 0, transportErrors: 0 } });
    // wrk may send one request per connection past its quota.
    expect(warmUp.posts).toBeGreaterThanOrEqual(comparison.workload.warmPosts);
    expect(warmUp.posts).toBeLessThanOrEqual(comparison.workload.warmPosts + profiles.small.connections);
    expect(mixed.reads).toBeGreaterThan(0);
    expect(mixed.posts).toBeGreaterThan(0);
    expect(mixed.readLatencyMs.p50).toBeLessThanOrEqual(mixed.readLatencyMs.p99);
  }
  expect(figures('ring').timelines).toBeNull();
  expect(figures('pull').timelines).toMatchObject({ reference: 'ring', readers: 200, matches: 200, mismatches: 0 });
  expect(figures('pull').timelines!.entries).toBeGreaterThan(200);
});

it('counts push as entries written and pull as feeds queried', () => {
  const ring = figures('ring');
  const pull = figures('pull');
  // Every delivery of the warm-up is an entry written.
  expect(ring.warmUp.deliveries).toBeGreaterThan(comparison.workload.warmPosts);
  expect(ring.work.beforeMixed.entriesWritten).toBeGreaterThanOrEqual(ring.warmUp.deliveries);
  expect(ring.work.total.entriesWritten).toBeGreaterThan(pull.work.total.entriesWritten);
  // A pull read queries the reader's followed feeds: at least one for most reads.
  expect(pull.work.mixed.feedsQueried).toBeGreaterThan(pull.mixed.reads / 2);
  expect(pull.work.total.feedsQueried).toBeGreaterThan(ring.work.total.feedsQueried);
  for (const { work } of [ring, pull]) {
    expect(work.total).toEqual({ entriesWritten: work.beforeMixed.entriesWritten + work.mixed.entriesWritten, feedsQueried: work.beforeMixed.feedsQueried + work.mixed.feedsQueried });
  }
});

it('skips a model the build does not have, says why, and checks no goal it lacks figures for', async () => {
  expect(comparison.runs.map((r) => [r.model, r.outcome])).toEqual([
    ['ring', 'measured'],
    ['pull', 'measured'],
    ['no-such-model', 'skipped'],
  ]);
  expect(output).toMatch(/no-such-model: skipped, this build's timeline models are ring, /);
  expect(comparison.goals.map((g) => [g.status, g.detail])).toContainEqual(['not checked', 'hybrid was not run']);
  expect(comparison.goals.every((g) => g.status === 'not checked')).toBe(true);
  const markdown = await readFile(join(out, 'report.md'), 'utf8');
  expect(markdown).toContain('| no-such-model | skipped |');
  expect(markdown).toContain(`| ring | ${(figures('ring').work.total.entriesWritten + figures('ring').work.total.feedsQueried).toLocaleString('en')} | 1.00× |`);
  expect(markdown).toContain('Reproduce: `npm run bench:models -- --profile small --models ring,pull,no-such-model --mixed-seconds 5`');
});

import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * The smoke check of the realtime benchmark: a small run, with pull timelines (whose posts
 * reach the streams without any delivery), must see every post on every follower's stream.
 */
let out: string;
let output = '';

beforeAll(async () => {
  out = await mkdtemp(join(tmpdir(), 'feedmill-bench-realtime-'));
  const args = ['--streams', '40', '--posts', '6', '--rate', '50', '--readersPerAuthor', '10', '--model', 'pull', '--out', join(out, 'results.json')];
  const child = spawn(process.execPath, [resolve('apps/bench/dist/realtime.js'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`the benchmark exited with ${code}:\n${output.slice(-4000)}`);
}, 120_000);

afterAll(() => rm(out, { recursive: true, force: true }));

it('delivers every post to every follower’s open stream, and reports its latency', async () => {
  const { results } = JSON.parse(await readFile(join(out, 'results.json'), 'utf8')) as {
    results: Array<{ streams: number; authors: number; expected: number; delivered: number; latency: { count: number; p50: number; p99: number; max: number } }>;
  };
  expect(results).toHaveLength(1);
  const [run] = results;
  expect(run).toMatchObject({ streams: 40, authors: 4, expected: 6 * 10, delivered: 6 * 10 });
  expect(run!.latency.count).toBe(60);
  expect(run!.latency.p50).toBeGreaterThan(0);
  expect(run!.latency.max).toBeGreaterThanOrEqual(run!.latency.p99);
  expect(output).toMatch(/\| 40 \| 6 \(50\/s\) \| 60 of 60 \|/);
});

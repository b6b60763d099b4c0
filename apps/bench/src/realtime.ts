import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pidusage from 'pidusage';
import { FeedmillClient, type FeedStream } from '@feedmill/client';
import { timelineModels, type FeedId, type TimelineModel } from '@feedmill/contracts';
import { startStandalone, type Deployment } from '@feedmill/harness';
import { Latencies, type LatencySummary } from './latency.js';
import { say } from './progress.js';

/**
 * The realtime benchmark: a standalone with N open streams (one per reader, each reader
 * following one of N / 100 authors), posts at a steady rate, and the time from sending a
 * post to each of its followers' streams receiving its `added` event, measured by the
 * client that sent it (one clock). Every stream goes through the typed client.
 */
const { values } = parseArgs({
  options: {
    streams: { type: 'string', default: '1000,10000' },
    posts: { type: 'string', default: '100' },
    rate: { type: 'string', default: '20' },
    readersPerAuthor: { type: 'string', default: '100' },
    model: { type: 'string', default: 'ring' },
    out: { type: 'string' },
  },
});
const streamCounts = values.streams.split(',').map(Number);
if (streamCounts.some((count) => !Number.isInteger(count) || count < 1)) throw new Error('--streams must be whole numbers, comma-separated');
const posts = Number(values.posts);
const rate = Number(values.rate);
const readersPerAuthor = Number(values.readersPerAuthor);
const model = values.model as TimelineModel;
if (!(timelineModels as readonly string[]).includes(model)) throw new Error(`--model must be one of ${timelineModels.join(', ')}`);
/** How long the last post's events may take before the missing ones are counted missing. */
const DRAIN_MS = 5_000;
const OPEN_CONCURRENCY = 250;

interface RealtimeFigures {
  streams: number;
  authors: number;
  posts: number;
  expected: number;
  delivered: number;
  openSeconds: number;
  latency: LatencySummary;
  postAcknowledged: LatencySummary;
  serverCpuPercent: number;
  serverMemoryMb: number;
}

async function run(streams: number): Promise<RealtimeFigures> {
  const dir = await mkdtemp(join(tmpdir(), 'feedmill-realtime-'));
  const configPath = join(dir, 'feeds.json');
  await writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model, cap: 100 } } }));
  const deployment: Deployment = await startStandalone({ dataDir: join(dir, 'data'), env: { FEED_CONFIG: configPath, LOG_LEVEL: 'warn', SNAPSHOTS: 'off' }, readyTimeoutMs: 60_000 });
  const client = new FeedmillClient({ baseUrl: deployment.baseUrl });
  const open: FeedStream[] = [];
  try {
    const authors = Math.max(1, Math.ceil(streams / readersPerAuthor));
    const readerOf = (index: number) => `timeline:r${index}` as FeedId;
    const authorOf = (index: number) => `user:a${index % authors}` as FeedId;
    for (let start = 0; start < streams; start += 5_000) {
      const follows = Array.from({ length: Math.min(5_000, streams - start) }, (_, i) => ({ source: readerOf(start + i), target: authorOf(start + i) }));
      await client.followMany(follows);
    }
    const sentAt = new Map<string, number>();
    const latencies = new Latencies();
    /** From sending a post to its 201 (durably in the log): the part of the latency that is the post's own. */
    const acknowledged = new Latencies();
    let delivered = 0;
    const opening = performance.now();
    for (let start = 0; start < streams; start += OPEN_CONCURRENCY) {
      await Promise.all(
        Array.from({ length: Math.min(OPEN_CONCURRENCY, streams - start) }, async (_, i) => {
          const stream = client.stream(readerOf(start + i), { reconnect: false });
          open.push(stream);
          const first = await stream.next();
          if (first.done || first.value.type !== 'reset') throw new Error(`stream ${readerOf(start + i)} began with ${JSON.stringify(first.value)}`);
          void (async () => {
            try {
              for await (const event of stream) {
                if (event.type !== 'added') continue;
                const sent = sentAt.get(event.data.activity.object);
                if (sent === undefined) continue;
                latencies.recordMs(performance.now() - sent);
                delivered++;
              }
            } catch {
              // A stream that fails shows as events missing.
            }
          })();
        }),
      );
    }
    const openSeconds = (performance.now() - opening) / 1000;
    say(`${streams} streams open in ${openSeconds.toFixed(1)} s; posting ${posts} at ${rate}/s to ${authors} authors`);
    // CPU is measured from here: pidusage averages over the time between two calls.
    await pidusage(deployment.processes[0]!.child.pid!);
    const gap = 1000 / rate;
    const started = performance.now();
    for (let k = 0; k < posts; k++) {
      const wait = started + k * gap - performance.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      const object = `bench-${k}`;
      sentAt.set(object, performance.now());
      const author = authorOf(k);
      await client.addActivity(author, { actor: author, verb: 'post', object });
      acknowledged.recordMs(performance.now() - sentAt.get(object)!);
    }
    let expected = 0;
    for (let k = 0; k < posts; k++) expected += followersOfAuthor(k % authors, streams, authors);
    const deadline = performance.now() + DRAIN_MS;
    while (delivered < expected && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const usage = await pidusage(deployment.processes[0]!.child.pid!);
    return { streams, authors, posts, expected, delivered, openSeconds, latency: latencies.summary(), postAcknowledged: acknowledged.summary(), serverCpuPercent: Math.round(usage.cpu), serverMemoryMb: Math.round(usage.memory / 1e6) };
  } finally {
    for (const stream of open) stream.close();
    pidusage.clear();
    await deployment.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Author `author` is followed by the readers whose index is `author` modulo the authors. */
function followersOfAuthor(author: number, streams: number, authors: number): number {
  return Math.floor(streams / authors) + (author < streams % authors ? 1 : 0);
}

const results: RealtimeFigures[] = [];
for (const streams of streamCounts) {
  const figures = await run(streams);
  results.push(figures);
  const { latency } = figures;
  say(`${streams} streams: ${figures.delivered}/${figures.expected} events, post-to-event p50 ${latency.p50} ms, p99 ${latency.p99} ms, max ${latency.max} ms`);
}
const table = [
  '| open streams | posts (rate) | events delivered | post-to-event p50 | p99 | max | post acknowledged p50 / p99 | server CPU, memory |',
  '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ...results.map(
    (r) =>
      `| ${r.streams.toLocaleString('en-US')} | ${r.posts} (${rate}/s) | ${r.delivered.toLocaleString('en-US')} of ${r.expected.toLocaleString('en-US')} | ${r.latency.p50} ms | ${r.latency.p99} ms | ${r.latency.max} ms | ${r.postAcknowledged.p50} / ${r.postAcknowledged.p99} ms | ${r.serverCpuPercent}%, ${r.serverMemoryMb} MB |`,
  ),
].join('\n');
process.stdout.write(`\n${table}\n`);
if (values.out) await writeFile(values.out, JSON.stringify({ model, rate, readersPerAuthor, results }, null, 2));

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { FeedmillClient } from '@feedmill/client';
import { startStandalone } from '@feedmill/harness';
import { Latencies } from './latency.js';
import { say } from './progress.js';
import { growthVerdict, type SoakRow } from './soak/growth.js';
import { InspectorProbe } from './soak/inspector-probe.js';
import { SoakWorkload } from './soak/soak-workload.js';

/**
 * The soak: a standalone under a steady load for `--minutes`, at `--rate` requests per
 * second or half of what a short capacity probe measured first, recording every
 * `--interval` seconds the server's RSS, its heap after a full collection and its
 * event-loop delay (read through its inspector), the latency of `/healthz`, and the p50 and
 * p99 of the requests. It prints a table as it goes, writes `soak.json`, and exits with 1
 * when the heap grew (see `growthVerdict`) or more than 1% of requests failed.
 */
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    rate: { type: 'string' },
    interval: { type: 'string', default: '10' },
    'max-growth': { type: 'string', default: '20' },
    'probe-seconds': { type: 'string', default: '10' },
    seed: { type: 'string', default: '1' },
    out: { type: 'string', default: 'bench-results/soak' },
  },
});
const minutes = Number(values.minutes);
const intervalMs = Number(values.interval) * 1000;
const maxGrowthPercent = Number(values['max-growth']);
const probeSeconds = Number(values['probe-seconds']);
for (const [name, value] of [['--minutes', minutes], ['--interval', intervalMs], ['--max-growth', maxGrowthPercent], ['--probe-seconds', probeSeconds]] as const) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
}
if (values.rate !== undefined && !(Number(values.rate) > 0)) throw new Error('--rate must be a positive number of requests per second');

/** Requests per second a closed loop of 32 clients gets answered: the capacity the soak runs at half of. */
async function probeCapacity(workload: SoakWorkload, seconds: number): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (performance.now() < until) {
        await workload.next();
        done++;
      }
    }),
  );
  return done / seconds;
}

const dir = await mkdtemp(join(tmpdir(), 'feedmill-soak-'));
const config = join(dir, 'feeds.json');
await writeFile(config, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 100 } } }));
const deployment = await startStandalone({ dataDir: join(dir, 'data'), env: { FEED_CONFIG: config, NODE_OPTIONS: '--inspect=127.0.0.1:0' }, readyTimeoutMs: 60_000 });
const probe = await InspectorProbe.attach(deployment.processes[0]!.output());
const client = new FeedmillClient({ baseUrl: deployment.baseUrl });
let exitCode = 0;
try {
  const workload = new SoakWorkload(client, Number(values.seed));
  await workload.seed();
  let rate = Number(values.rate);
  if (!values.rate) {
    const capacity = await probeCapacity(workload, probeSeconds);
    rate = Math.max(1, Math.round(capacity / 2));
    say(`capacity probe: ${capacity.toFixed(0)} requests/s with 32 clients for ${probeSeconds} s; the soak runs at half: ${rate}/s`);
  }
  say(`soak: ${minutes} min at ${rate} requests/s (75% reads, 20% posts with removals, 5% follow swaps), a row every ${intervalMs / 1000} s`);

  const rows: SoakRow[] = [];
  let window = new Latencies();
  let errors = 0;
  let skipped = 0;
  let inFlight = 0;
  const started = performance.now();
  const end = started + minutes * 60_000;
  const header = ' time s | requests | errors |  p50 ms |  p99 ms | healthz ms | RSS MB | heap after GC MB | loop p99 ms | loop max ms | log events';
  say(header);
  // Open loop: requests leave on schedule whether or not earlier ones were answered, as users' do.
  let owed = 0;
  const pacer = setInterval(() => {
    owed += rate / 50;
    for (; owed >= 1; owed--) {
      if (inFlight >= 1024) {
        skipped++;
        continue;
      }
      inFlight++;
      const sent = performance.now();
      workload
        .next()
        .then(() => window.recordMs(performance.now() - sent))
        .catch(() => errors++)
        .finally(() => inFlight--);
    }
  }, 20);
  let requests = 0;
  let failed = 0;
  while (performance.now() < end) {
    await new Promise((done) => setTimeout(done, Math.min(intervalMs, end - performance.now())));
    const latencies = window.summary();
    window = new Latencies();
    const healthzStart = performance.now();
    await fetch(`${deployment.baseUrl}/healthz`).then((answer) => answer.arrayBuffer(), () => errors++);
    const healthzMs = performance.now() - healthzStart;
    const runtime = await probe.sample();
    const readiness = await client.readiness().catch(() => undefined);
    const row: SoakRow = {
      atSeconds: Math.round((performance.now() - started) / 1000),
      requests: latencies.count,
      errors,
      p50Ms: latencies.p50,
      p99Ms: latencies.p99,
      healthzMs: Math.round(healthzMs * 100) / 100,
      rssMb: Math.round(runtime.rssBytes / 1e5) / 10,
      heapAfterGcMb: Math.round(runtime.heapAfterGcBytes / 1e5) / 10,
      loopDelayP99Ms: Math.round(runtime.loopDelayP99Ms * 10) / 10,
      loopDelayMaxMs: Math.round(runtime.loopDelayMaxMs * 10) / 10,
      logEvents: Math.max(0, ...(readiness?.services ?? []).map((s) => s.position)),
    };
    requests += row.requests;
    failed += errors;
    errors = 0;
    rows.push(row);
    const cells = [row.atSeconds, row.requests, row.errors, row.p50Ms, row.p99Ms, row.healthzMs, row.rssMb, row.heapAfterGcMb, row.loopDelayP99Ms, row.loopDelayMaxMs, row.logEvents];
    const widths = header.split('|').map((h) => h.length - 1);
    say(cells.map((value, i) => String(value).padStart(widths[i]!)).join(' | '));
  }
  clearInterval(pacer);
  const verdict = growthVerdict(rows, maxGrowthPercent);
  const errorShare = failed / Math.max(1, requests + failed);
  const outDir = resolve(values.out);
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'soak.json'), JSON.stringify({ minutes, rate, intervalSeconds: intervalMs / 1000, maxGrowthPercent, requests, failed, skipped, verdict, rows }, null, 2));
  say(`soak: ${requests} requests answered, ${failed} failed, ${skipped} not sent (over 1024 in flight); ${verdict.reason}; p99 ${verdict.firstThirdP99Ms.toFixed(1)} ms in the first third, ${verdict.lastThirdP99Ms.toFixed(1)} ms in the last; written to ${join(outDir, 'soak.json')}`);
  if (verdict.grew) exitCode = 1;
  if (errorShare > 0.01) {
    say(`soak: ${(errorShare * 100).toFixed(2)}% of requests failed (more than 1%)`);
    exitCode = 1;
  }
} finally {
  probe.close();
  await deployment.stop();
  await rm(dir, { recursive: true, force: true });
}
process.exit(exitCode);

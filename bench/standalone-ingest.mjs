// Measures the standalone process: posts accepted per second over HTTP (autocannon), then
// the time a restart takes to rebuild every projection and timeline from the log it wrote.
// Usage: npm run build && node bench/standalone-ingest.mjs [--seconds 10] [--connections 64] [--model ring|cache|pull|...]
// With the default `cache` model nobody reads here, so nothing is fanned out on write; `ring`
// delivers every post to its followers' timelines.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '64' },
    producers: { type: 'string', default: '50' },
    readers: { type: 'string', default: '500' },
    follows: { type: 'string', default: '10' },
    keep: { type: 'string' },
    model: { type: 'string', default: 'cache' },
  },
});
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const producers = Number(values.producers);
const readers = Number(values.readers);
const followsPerReader = Number(values.follows);
const port = 3900 + Math.floor(Math.random() * 90);
const base = `http://127.0.0.1:${port}`;

function start(dataDir) {
  const started = performance.now();
  const child = spawn(process.execPath, ['apps/standalone/dist/main.js'], {
    env: { ...process.env, PORT: String(port), FEEDMILL_DATA_DIR: dataDir, LOG_LEVEL: 'warn', FEED_CONFIG: join(dataDir, 'feeds.json') },
    stdio: 'inherit',
  });
  return { child, started };
}

async function settled() {
  for (;;) {
    const response = await fetch(`${base}/readyz`).catch(() => undefined);
    if (response?.status === 200) {
      const { services } = await response.json();
      const at = Object.fromEntries(services.map((s) => [s.service, s.position]));
      if (at.fanout === at.content && at.graph === at.content) return at.content;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function stop(child) {
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

const dataDir = values.keep ?? (await mkdtemp(join(tmpdir(), 'feedmill-bench-')));
try {
  const groups = { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: values.model } };
  await writeFile(join(dataDir, 'feeds.json'), JSON.stringify({ groups }));
  const first = start(dataDir);
  await settled();
  // Each reader follows a few producers, so every post fans out to about
  // readers * follows / producers timelines.
  for (let r = 0; r < readers; r++) {
    await Promise.all(
      Array.from({ length: followsPerReader }, (_, k) =>
        fetch(`${base}/v1/feeds/timeline/r${r}/follows/user/p${(r * 7 + k * 13) % producers}`, { method: 'PUT' }),
      ),
    );
  }
  let n = 0;
  const result = await autocannon({
    url: base,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          const i = n++;
          request.path = `/v1/feeds/user/p${i % producers}/activities`;
          request.body = JSON.stringify({ actor: `p${i % producers}`, verb: 'post', object: `object:${i}` });
          return request;
        },
      },
    ],
  });
  const fanoutStarted = performance.now();
  const head = await settled();
  const fanoutDrain = (performance.now() - fanoutStarted) / 1000;
  await stop(first.child);

  const logBytes = (await stat(join(dataDir, 'events.log'))).size;
  const second = start(dataDir);
  await settled();
  const rebuildSeconds = (performance.now() - second.started) / 1000;
  await stop(second.child);

  const accepted = result['2xx'];
  console.log(JSON.stringify({
    posts: { accepted, non2xx: result.non2xx, errors: result.errors, perSecond: Math.round(accepted / seconds), latencyMs: { p50: result.latency.p50, p99: result.latency.p99, max: result.latency.max } },
    fanout: { model: values.model, readers, followsPerReader, producers, drainAfterLoadSeconds: Number(fanoutDrain.toFixed(2)) },
    rebuild: { events: head, logBytes, seconds: Number(rebuildSeconds.toFixed(2)), eventsPerSecond: Math.round(head / rebuildSeconds) },
  }, null, 2));
} finally {
  if (!values.keep) await rm(dataDir, { recursive: true, force: true });
}

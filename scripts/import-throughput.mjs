// Measures bulk imports on a standalone started for the purpose (`npm run build` first):
// follow edges through `POST /v1/follows`, and activities through `POST /v1/activities`.
// Two figures each: accepted (every request answered, so every event is durable in the log)
// and settled (fan-out, graph and content have applied all of it: /readyz positions meet).
// Usage: node scripts/import-throughput.mjs [--requests 20] [--follows 10000] [--concurrency 2]
//        [--activities 0] [--posts-first 0] [--url URL]
// With --url it imports into a standalone already running there (one started with
// `node --cpu-prof apps/standalone/dist/main.js`, say), which should be empty.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FeedClient, startStandalone, waitUntilSettled } from '@feedmill/harness';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20' },
    follows: { type: 'string', default: '10000' },
    concurrency: { type: 'string', default: '2' },
    /** Requests of 1,000 activities to import after the follows. */
    activities: { type: 'string', default: '0' },
    /** Activities posted (in bulk) to the producers before the follows, so that follows backfill. */
    'posts-first': { type: 'string', default: '0' },
    url: { type: 'string' },
  },
});
const requests = Number(values.requests);
const perRequest = Number(values.follows);
const concurrency = Number(values.concurrency);
const readers = Math.ceil((requests * perRequest) / 10);
const producers = Math.max(1, Math.ceil(readers / 4));

/** Deterministic pseudo-random numbers, so that runs import the same graph. */
let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);

/** Each reader follows 10 distinct producers; request k carries edges k*n .. (k+1)*n - 1. */
function followBodies() {
  const edges = [];
  for (let r = 0; r < readers && edges.length < requests * perRequest; r++) {
    const chosen = new Set();
    while (chosen.size < 10) chosen.add(Math.floor(random() * producers));
    for (const p of chosen) edges.push({ source: `timeline:r${r}`, target: `user:p${p}` });
  }
  return Array.from({ length: requests }, (_, k) => JSON.stringify({ follows: edges.slice(k * perRequest, (k + 1) * perRequest) }));
}

function activityBodies(count, tag) {
  return Array.from({ length: count }, (_, k) =>
    JSON.stringify({
      activities: Array.from({ length: 1000 }, (_, i) => ({ feed: `user:p${(k * 1000 + i) % producers}`, actor: 'importer', verb: 'post', object: `${tag}:${k}:${i}`, foreignId: `${tag}-${k}-${i}` })),
    }),
  );
}

async function send(api, path, bodies, expected) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, bodies.length) }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const result = await api.call('POST', path, body);
        if (result.status !== expected) throw new Error(`POST ${path} answered ${result.status}: ${JSON.stringify(result.body).slice(0, 300)}`);
      }
    }),
  );
}

async function timed(what, count, unit, run) {
  const started = performance.now();
  await run();
  const seconds = (performance.now() - started) / 1000;
  console.log(`${what}: ${count} ${unit} in ${seconds.toFixed(2)} s = ${Math.round(count / seconds).toLocaleString('en')} ${unit}/s`);
  return started;
}

const dataDir = await mkdtemp(join(tmpdir(), 'feedmill-import-'));
const deployment = values.url
  ? { baseUrl: values.url, stop: async () => undefined }
  : await startStandalone({ dataDir, env: { LOG_LEVEL: 'warn' }, readyTimeoutMs: 60_000 });
const api = new FeedClient(deployment.baseUrl);
try {
  console.log(`standalone at ${deployment.baseUrl}; ${requests} requests of ${perRequest} follows, ${readers} readers, ${producers} producers, ${concurrency} in flight`);
  const postsFirst = Number(values['posts-first']);
  if (postsFirst > 0) {
    await send(api, '/v1/activities', activityBodies(Math.ceil(postsFirst / 1000), 'before'), 201);
    await waitUntilSettled(api, 600_000);
    console.log(`posted ${postsFirst} activities first`);
  }
  const bodies = followBodies();
  const total = requests * perRequest;
  let started;
  await timed('follows accepted', total, 'edges', async () => {
    started = performance.now();
    await send(api, '/v1/follows', bodies, 200);
  });
  await waitUntilSettled(api, 600_000);
  const settled = (performance.now() - started) / 1000;
  console.log(`follows settled (fan-out applied): ${total} edges in ${settled.toFixed(2)} s = ${Math.round(total / settled).toLocaleString('en')} edges/s`);

  const activityRequests = Number(values.activities);
  if (activityRequests > 0) {
    let began;
    await timed('activities accepted', activityRequests * 1000, 'activities', async () => {
      began = performance.now();
      await send(api, '/v1/activities', activityBodies(activityRequests, 'after'), 201);
    });
    await waitUntilSettled(api, 600_000);
    const seconds = (performance.now() - began) / 1000;
    console.log(`activities settled (delivered to ${readers} readers' timelines): ${activityRequests * 1000} in ${seconds.toFixed(2)} s = ${Math.round((activityRequests * 1000) / seconds).toLocaleString('en')} activities/s`);
  }
  const { body } = await api.call('GET', '/readyz');
  console.log(`readyz: ${JSON.stringify(body.services.map((s) => [s.service, s.position, s.counters ?? {}]))}`);
} finally {
  await deployment.stop();
  await rm(dataDir, { recursive: true, force: true });
}

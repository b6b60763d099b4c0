// Measures fan-out in cluster mode with 1, 2, 3... fan-out processes (`npm run build` first):
// one producer with many followers (imported through `POST /v1/follows`) posts a few times
// at once, and the figure is timeline entries delivered per second from the first post sent
// until every post is in every follower's timeline (the timeline's `delivered` counter).
// Each count of fan-out processes runs on a fresh NATS server and cluster.
// Usage: node scripts/fanout-throughput.mjs [--workers 1,2,3] [--followers 100000] [--posts 5]
//        [--rounds 1] [--min-readers N] [--partitions 1] [--timeline-replicas 1]
// --min-readers sets FANOUT_JOB_MIN_READERS (above the follower count, the planner delivers
// every post itself). A single fan-out process always does: it shares a post out as jobs
// only when another process waits for work. --partitions and --timeline-replicas split the
// timelines into that many partitions shared by that many timeline processes.
import { loadavg } from 'node:os';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { childProcessesOf, FeedClient, startCluster, startNatsServer, waitFor, waitUntilSettled } from '@feedmill/harness';

const { values } = parseArgs({
  options: {
    workers: { type: 'string', default: '1,2,3' },
    followers: { type: 'string', default: '100000' },
    posts: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '1' },
    'min-readers': { type: 'string' },
    partitions: { type: 'string', default: '1' },
    'timeline-replicas': { type: 'string', default: '1' },
  },
});
const workerCounts = values.workers.split(',').map(Number);
const followers = Number(values.followers);
const posts = Number(values.posts);
const rounds = Number(values.rounds);
const timelinePartitions = Number(values.partitions);
const timelineReplicas = Number(values['timeline-replicas']);

const configDir = await mkdtemp(join(tmpdir(), 'feedmill-fanout-throughput-'));
const feedConfig = join(configDir, 'feeds.json');
// Ring timelines store every delivery, read or not.
await writeFile(feedConfig, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 100 } } }));
const env = { FEED_CONFIG: feedConfig, ...(values['min-readers'] ? { FANOUT_JOB_MIN_READERS: values['min-readers'] } : {}) };

async function delivered(api) {
  const { body } = await api.call('GET', '/readyz');
  return body.services.find((s) => s.service === 'timeline')?.counters?.delivered ?? 0;
}

/** CPU seconds (user + system) each process of this script's has used so far, by name. */
async function cpuSeconds(names) {
  const seconds = {};
  for (const pid of childProcessesOf(process.pid)) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
    if (!stat) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    seconds[names.get(pid) ?? 'nats-server'] = (Number(fields[11]) + Number(fields[12])) / 100;
  }
  return seconds;
}

const load = () => loadavg().map((l) => l.toFixed(2)).join(' ');
const results = [];
try {
  for (const workers of workerCounts) {
    const nats = await startNatsServer();
    const cluster = await startCluster({ natsUrl: nats.url, stream: 'THROUGHPUT', env, fanoutWorkers: workers, timelinePartitions, timelineReplicas, readyTimeoutMs: 60_000 });
    try {
      const api = new FeedClient(cluster.baseUrl);
      for (let start = 0; start < followers; start += 10_000) {
        const follows = Array.from({ length: Math.min(10_000, followers - start) }, (_, i) => ({ source: `timeline:f${start + i}`, target: 'user:star' }));
        const result = await api.call('POST', '/v1/follows', { follows });
        if (result.status !== 200) throw new Error(`POST /v1/follows answered ${result.status}: ${JSON.stringify(result.body).slice(0, 300)}`);
      }
      await waitUntilSettled(api, 300_000);
      for (let round = 1; round <= rounds; round++) {
        const before = await delivered(api);
        const names = new Map(cluster.processes.map((p) => [p.child.pid, p.name]));
        const cpuBefore = await cpuSeconds(names);
        const started = performance.now();
        const answers = await Promise.all(Array.from({ length: posts }, (_, i) => api.post('user:star', { actor: 'star', verb: 'post', object: `w${workers}-r${round}-p${i}` })));
        if (answers.some((a) => a.status !== 201)) throw new Error(`a post answered ${answers.map((a) => a.status)}`);
        const expected = before + posts * followers;
        await waitFor(async () => ((await delivered(api)) >= expected ? true : undefined), { timeoutMs: 600_000, intervalMs: 50, what: `${posts * followers} deliveries` });
        const seconds = (performance.now() - started) / 1000;
        const cpuAfter = await cpuSeconds(names);
        const rate = Math.round((posts * followers) / seconds);
        results.push({ workers, round, seconds, rate, load: load() });
        console.log(`${workers} fan-out process(es), round ${round}: ${posts} posts x ${followers.toLocaleString('en')} followers visible in ${seconds.toFixed(2)} s = ${rate.toLocaleString('en')} deliveries/s (load average ${load()})`);
        const used = Object.entries(cpuAfter).map(([name, after]) => `${name} ${(after - (cpuBefore[name] ?? 0)).toFixed(2)}`);
        console.log(`  CPU seconds meanwhile: ${used.join(', ')}`);
        await waitUntilSettled(api, 300_000);
      }
      const { body } = await api.call('GET', '/readyz');
      console.log(`  readyz: ${JSON.stringify(body.services.map((s) => [s.service, s.position, s.counters ?? {}]))}`);
    } finally {
      await cluster.stop();
      await nats.stop();
    }
  }
  console.log('\n| fan-out processes | round | seconds | deliveries/s | load average (1, 5, 15 min) |\n| --- | --- | --- | --- | --- |');
  for (const r of results) console.log(`| ${r.workers} | ${r.round} | ${r.seconds.toFixed(2)} | ${r.rate.toLocaleString('en')} | ${r.load} |`);
} finally {
  await rm(configDir, { recursive: true, force: true });
}

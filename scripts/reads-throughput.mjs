// Timeline reads alone against a standalone (or, with --mode cluster, a cluster on a private
// nats-server) started for the purpose, with wrk (a C load
// generator, so that the server keeps its core): imports the benchmark's medium graph (`ring`
// timelines), posts --posts of the medium workload's draws in bulk requests and waits until
// every service has applied them, then reads the newest 20 of the workload's readers (drawn as
// the benchmark draws them) over --connections for --seconds, and prints reads/s, wrk's latency
// percentiles and the CPU microseconds per read of each process. With --profile DIR every process
// writes a CPU profile of the whole run there (`--cpu-prof`). Needs wrk (apt-get install -y wrk)
// and `npm run build`. --http-workers N puts N HTTP worker processes in front of the services
// (`HTTP_WORKERS`); CPU per read then counts the services' process only. A cluster's CPU per
// read is given per process.
// Usage: node scripts/reads-throughput.mjs [--mode standalone|cluster] [--seconds 10] [--connections 16] [--posts 40000] [--http-workers N] [--profile DIR]
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pidusage from 'pidusage';
import { startCluster, startNatsServer, startStandalone } from '@feedmill/harness';
import { everythingApplied, mediumWorkloadImported } from './medium-workload.mjs';
import { wrkGets } from './wrk-scripts.mjs';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    posts: { type: 'string', default: '40000' },
    profile: { type: 'string' },
    'http-workers': { type: 'string', default: '0' },
    mode: { type: 'string', default: 'standalone' },
  },
});
const dir = await mkdtemp(join(tmpdir(), 'feedmill-reads-'));
await writeFile(join(dir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 800 } } }));
const env = { FEED_CONFIG: join(dir, 'feeds.json'), SNAPSHOTS: 'off', LOG_LEVEL: 'warn', HTTP_WORKERS: values['http-workers'] };
const nodeArgs = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values.profile)}`] : [];
const nats = values.mode === 'cluster' ? await startNatsServer() : undefined;
const deployment = nats ? await startCluster({ natsUrl: nats.url, stream: 'READS', env, nodeArgs }) : await startStandalone({ dataDir: join(dir, 'data'), env, nodeArgs });
const send = async (path, body) => {
  const answer = await fetch(`${deployment.baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (!answer.ok) throw new Error(`POST ${path} answered ${answer.status}: ${await answer.text()}`);
};
// User and system CPU milliseconds of each process so far.
const cpuMs = async () => Object.fromEntries(await Promise.all(deployment.processes.map(async (process) => [process.name, (await pidusage(process.child.pid)).ctime])));
try {
  const workload = await mediumWorkloadImported(deployment.baseUrl);
  for (let posted = 0; posted < Number(values.posts); posted += 1_000) {
    const activities = Array.from({ length: 1_000 }, () => {
      const producer = workload.nextPoster();
      return { feed: `user:p${producer}`, actor: `p${producer}`, verb: 'post', object: `object:${Math.floor(workload.chance() * 1e9)}` };
    });
    await send('/v1/activities', { activities });
  }
  // Reading starts once every service has applied every post.
  await everythingApplied(deployment.baseUrl);
  const paths = Array.from({ length: 20_000 }, () => `/v1/feeds/timeline/r${workload.nextReader()}?limit=20`);
  const script = await wrkGets(dir, paths);
  const cpuBefore = await cpuMs();
  const output = execFileSync('wrk', ['-t1', `-c${values.connections}`, `-d${values.seconds}s`, '--latency', '-s', script, deployment.baseUrl], { encoding: 'utf8' });
  const cpuAfter = await cpuMs();
  const reads = Number(output.match(/(\d+) requests in/)[1]);
  const latency = (percent) => output.match(new RegExp(`\\s${percent}%\\s+([\\d.]+\\w+)`))?.[1];
  console.log(
    JSON.stringify({
      readsPerSecond: Number(output.match(/Requests\/sec:\s+([\d.]+)/)[1]),
      p50: latency(50),
      p99: latency(99),
      failed: Number(output.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0),
      cpuMicrosecondsPerRead: Object.fromEntries(Object.entries(cpuAfter).map(([name, ms]) => [name, Math.round(((ms - cpuBefore[name]) * 1000) / reads)])),
    }),
  );
} finally {
  await deployment.stop();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
}

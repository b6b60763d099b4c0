// Posts alone against a standalone (or, with --mode cluster, a cluster on a private
// nats-server) started for the purpose, with wrk (a C load generator, so that the server keeps
// its core): imports the benchmark's medium graph (`ring` timelines, so
// every post is fanned out), then posts the medium workload's draws over --connections for
// --seconds and prints posts/s and the CPU microseconds per post of each process. With --warm every producer
// posts once first, so that no post in the window is a feed's first (which waits for its key
// to be written); without, most producers' first posts fall in the window, as in the
// benchmark's posts-only phase. Needs wrk (apt-get install -y wrk) and `npm run build`.
// With --profile DIR every process writes a CPU profile of the whole run there (`--cpu-prof`).
// Usage: node scripts/posts-throughput.mjs [--mode standalone|cluster] [--seconds 8] [--connections 64] [--warm] [--profile DIR]
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pidusage from 'pidusage';
import { startCluster, startNatsServer, startStandalone } from '@feedmill/harness';
import { mediumWorkloadImported } from './medium-workload.mjs';
import { wrkPosts } from './wrk-scripts.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '8' }, connections: { type: 'string', default: '64' }, warm: { type: 'boolean', default: false }, profile: { type: 'string' }, mode: { type: 'string', default: 'standalone' } },
});
const dir = await mkdtemp(join(tmpdir(), 'feedmill-posts-'));
await writeFile(join(dir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 800 } } }));
const nodeArgs = values.profile ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values.profile)}`] : [];
const env = { FEED_CONFIG: join(dir, 'feeds.json'), SNAPSHOTS: 'off', LOG_LEVEL: 'warn' };
const nats = values.mode === 'cluster' ? await startNatsServer() : undefined;
const deployment = nats ? await startCluster({ natsUrl: nats.url, stream: 'POSTS', env, nodeArgs }) : await startStandalone({ dataDir: join(dir, 'data'), env, nodeArgs });
const post = async (producer, object) => {
  const answer = await fetch(`${deployment.baseUrl}/v1/feeds/user/p${producer}/activities`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ actor: `p${producer}`, verb: 'post', object }) });
  if (answer.status !== 201) throw new Error(`a post answered ${answer.status}: ${await answer.text()}`);
};
try {
  // Posting starts once every service has applied the imports.
  const workload = await mediumWorkloadImported(deployment.baseUrl);
  if (values.warm) {
    let next = 0;
    await Promise.all(Array.from({ length: 64 }, async () => { while (next < workload.profile.producers) await post(next++, 'first'); }));
  }
  const requests = Array.from({ length: 40_000 }, () => {
    const producer = workload.nextPoster();
    return { path: `/v1/feeds/user/p${producer}/activities`, body: JSON.stringify({ actor: `p${producer}`, verb: 'post', object: `object:${Math.floor(workload.chance() * 1e9)}` }) };
  });
  const script = await wrkPosts(dir, requests);
  // User and system CPU milliseconds of each process so far.
  const cpuMs = async () => Object.fromEntries(await Promise.all(deployment.processes.map(async (process) => [process.name, (await pidusage(process.child.pid)).ctime])));
  const cpuBefore = await cpuMs();
  const output = execFileSync('wrk', ['-t1', `-c${values.connections}`, `-d${values.seconds}s`, '-s', script, deployment.baseUrl], { encoding: 'utf8' });
  const failed = Number(output.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const cpuAfter = await cpuMs();
  const posts = Number(output.match(/(\d+) requests in/)[1]);
  // The CPU of the window: the posts accepted, and as much of their fan-out as was done by then.
  console.log(JSON.stringify({ postsPerSecond: Number(output.match(/Requests\/sec:\s+([\d.]+)/)[1]), failed, warm: values.warm, cpuMicrosecondsPerPost: Object.fromEntries(Object.entries(cpuAfter).map(([name, ms]) => [name, Math.round(((ms - cpuBefore[name]) * 1000) / posts)])) }));
} finally {
  await deployment.stop();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
}

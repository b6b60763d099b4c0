// What durable posts over HTTP cost on this machine with nothing of feedmill in them: the
// same wrk load as posts-throughput (the medium workload's posts over --connections for
// --seconds) against a bare Node HTTP server, in a process of its own, that parses each
// post's JSON, checks its fields, gives it an id and a time, appends it as a JSON line to a
// file and answers 201 once the line is fsync'd, appends sharing a write and an fdatasync as
// feedmill's file log shares them (group commit). No sealing, projections, fan-out, metrics or
// request ids. Then the same load against a standalone (`ring` timelines, every producer's
// first post made before, as posts-throughput --warm), so that the two are compared in one
// run; each round starts once the standalone has applied everything (its fan-out goes on
// after it answers). Prints posts/s and CPU microseconds per post of each (the standalone's
// also until it applied the round's posts: its fan-out included), and their ratio.
// Needs wrk (apt-get install -y wrk) and `npm run build`.
// Usage: node scripts/posts-floor.mjs [--seconds 8] [--connections 64] [--rounds 2]
import { execFile, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import pidusage from 'pidusage';
import { startStandalone } from '@feedmill/harness';
import { everythingApplied, mediumWorkloadImported } from './medium-workload.mjs';
import { wrkPosts } from './wrk-scripts.mjs';

const { values } = parseArgs({ options: { seconds: { type: 'string', default: '8' }, connections: { type: 'string', default: '64' }, rounds: { type: 'string', default: '2' }, serve: { type: 'string' } } });
const run = promisify(execFile);

/** Serves bare durable posts on a free port (returned): one file, appends grouped into one write and one fdatasync. */
async function serveBarePosts(file) {
  const handle = await open(file, 'a');
  let queued = [];
  let writing = false;
  const flush = async () => {
    writing = true;
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        await handle.writev(batch.map((entry) => entry.line));
        await handle.datasync();
      } catch (error) {
        console.error(`bare server: a group write failed: ${error.message}`);
        for (const entry of batch) entry.refuse();
        continue;
      }
      for (const entry of batch) entry.done();
    }
    writing = false;
  };
  const server = createServer((request, response) => {
    const chunks = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', () => {
      let post;
      try {
        post = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        post = undefined;
      }
      if (typeof post?.actor !== 'string' || typeof post.verb !== 'string' || typeof post.object !== 'string') {
        response.writeHead(400, { 'content-type': 'application/json' }).end('{"code":"invalid"}');
        return;
      }
      const stored = JSON.stringify({ id: randomUUID(), feed: request.url, actor: post.actor, verb: post.verb, object: post.object, time: new Date().toISOString() });
      queued.push({
        line: Buffer.from(`${stored}\n`),
        done: () => response.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(stored) }).end(stored),
        refuse: () => response.writeHead(500, { 'content-type': 'application/json' }).end('{"code":"internal"}'),
      });
      if (!writing) void flush();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server.address().port;
}

/** The bare server, in a process of its own (this script with --serve), so that the CPU measured is its own. */
async function startBareServer(file) {
  const child = fork(fileURLToPath(import.meta.url), ['--serve', file], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const [{ port }] = await once(child, 'message');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: async () => {
      const exited = once(child, 'exit');
      child.disconnect();
      await exited;
    },
  };
}

/** posts/s and CPU µs per post of `pid` under wrk's load against `baseUrl`; with `settled`, also its CPU until that resolves. */
async function measure(script, baseUrl, pid, settled) {
  const before = (await pidusage(pid)).ctime;
  const { stdout } = await run('wrk', ['-t1', `-c${values.connections}`, `-d${values.seconds}s`, '-s', script, baseUrl], { encoding: 'utf8' });
  const after = (await pidusage(pid)).ctime;
  if (settled) await settled();
  const afterSettled = settled ? (await pidusage(pid)).ctime : after;
  pidusage.clear();
  const posts = Number(stdout.match(/(\d+) requests in/)[1]);
  const failed = Number(stdout.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
  const socketErrors = stdout.match(/Socket errors: (.*)/)?.[1];
  if (failed > 0 || socketErrors) throw new Error(`posts to ${baseUrl}: ${failed} answered other than 2xx${socketErrors ? `; socket errors: ${socketErrors}` : ''}`);
  const perPost = (ms) => Math.round((ms * 1000) / posts);
  return {
    postsPerSecond: Math.round(Number(stdout.match(/Requests\/sec:\s+([\d.]+)/)[1])),
    cpuMicrosecondsPerPost: perPost(after - before),
    ...(settled && { cpuMicrosecondsPerPostUntilApplied: perPost(afterSettled - before) }),
  };
}

async function compare() {
  const dir = await mkdtemp(join(tmpdir(), 'feedmill-posts-floor-'));
  await writeFile(join(dir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 800 } } }));
  const standalone = await startStandalone({ dataDir: join(dir, 'data'), env: { FEED_CONFIG: join(dir, 'feeds.json'), SNAPSHOTS: 'off', LOG_LEVEL: 'warn' } });
  const bare = await startBareServer(join(dir, 'bare.log'));
  try {
    const workload = await mediumWorkloadImported(standalone.baseUrl);
    // Every producer's first post, outside the window (it waits for its feed's key to be written).
    let first = 0;
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (first < workload.profile.producers) {
          const producer = first++;
          const answer = await fetch(`${standalone.baseUrl}/v1/feeds/user/p${producer}/activities`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ actor: `p${producer}`, verb: 'post', object: 'first' }) });
          if (answer.status !== 201) throw new Error(`a first post answered ${answer.status}`);
        }
      }),
    );
    const applied = () => everythingApplied(standalone.baseUrl);
    await applied();
    const script = await wrkPosts(
      dir,
      Array.from({ length: 40_000 }, () => {
        const producer = workload.nextPoster();
        return { path: `/v1/feeds/user/p${producer}/activities`, body: JSON.stringify({ actor: `p${producer}`, verb: 'post', object: `object:${Math.floor(workload.chance() * 1e9)}` }) };
      }),
    );
    for (let round = 1; round <= Number(values.rounds); round++) {
      const floor = await measure(script, bare.baseUrl, bare.pid);
      const feedmill = await measure(script, standalone.baseUrl, standalone.processes[0].child.pid, applied);
      console.log(JSON.stringify({ round, bare: floor, standalone: feedmill, standaloneOfBare: Math.round((feedmill.postsPerSecond / floor.postsPerSecond) * 100) / 100 }));
    }
  } finally {
    await bare.stop();
    await standalone.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

if (values.serve) {
  // The bare server's own process: serves until the parent lets go of it.
  process.send({ port: await serveBarePosts(values.serve) });
  process.on('disconnect', () => process.exit(0));
} else {
  await compare();
}

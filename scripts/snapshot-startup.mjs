// Measures how long a standalone takes to start on a large file log with and without
// snapshots, and how long writing the snapshots takes at shutdown. Writes a log shaped like
// the benchmark's medium profile (readers following producers, posts) into a temp directory.
// Usage: node scripts/snapshot-startup.mjs [--readers 30000] [--producers 5000] [--follows 7] [--posts 100000]
// Needs `npm run build` first.
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, stripVTControlCharacters } from 'node:util';
import { feedEvents, activityStream, followsImportStream } from '@feedmill/contracts';
import { FileEventLog } from '@feedmill/event-log';

const { values } = parseArgs({
  options: {
    readers: { type: 'string', default: '30000' },
    producers: { type: 'string', default: '5000' },
    follows: { type: 'string', default: '7' },
    posts: { type: 'string', default: '100000' },
    port: { type: 'string', default: '3917' },
  },
});
const readers = Number(values.readers);
const producers = Number(values.producers);
const follows = Number(values.follows);
const posts = Number(values.posts);

const dir = await mkdtemp(join(tmpdir(), 'feedmill-snapshot-startup-'));
const configPath = join(dir, 'feeds.json');
await writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', cap: 100 } } }));

async function writeLog() {
  const started = performance.now();
  const log = await FileEventLog.open({ dir });
  // Follows in batches of 10,000, as the bulk import writes them.
  let pairs = [];
  let batch = 0;
  const flush = async () => {
    if (pairs.length === 0) return;
    const id = `b${batch++}`;
    await log.appendToStream(followsImportStream(id), [feedEvents.encode({ type: 'FeedsFollowed', data: { id, time: '2026-01-01T00:00:00.000Z', follows: pairs } })]);
    pairs = [];
  };
  for (let r = 0; r < readers; r++) {
    for (let f = 0; f < follows; f++) pairs.push([`timeline:r${r}`, `user:p${(r * 7919 + f * 104_729) % producers}`]);
    if (pairs.length >= 10_000) await flush();
  }
  await flush();
  // Posts one event each, as the API writes them; appends pipelined 1,000 at a time.
  const revisions = new Map();
  for (let n = 0; n < posts; n += 1_000) {
    const appends = [];
    for (let i = n; i < Math.min(posts, n + 1_000); i++) {
      const feed = `user:p${i % producers}`;
      const revision = revisions.get(feed) ?? -1;
      revisions.set(feed, revision + 1);
      const activity = { id: `a${i}`, feed, actor: feed, verb: 'post', object: `object ${i}`, time: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), extra: { text: 'x'.repeat(200) } };
      appends.push(log.appendToStream(activityStream(feed), [feedEvents.encode({ type: 'ActivityAdded', data: { activity } })], { expectedVersion: revision === -1 ? 'no_stream' : revision }));
    }
    await Promise.all(appends);
  }
  const head = await log.headPosition();
  await log.close();
  console.log(`log: ${readers * follows} follows, ${posts} posts, ${head} events, written in ${Math.round(performance.now() - started)} ms`);
}

/** Starts the standalone, returns the time to a ready /readyz and its output, then stops it with SIGTERM. */
async function startAndStop(env) {
  const started = performance.now();
  const child = spawn(process.execPath, ['apps/standalone/dist/main.js'], {
    env: { ...process.env, PORT: values.port, FEEDMILL_DATA_DIR: dir, FEED_CONFIG: configPath, LOG_LEVEL: 'log', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (c) => (output += c));
  child.stderr.on('data', (c) => (output += c));
  const exited = new Promise((resolve) => child.once('exit', resolve));
  for (;;) {
    if (child.exitCode !== null) throw new Error(`standalone exited:\n${output}`);
    const response = await fetch(`http://127.0.0.1:${values.port}/readyz`).catch(() => undefined);
    if (response?.status === 200) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const readyMs = performance.now() - started;
  const stopping = performance.now();
  child.kill('SIGTERM');
  await exited;
  const stopMs = performance.now() - stopping;
  const lines = output.split('\n').filter((l) => /caught up|restored|wrote|skipped/.test(l)).map((l) => stripVTControlCharacters(l).replace(/^.*?(\[\w+\])/, '$1'));
  return { readyMs: Math.round(readyMs), stopMs: Math.round(stopMs), lines };
}

try {
  await writeLog();
  for (const [label, env] of [
    ['without snapshots', { SNAPSHOTS: 'off' }],
    ['snapshots on, none yet (full replay, writes them at shutdown)', { SNAPSHOTS: 'on' }],
    ['from snapshots', { SNAPSHOTS: 'on' }],
    ['without snapshots, again', { SNAPSHOTS: 'off' }],
    ['from snapshots, again', { SNAPSHOTS: 'on' }],
  ]) {
    const result = await startAndStop(env);
    console.log(`\n${label}: ready in ${result.readyMs} ms, stopped in ${result.stopMs} ms`);
    for (const line of result.lines) console.log(`  ${line}`);
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}

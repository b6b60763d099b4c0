// How long a destroyed feed key's bytes stay on the disks of a JetStream cluster whose key
// bucket has three replicas. Destroying a key erases its message from the bucket's stream on
// every server, but each server's Raft log of that stream (`$SYS/_js_/S-R3F-*`) still holds
// the write that stored the key until NATS compacts that log. This starts three nats-servers
// on this machine in one cluster, stores two keys in a bucket with three replicas, destroys
// one, and looks every few seconds for its bytes (base64 as stored, and raw) in each
// server's store directory. Exits 0 once no file holds them while every server still holds
// the kept key (so that the search is seen to find what is there), 1 when some file still
// holds them after `--max-seconds`, 2 when the run itself fails. Needs nats-server on PATH
// (or NATS_SERVER_BIN) and `npm run build`.
// Usage: node scripts/replicated-key-erasure.mjs [--max-seconds 300] [--every 5]
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { JetStreamFeedKeyStore } from '@feedmill/event-log';
import { findNatsServer, freePort, waitFor } from '@feedmill/harness';

const { values } = parseArgs({ options: { 'max-seconds': { type: 'string', default: '300' }, every: { type: 'string', default: '5' } } });
const binary = findNatsServer();
if (!binary) {
  console.error('nats-server was not found on PATH (install it: apt-get install -y nats-server, or set NATS_SERVER_BIN)');
  process.exit(2);
}

const servers = [];
for (const name of ['n0', 'n1', 'n2']) servers.push({ name, port: await freePort(), routePort: await freePort(), dir: await mkdtemp(join(tmpdir(), `feedmill-r3-${name}-`)) });
const processes = servers.map((server) =>
  spawn(binary, ['-a', '127.0.0.1', '-p', String(server.port), '-js', '-sd', server.dir, '-n', server.name, '--cluster_name', 'feedmill-r3', '--cluster', `nats://127.0.0.1:${server.routePort}`, '--routes', servers.filter((other) => other !== server).map((other) => `nats://127.0.0.1:${other.routePort}`).join(',')], { stdio: 'ignore' }),
);

/** Files under `dir` (relative) holding any of `needles`. */
async function filesHolding(dir, needles) {
  const found = [];
  // NATS deletes files and folders of its Raft logs as it compacts them: a walk that meets one
  // going is made again.
  const entries = await waitFor(() => readdir(dir, { recursive: true, withFileTypes: true }).catch((error) => (error.code === 'ENOENT' ? undefined : Promise.reject(error))), { timeoutMs: 10_000, intervalMs: 100, what: `a listing of ${dir}` });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    const bytes = await readFile(path).catch(() => undefined);
    if (bytes && needles.some((needle) => bytes.includes(needle))) found.push(path.slice(dir.length + 1));
  }
  return found;
}

let exitCode = 1;
let store;
const stopped = (child) => child.exitCode !== null || child.signalCode !== null;
try {
  // The bucket is created once the three servers have formed the cluster and elected a meta leader.
  store = await waitFor(() => JetStreamFeedKeyStore.connect({ servers: servers.map((server) => `nats://127.0.0.1:${server.port}`), bucket: 'R3_feed_keys', replicas: 3 }).catch(() => undefined), { timeoutMs: 30_000, intervalMs: 500, what: 'a three-server JetStream cluster' });
  const keys = await store.currentKeys(['user:erased', 'user:kept']);
  const erased = keys.get('user:erased');
  const kept = keys.get('user:kept');
  const needlesOf = (key) => [Buffer.from(key.secret.toString('base64')), key.secret];
  await store.destroy([{ feed: erased.feed, id: erased.id }]);
  const left = await store.find([erased, kept].map((key) => ({ feed: key.feed, id: key.id })));
  console.log(`destroyed one of two keys; the bucket still finds ${left.size} (the kept one)`);
  const destroyedAt = Date.now();
  for (;;) {
    const holding = await Promise.all(servers.map(async (server) => ({ server, erased: await filesHolding(server.dir, needlesOf(erased)), kept: (await filesHolding(server.dir, needlesOf(kept))).length })));
    const seconds = Math.round((Date.now() - destroyedAt) / 1000);
    console.log(`${seconds} s after the key was destroyed: ${holding.map(({ server, erased, kept }) => `${server.name} ${erased.length ? erased.join(', ') : 'none'} (kept key in ${kept} files)`).join('; ')}`);
    if (holding.every(({ erased, kept }) => erased.length === 0 && kept > 0)) {
      console.log(`no server holds the destroyed key's bytes ${seconds} s after it was destroyed`);
      exitCode = 0;
      break;
    }
    if (seconds >= Number(values['max-seconds'])) {
      console.log(`the destroyed key's bytes are still on disk after ${seconds} s`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, Number(values.every) * 1000));
  }
} catch (error) {
  console.error(`the run failed: ${error instanceof Error ? error.message : String(error)}`);
  exitCode = 2;
} finally {
  await store?.close().catch(() => undefined);
  await Promise.all(
    processes.map(
      (child) =>
        new Promise((resolve) => {
          if (stopped(child)) return resolve();
          child.once('exit', resolve);
          child.kill('SIGTERM');
          setTimeout(() => stopped(child) || child.kill('SIGKILL'), 10_000).unref();
        }),
    ),
  );
  for (const server of servers) await rm(server.dir, { recursive: true, force: true }).catch(() => undefined);
}
process.exit(exitCode);

// Runs feedmill as processes over NATS: gateway, content, graph, FANOUT_WORKERS fan-out
// processes (default 1; one plans at a time, all apply the chunk jobs of large posts), and
// TIMELINE_REPLICAS timeline processes (default 1) sharing TIMELINE_PARTITIONS partitions of
// the timelines (default 1), each owning those whose number modulo TIMELINE_REPLICAS is its index.
// When nothing answers at NATS_URL on this machine, starts a local nats-server with
// JetStream (installing Debian's package first when it is missing and we are root).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';

const natsUrl = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';
const { hostname, port } = new URL(natsUrl);
const dataDir = resolve(process.env.FEEDMILL_DATA_DIR ?? './data');
/** A whole number from `min` to `max` read from the environment variable `name`, or its default; anything else stops here. */
function count(name, fallback, min, max) {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < min || value > max) {
    console.error(`[cluster] ${name} must be a whole number from ${min} to ${max}, not ${JSON.stringify(process.env[name])}`);
    process.exit(2);
  }
  return value;
}
const fanoutWorkers = count('FANOUT_WORKERS', 1, 1, 64);
// Timelines in TIMELINE_PARTITIONS partitions, shared by TIMELINE_REPLICAS processes, each given its place.
const timelinePartitions = count('TIMELINE_PARTITIONS', 1, 1, 1024);
const timelineReplicas = count('TIMELINE_REPLICAS', 1, 1, timelinePartitions);
const children = [];

function reachable() {
  return new Promise((done) => {
    const socket = connect({ host: hostname, port: Number(port || 4222) });
    socket.once('connect', () => (socket.destroy(), done(true)));
    socket.once('error', () => done(false));
  });
}

function natsServerBinary() {
  for (const candidate of ['nats-server', '/usr/sbin/nats-server']) {
    if (spawnSync(candidate, ['--version']).status === 0) return candidate;
  }
  if (process.getuid?.() === 0) {
    console.log('[cluster] installing nats-server (apt-get install -y nats-server)');
    spawnSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
    spawnSync('apt-get', ['install', '-y', '-qq', 'nats-server'], { stdio: 'inherit' });
    if (spawnSync('nats-server', ['--version']).status === 0) return 'nats-server';
  }
  throw new Error(`no NATS at ${natsUrl} and no nats-server to start: install it (apt-get install -y nats-server) or set NATS_URL`);
}

/** Fan-out processes still running: the others take over the work of one that exits. */
const fanouts = new Set();

function run(name, command, args, env = {}) {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = `[${name}] `;
  const forward = (stream) => (chunk) => stream.write(chunk.toString().replace(/^(?=.)/gm, prefix));
  child.stdout.on('data', forward(process.stdout));
  child.stderr.on('data', forward(process.stderr));
  if (name.startsWith('fanout')) fanouts.add(child);
  child.once('exit', (code, signal) => {
    if (stopping) return;
    fanouts.delete(child);
    if (name.startsWith('fanout') && fanouts.size > 0) {
      console.error(`${prefix}exited (${signal ?? code}); ${fanouts.size} fan-out process${fanouts.size === 1 ? '' : 'es'} carry on`);
      return;
    }
    console.error(`${prefix}exited (${signal ?? code}); stopping the cluster`);
    stop(1);
  });
  children.push(child);
  return child;
}

let stopping = false;
function stop(code = 0) {
  if (stopping) return;
  stopping = true;
  // Services first, NATS last, so that they can drain.
  for (const child of children.slice().reverse()) child.kill('SIGTERM');
  setTimeout(() => process.exit(code), 3000).unref();
  Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r() : c.once('exit', r))))).then(() => process.exit(code));
}
process.on('SIGINT', () => stop(0));
process.on('SIGTERM', () => stop(0));

if (!(await reachable())) {
  if (!['127.0.0.1', 'localhost', '::1'].includes(hostname)) throw new Error(`nothing answers at ${natsUrl}`);
  const storeDir = join(dataDir, 'nats');
  mkdirSync(storeDir, { recursive: true });
  run('nats', natsServerBinary(), ['-a', '127.0.0.1', '-p', String(port || 4222), '-js', '-sd', storeDir]);
  for (let i = 0; i < 100 && !(await reachable()); i++) await new Promise((r) => setTimeout(r, 100));
}

const env = { NATS_URL: natsUrl, LOG: process.env.LOG ?? 'jetstream', TIMELINE_PARTITIONS: String(timelinePartitions), TIMELINE_REPLICAS: String(timelineReplicas) };
for (const service of ['content', 'graph']) run(service, process.execPath, [`apps/${service}/dist/main.js`], env);
for (let i = 0; i < timelineReplicas; i++) {
  const name = timelineReplicas === 1 ? 'timeline' : `timeline-${i}`;
  run(name, process.execPath, ['apps/timeline/dist/main.js'], timelineReplicas === 1 ? env : { ...env, TIMELINE_REPLICA_INDEX: String(i) });
}
for (let i = 1; i <= fanoutWorkers; i++) run(fanoutWorkers === 1 ? 'fanout' : `fanout-${i}`, process.execPath, ['apps/fanout/dist/main.js'], env);
run('gateway', process.execPath, ['apps/gateway/dist/main.js'], env);
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : word.endsWith('s') ? 'es' : 's'}`;
console.log(
  `[cluster] gateway on http://127.0.0.1:${process.env.PORT ?? 3000}, ${plural(fanoutWorkers, 'fan-out process')}, ${plural(timelineReplicas, 'timeline process')} for ${plural(timelinePartitions, 'partition')}, services over ${natsUrl}; Ctrl-C stops all`,
);

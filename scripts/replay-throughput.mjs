// Measures a rebuild of the content and graph projections in this process: writes a sealed
// file log of --events events shaped like the benchmark's medium workload (its graph as bulk
// imports, then single posts, as `npm run bench:restart` writes it) into --dir unless one is
// there, reads it back (opening every box), and applies it to a new memory graph and content
// store. Prints the seconds of each part and events/s of the two applies. With --opens it
// also times opening every activity's box alone, the opened data kept as a replay keeps it
// (µs per open, four rounds). With --start it then times a standalone's full replay of that log:
// spawned with `ring` timelines and SNAPSHOTS=off, seconds until `/readyz` answers 200 and the
// CPU seconds it used until then (three starts). After `npm run build`.
// Usage: node scripts/replay-throughput.mjs [--events 200000] [--dir /tmp/feedmill-replay-200000] [--opens] [--start]
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pidusage from 'pidusage';
import { profiles } from '@feedmill/bench/dist/profiles.js';
import { writeWorkloadLog } from '@feedmill/bench/dist/restart-log.js';
import { Workload } from '@feedmill/bench/dist/workload.js';
import { FileEventLog, FileFeedKeyStore, openEventData, openSealedFileLog, sealedKeyRefs } from '@feedmill/event-log';
import { readAllEvents, startStandalone } from '@feedmill/harness';
import { MemoryContentStore, MemoryGraphStore } from '@feedmill/stores';

const { values } = parseArgs({ options: { events: { type: 'string', default: '200000' }, dir: { type: 'string' }, opens: { type: 'boolean', default: false }, start: { type: 'boolean', default: false } } });
const events = Number(values.events);
const dir = values.dir ?? `/tmp/feedmill-replay-${events}`;
if (!existsSync(dir)) {
  await mkdir(dir, { recursive: true });
  console.log(`writing ${events} events to ${dir}`);
  await writeWorkloadLog(dir, new Workload(profiles.medium, 42), events, () => undefined);
}

const log = await openSealedFileLog({ dir });
let started = performance.now();
const records = await readAllEvents(log);
const readSeconds = (performance.now() - started) / 1000;
await log.close();
started = performance.now();
await new MemoryGraphStore().apply(records);
const graphSeconds = (performance.now() - started) / 1000;
started = performance.now();
await new MemoryContentStore().apply(records);
const contentSeconds = (performance.now() - started) / 1000;
const round = (seconds) => Math.round(seconds * 1000) / 1000;
console.log(
  JSON.stringify({ events: records.length, readSeconds: round(readSeconds), graphSeconds: round(graphSeconds), contentSeconds: round(contentSeconds), appliedPerSecond: Math.round(records.length / (graphSeconds + contentSeconds)) }),
);

if (values.opens) {
  // The log as stored (boxes sealed) and every key its boxes name, looked up once.
  const plain = await FileEventLog.open({ dir });
  const sealed = (await readAllEvents(plain)).filter((record) => record.type === 'ActivityAdded');
  await plain.close();
  const keyStore = await FileFeedKeyStore.open(dir);
  const refs = new Map(sealed.flatMap((record) => sealedKeyRefs(record.type, record.data)).map((ref) => [ref.id, ref]));
  const keys = await keyStore.find([...refs.values()]);
  await keyStore.close();
  const keyOf = (ref) => keys.get(ref.id);
  for (let round = 1; round <= 4; round++) {
    const kept = new Array(sealed.length);
    const started = performance.now();
    for (let i = 0; i < sealed.length; i++) kept[i] = openEventData(sealed[i].type, sealed[i].data, keyOf).data;
    console.log(JSON.stringify({ round, opened: sealed.length, microsecondsPerOpen: Math.round(((performance.now() - started) * 1000 * 100) / sealed.length) / 100 }));
  }
}

if (values.start) {
  const config = join(await mkdtemp(join(tmpdir(), 'feedmill-replay-start-')), 'feeds.json');
  await writeFile(config, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 800 } } }));
  for (let start = 1; start <= 3; start++) {
    const started = performance.now();
    const standalone = await startStandalone({ dataDir: dir, env: { FEED_CONFIG: config, SNAPSHOTS: 'off' }, readyTimeoutMs: 30 * 60_000 });
    const readySeconds = (performance.now() - started) / 1000;
    // Every thread's CPU until ready, the collector's too.
    const cpuSeconds = (await pidusage(standalone.processes[0].child.pid)).ctime / 1000;
    pidusage.clear();
    await standalone.stop();
    console.log(JSON.stringify({ start, events: records.length, readySeconds: round(readySeconds), cpuSeconds: round(cpuSeconds) }));
  }
}

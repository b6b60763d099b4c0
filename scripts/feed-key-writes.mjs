// How long new feed keys take to become durable in the file key store (`feed-keys.jsonl`,
// the standalone's), in a fresh directory: one caller asking for one key at a time, --keys
// calls made in one tick, and 64 callers asking one key after another (as 64 connections'
// first posts do). Prints milliseconds for each. After `npm run build`.
// Usage: node scripts/feed-key-writes.mjs [--keys 3000]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { FileFeedKeyStore } from '@feedmill/event-log';

const { values } = parseArgs({ options: { keys: { type: 'string', default: '3000' } } });
const keys = Number(values.keys);
const dir = await mkdtemp(join(tmpdir(), 'feedmill-key-writes-'));
const store = await FileFeedKeyStore.open(dir);
const round = (ms) => Math.round(ms * 10) / 10;
try {
  let started = performance.now();
  for (let i = 0; i < 1000; i++) await store.currentKeys([`user:one-${i}`]);
  const oneAtATimeMs = (performance.now() - started) / 1000;

  started = performance.now();
  await Promise.all(Array.from({ length: keys }, (_, i) => store.currentKeys([`user:tick-${i}`])));
  const oneTickMs = performance.now() - started;

  started = performance.now();
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => { while (next < keys) await store.currentKeys([`user:caller-${next++}`]); }));
  const sixtyFourCallersMs = performance.now() - started;

  console.log(JSON.stringify({ keys, msPerKeyOneAtATime: Math.round(oneAtATimeMs * 1000) / 1000, msForKeysInOneTick: round(oneTickMs), msForKeysFrom64Callers: round(sixtyFourCallersMs) }));
} finally {
  await store.close();
  await rm(dir, { recursive: true, force: true });
}

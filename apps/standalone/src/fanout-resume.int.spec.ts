import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FeedId } from '@feedmill/contracts';
import { loadRuntimeConfig } from '@feedmill/config';
import { memoryStores, type StoreFactory } from '@feedmill/runtime';
import { MemoryTimelineStore } from '@feedmill/stores';
import { FeedClient, waitUntilSettled } from '@feedmill/harness';
import { createStandaloneApp } from './standalone.js';

/**
 * A durable timeline store (MongoDB) keeps its position across a restart, and fan-out
 * resumes from there instead of replaying the log. Its follower index must hold every
 * follow and unfollow before that position all the same. Here one memory timeline store
 * outlives the restart, as a durable one would.
 */
const author = 'user:a' as FeedId;
const r = 'timeline:r' as FeedId;
const s = 'timeline:s' as FeedId;
const t = 'timeline:t' as FeedId;
let dataDir: string;
let app: NestFastifyApplication | undefined;
let api: FeedClient;
let durable: MemoryTimelineStore | undefined;

async function start(): Promise<void> {
  const config = loadRuntimeConfig({ FEEDMILL_DATA_DIR: join(dataDir, 'log'), FEED_CONFIG: join(dataDir, 'feeds.json'), LOG_LEVEL: 'error', PORT: '0' });
  const stores: StoreFactory = { ...memoryStores, timeline: async (policyOf) => (durable ??= new MemoryTimelineStore(policyOf)) };
  app = await createStandaloneApp(config, { stores });
  await app.listen({ port: 0, host: '127.0.0.1' });
  api = new FeedClient(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`);
}

/** What the reader's timeline holds, without the pull path that would hide a missing delivery. */
async function stored(reader: FeedId): Promise<string[]> {
  const page = await durable!.readPage(reader, undefined, 20, async () => []);
  return page.items.map((item) => (item as { object: string }).object);
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-resume-'));
  await writeFile(join(dataDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
  await start();
});
afterAll(async () => {
  await app?.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('resumes from where a durable timeline stands with every follow and unfollow before it', async () => {
  for (const reader of [r, s, t]) expect((await api.follow(reader, author)).status).toBeLessThan(300);
  await api.post(author, { actor: 'a', verb: 'post', object: 'before' });
  expect((await api.unfollow(s, author)).status).toBe(204);
  const stoppedAt = await waitUntilSettled(api);
  expect(await durable!.position()).toBe(stoppedAt);

  await app!.close();
  await start();
  await api.post(author, { actor: 'a', verb: 'post', object: 'after' });
  await waitUntilSettled(api);
  // Fan-out did not replay the log into the store: it resumed past `stoppedAt`.
  expect((await durable!.counters()).delivered).toBe(3 + 2);
  expect({ r: await stored(r), s: await stored(s), t: await stored(t) }).toEqual({ r: ['after', 'before'], s: [], t: ['after', 'before'] });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import { loadRuntimeConfig, type RuntimeConfig } from '@feedmill/config';
import { memoryStores } from '@feedmill/runtime';
import { MemoryGraphStore, MemoryTimelineStore } from '@feedmill/stores';
import { FeedClient, waitFor, waitUntilSettled } from '@feedmill/harness';
import { createStandaloneApp } from './standalone.js';

/**
 * At a start, fan-out replays the log beside the projections of content and graph, not
 * after them, so that the file log reads (decodes, opens) each record once for all of them.
 * Here graph's replay is held back: fan-out, which plans without graph, delivers the log's
 * posts all the same, before the application has finished starting.
 */
const author = 'user:a' as FeedId;
const reader = 'timeline:r' as FeedId;
let dataDir: string;
let config: RuntimeConfig;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-replay-together-'));
  await writeFile(join(dataDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
  config = loadRuntimeConfig({ FEEDMILL_DATA_DIR: join(dataDir, 'log'), FEED_CONFIG: join(dataDir, 'feeds.json'), LOG_LEVEL: 'error', PORT: '0', SNAPSHOTS: 'off' });
});
afterAll(() => rm(dataDir, { recursive: true, force: true }));

it('delivers the log to the timelines at a start while graph is still replaying it', async () => {
  const first = await createStandaloneApp(config);
  await first.listen({ port: 0, host: '127.0.0.1' });
  const api = new FeedClient(`http://127.0.0.1:${(first.getHttpServer().address() as { port: number }).port}`);
  expect((await api.follow(reader, author)).status).toBeLessThan(300);
  for (const object of ['one', 'two', 'three']) expect((await api.post(author, { actor: 'a', verb: 'post', object })).status).toBe(201);
  await waitUntilSettled(api);
  await first.close();

  let letGraphApply!: () => void;
  const graphMayApply = new Promise<void>((resolve) => (letGraphApply = resolve));
  class HeldGraphStore extends MemoryGraphStore {
    override async apply(events: readonly RecordedEvent[]): Promise<void> {
      await graphMayApply;
      return super.apply(events);
    }
  }
  let timeline: MemoryTimelineStore | undefined;
  let again: NestFastifyApplication | undefined;
  try {
    again = await createStandaloneApp(config, {
      stores: { ...memoryStores, graph: async () => new HeldGraphStore(), timeline: async (policyOf) => (timeline = new MemoryTimelineStore(policyOf)) },
    });
    let started = false;
    const starting = again.init().then(() => (started = true));
    // Graph's catch-up holds the start (its module's bootstrap waits for it), not fan-out's.
    await waitFor(async () => ((await timeline?.counters())?.delivered === 3 ? true : undefined), { timeoutMs: 5_000, what: 'the posts delivered while graph replays' });
    expect(started).toBe(false);
    letGraphApply();
    await starting;
    const page = await timeline!.readPage(reader, undefined, 10, async () => []);
    expect(page.items.map((item) => (item as { object: string }).object)).toEqual(['three', 'two', 'one']);
  } finally {
    letGraphApply();
    await again?.close();
  }
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { timelinePartitionOf, type FeedId, type ServiceStatus } from '@feedmill/contracts';
import { loadRuntimeConfig } from '@feedmill/config';
import { memoryStores, type StoreFactory } from '@feedmill/runtime';
import { MemoryTimelineStore } from '@feedmill/stores';
import { FeedClient, waitFor, waitUntilSettled } from '@feedmill/harness';
import type { PartitionHandlers, PartitionOwnership } from '@feedmill/timeline-service';
import { createStandaloneApp } from './standalone.js';

/**
 * Timelines in four partitions, in one process: each partition has a store of its own, and
 * a partition that moves (let go, and taken again empty, as by another process) is brought
 * up by fan-out replaying the log into it alone; the others get nothing twice.
 */
const PARTITIONS = 4;
const author = 'user:a' as FeedId;
const readers = Array.from({ length: 12 }, (_, index) => `timeline:r${index}` as FeedId);
const partitionOf = (reader: FeedId) => timelinePartitionOf(reader, PARTITIONS);

/** Holds every partition, and moves one when told. */
class MovablePartitions implements PartitionOwnership {
  private handlers?: PartitionHandlers;

  start(handlers: PartitionHandlers): void {
    this.handlers = handlers;
    void (async () => {
      for (let partition = 0; partition < PARTITIONS; partition++) await handlers.take(partition);
    })();
  }

  async move(partition: number): Promise<void> {
    await this.handlers!.release(partition);
    await this.handlers!.take(partition);
  }

  async stop(): Promise<void> {}
}

let dataDir: string;
let app: NestFastifyApplication | undefined;
let api: FeedClient;
/** The store each partition holds now. */
const stores = new Map<number, MemoryTimelineStore>();
const ownership = new MovablePartitions();

/** What the reader's partition store holds, without the pull path that would hide a missing delivery. */
async function stored(reader: FeedId): Promise<string[]> {
  const page = await stores.get(partitionOf(reader))!.readPage(reader, undefined, 20, async () => []);
  return page.items.map((item) => (item as { object: string }).object);
}

const deliveredTo = async (partition: number) => (await stores.get(partition)!.counters()).delivered;
const readersIn = (partition: number) => readers.filter((reader) => partitionOf(reader) === partition).length;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-partitions-'));
  await writeFile(join(dataDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
  const config = loadRuntimeConfig({ FEEDMILL_DATA_DIR: join(dataDir, 'log'), FEED_CONFIG: join(dataDir, 'feeds.json'), LOG_LEVEL: 'error', PORT: '0', TIMELINE_PARTITIONS: String(PARTITIONS) });
  const factory: StoreFactory = {
    ...memoryStores,
    timeline: async (policyOf, options) => {
      const store = new MemoryTimelineStore(policyOf);
      stores.set(options!.partition!.index, store);
      return store;
    },
  };
  app = await createStandaloneApp(config, { stores: factory, timelineOwnership: ownership });
  await app.listen({ port: 0, host: '127.0.0.1' });
  api = new FeedClient(`http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`);
});
afterAll(async () => {
  await app?.close();
  await rm(dataDir, { recursive: true, force: true });
});

it('delivers each reader’s entries to its partition’s store, and replays a moved partition alone', async () => {
  expect(new Set(readers.map(partitionOf)).size).toBe(PARTITIONS);
  for (const reader of readers) expect((await api.follow(reader, author)).status).toBe(204);
  await api.post(author, { actor: 'a', verb: 'post', object: 'before' });
  await waitUntilSettled(api);
  for (const reader of readers) expect({ reader, stored: await stored(reader) }).toEqual({ reader, stored: ['before'] });
  const { body } = await api.call<{ services: ServiceStatus[] }>('GET', '/readyz');
  expect(body.services.find((s) => s.service === 'timeline')!.counters).toMatchObject({ partitions: PARTITIONS, partitionsAnswering: PARTITIONS, delivered: readers.length });

  const moved = partitionOf(readers[0]!);
  // A follow after the post, in the partition that moves: its backfill is replayed too.
  const late = Array.from({ length: 50 }, (_, index) => `timeline:late${index}` as FeedId).find((reader) => partitionOf(reader) === moved)!;
  expect((await api.follow(late, author)).status).toBe(204);
  await waitUntilSettled(api);
  expect(await stored(late)).toEqual(['before']);

  await ownership.move(moved);
  expect(await stored(readers[0]!)).toEqual([]);
  await api.post(author, { actor: 'a', verb: 'post', object: 'after' });
  await waitUntilSettled(api);

  for (const reader of [...readers, late]) expect({ reader, stored: await stored(reader) }).toEqual({ reader, stored: ['after', 'before'] });
  // Each store wrote every entry once: the moved partition’s new one got the log again from its start.
  for (let partition = 0; partition < PARTITIONS; partition++) {
    expect({ partition, delivered: await deliveredTo(partition) }).toEqual({ partition, delivered: 2 * readersIn(partition) + (partition === moved ? 1 : 0) });
  }
});

it('rebuilds every partition it holds in one replay, each into a new store of its own', async () => {
  const before = new Map(stores);
  expect((await api.call('POST', '/v1/admin/rebuild/timeline')).status).toBe(202);
  await waitFor(async () => ((await api.call<{ state: string }>('GET', '/v1/admin/rebuild/timeline')).body.state === 'done' ? true : undefined), { what: 'the rebuild to finish' });
  for (let partition = 0; partition < PARTITIONS; partition++) expect(stores.get(partition)).not.toBe(before.get(partition));
  for (const reader of readers) expect({ reader, stored: await stored(reader) }).toEqual({ reader, stored: ['after', 'before'] });
  await api.post(author, { actor: 'a', verb: 'post', object: 'rebuilt' });
  await waitUntilSettled(api);
  for (const reader of readers) expect({ reader, stored: await stored(reader) }).toEqual({ reader, stored: ['rebuilt', 'after', 'before'] });
});

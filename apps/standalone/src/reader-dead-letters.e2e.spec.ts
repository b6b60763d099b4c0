import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DeliverRequest, FeedId } from '@feedmill/contracts';
import { loadRuntimeConfig } from '@feedmill/config';
import { memoryStores, type StoreFactory } from '@feedmill/runtime';
import { MemoryTimelineStore, type TimelineStore } from '@feedmill/stores';
import { FeedClient, waitFor } from '@feedmill/harness';
import { createStandaloneApp } from './standalone.js';

const poisoned = 'timeline:r13' as FeedId;

/**
 * A timeline store that refuses, while `refusing` is set, any request inserting an entry
 * for one reader: the fault a broken or oversized document of one reader gives. It notes
 * the readers each applied request delivered to. The rest is the real memory store.
 */
class OneReaderRefusingStore extends MemoryTimelineStore {
  refusing = true;
  readonly deliveredTo: FeedId[][] = [];

  override deliver(request: DeliverRequest) {
    const toPoisoned = request.deliveries.some((d) => d.kind === 'insert' && d.readers.includes(poisoned));
    if (this.refusing && toPoisoned) return Promise.reject(new Error(`the entry for ${poisoned} is refused`));
    this.deliveredTo.push(request.deliveries.flatMap((d) => ('readers' in d ? d.readers : [d.reader])));
    return super.deliver(request);
  }
}

const bob = 'user:bob' as FeedId;
const readers = Array.from({ length: 51 }, (_, i) => `timeline:r${i}` as FeedId);
const others = readers.filter((reader) => reader !== poisoned);
/** Retries slow enough that readers who wait for them would be seen waiting. */
const READER_RETRY = { attempts: 3, firstBackoffMs: 1_000, maxFailingReaders: 16 };
let dataDir: string;
let app: NestFastifyApplication | undefined;
let store: OneReaderRefusingStore;
let api: FeedClient;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-reader-deadletters-'));
  await writeFile(join(dataDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
  const config = loadRuntimeConfig({ FEEDMILL_DATA_DIR: join(dataDir, 'log'), FEED_CONFIG: join(dataDir, 'feeds.json'), LOG_LEVEL: 'error', PORT: '0' });
  const stores: StoreFactory = {
    ...memoryStores,
    timeline: async (policyOf): Promise<TimelineStore> => (store = new OneReaderRefusingStore(policyOf)),
  };
  app = await createStandaloneApp(config, { stores, fanoutRetry: { attempts: 3, firstBackoffMs: 10 }, readerRetry: READER_RETRY });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  api = new FeedClient(`http://127.0.0.1:${address.port}`);
});
afterAll(async () => {
  await app?.close();
  await rm(dataDir, { recursive: true, force: true });
});

function deadletters(...args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve('scripts/deadletters.mjs'), ...args, '--url', api.baseUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => done({ code, output }));
  });
}

const counters = (service: string) => api.counters(service);

const objects = async (reader: FeedId) => (await api.readAll(reader, 10)).map((a) => a.object);
const everyoneShows = async (who: readonly FeedId[], expected: string[]) => {
  const seen = await Promise.all(who.map(objects));
  return seen.every((shown) => JSON.stringify(shown) === JSON.stringify(expected)) ? true : undefined;
};

describe('one reader’s dead letters', () => {
  it('deliver a post to every other reader at once, set it aside for the failing reader, let later posts flow, and replay it to that reader alone', async () => {
    for (const reader of readers) expect((await api.follow(reader, bob)).status).toBe(204);
    const posted = Date.now();
    expect((await api.post(bob, { actor: 'bob', verb: 'post', object: 'news' })).status).toBe(201);

    // The other 50 readers have it before the failing reader's retries are over (1 + 2 s).
    await waitFor(() => everyoneShows(others, ['news']), { what: 'the other 50 readers to show the post', timeoutMs: 5_000 });
    expect(Date.now() - posted).toBeLessThan(READER_RETRY.firstBackoffMs * 3);
    expect(await objects(poisoned)).toEqual([]);

    // Then the failing reader's delivery is a dead letter of its own, named with its reader and reason.
    const listed = await waitFor(
      async () => {
        const letters = await api.api.deadLetters();
        return letters.items.length > 0 ? letters : undefined;
      },
      { what: 'the reader’s dead letter' },
    );
    expect(listed.items).toEqual([
      expect.objectContaining({ type: 'ActivityAdded', stream: 'feed-user:bob', revision: 0, reader: poisoned, reason: `the entry for ${poisoned} is refused`, attempts: 3 }),
    ]);
    expect(await deadletters('list')).toEqual({
      code: 0,
      output: expect.stringMatching(/^1 dead letter\(s\):\nposition \d+ {2}ActivityAdded {2}feed-user:bob#0 {2}for timeline:r13 {2}.* after 3 attempts: the entry for timeline:r13 is refused\n$/),
    });
    expect(await counters('timeline')).toMatchObject({ readerDeadLettered: 1 });
    // Not the event's dead letter: fan-out delivered the event.
    expect(await counters('fanout')).toEqual({ logHead: expect.any(Number), deadLettered: 0 });

    // A later post (one the failing reader's store takes: it comes before the fault is fixed) flows for everyone.
    store.refusing = false;
    expect((await api.post(bob, { actor: 'bob', verb: 'post', object: 'later' })).status).toBe(201);
    await waitFor(() => everyoneShows(others, ['later', 'news']), { what: 'every other reader to show the later post' });
    await waitFor(async () => (JSON.stringify(await objects(poisoned)) === '["later"]' ? true : undefined), { what: `${poisoned} to show the later post` });

    // Replaying while the fault lasts leaves the letter open and says so.
    store.refusing = true;
    expect(await deadletters('replay')).toEqual({ code: 1, output: expect.stringContaining('replayed 0; 1 still dead') });
    expect(await objects(poisoned)).toEqual(['later']);

    // Once it is fixed, the replay delivers the post to that reader alone, once.
    store.refusing = false;
    store.deliveredTo.splice(0);
    expect(await deadletters('replay')).toEqual({ code: 0, output: 'replayed 1; 0 still dead\n' });
    expect(store.deliveredTo.flat()).toEqual([poisoned]);
    expect(await objects(poisoned)).toEqual(['later', 'news']);
    expect(await everyoneShows(others, ['later', 'news'])).toBe(true);
    expect(await deadletters('list')).toEqual({ code: 0, output: 'no dead letters\n' });
    expect(await deadletters('replay')).toEqual({ code: 0, output: 'replayed 0; 0 still dead\n' });
    expect(store.deliveredTo.flat()).toEqual([poisoned]);
  });
});

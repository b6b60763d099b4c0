import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { FeedmillError, type DeliverRequest, type FeedId } from '@feedmill/contracts';
import { loadRuntimeConfig } from '@feedmill/config';
import { memoryStores, type StoreFactory } from '@feedmill/runtime';
import { MemoryTimelineStore, type TimelineStore } from '@feedmill/stores';
import { FeedClient, waitFor } from '@feedmill/harness';
import { createStandaloneApp } from './standalone.js';

/**
 * A timeline store that refuses, while `refusing` is set, any batch delivering an activity
 * whose object is "poison": the fault a store full or broken for one entry would give. The
 * rest is the real memory store.
 */
class RefusingTimelineStore extends MemoryTimelineStore {
  refusing = true;
  /** Refuse as a store that is down for a while does: unavailable, which passes with time. */
  unavailable = false;

  override deliver(request: DeliverRequest) {
    const poisoned = request.deliveries.some((d) => d.kind === 'insert' && d.activity.object === 'poison');
    if (this.refusing && poisoned) return Promise.reject(this.unavailable ? new FeedmillError('unavailable', 'the store is not answering') : new Error('the store refuses this entry'));
    return super.deliver(request);
  }
}

const bob = 'user:bob' as FeedId;
const alice = 'timeline:alice' as FeedId;
let dataDir: string;
let app: NestFastifyApplication | undefined;
let store: RefusingTimelineStore;
let api: FeedClient;

async function start(): Promise<void> {
  const config = loadRuntimeConfig({ FEEDMILL_DATA_DIR: join(dataDir, 'log'), FEED_CONFIG: join(dataDir, 'feeds.json'), LOG_LEVEL: 'error', PORT: '0' });
  const stores: StoreFactory = {
    ...memoryStores,
    timeline: async (policyOf): Promise<TimelineStore> => (store = new RefusingTimelineStore(policyOf)),
  };
  app = await createStandaloneApp(config, { stores, fanoutRetry: { attempts: 3, firstBackoffMs: 10 } });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.getHttpServer().address() as { port: number };
  api = new FeedClient(`http://127.0.0.1:${address.port}`);
}

function deadletters(...args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [resolve('scripts/deadletters.mjs'), ...args, '--url', api.baseUrl], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => done({ code, output }));
  });
}

const fanoutCounters = () => api.counters('fanout');

const ids = async (reader: FeedId) => (await api.readAll(reader, 4)).map((a) => a.object);
const shows = (reader: FeedId, objects: string[]) =>
  waitFor(async () => (JSON.stringify(await ids(reader)) === JSON.stringify(objects) ? true : undefined), { what: `${reader} to show ${objects.join(', ')}` });

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-deadletters-'));
  await writeFile(join(dataDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
  await start();
});
afterAll(async () => {
  await app?.close();
  await rm(dataDir, { recursive: true, force: true });
});

describe('dead letters', () => {
  it('set aside a delivery that keeps failing, let the rest flow, survive a restart, and replay once the fault is gone', async () => {
    await api.follow(alice, bob);
    for (const object of ['first', 'poison', 'third']) expect((await api.post(bob, { actor: 'bob', verb: 'post', object })).status).toBe(201);
    await shows(alice, ['third', 'first']);
    expect(await fanoutCounters()).toEqual({ logHead: expect.any(Number), deadLettered: 1 });
    const listed = await deadletters('list');
    expect(listed).toEqual({ code: 0, output: expect.stringMatching(/^1 dead letter\(s\):\nposition \d+ {2}ActivityAdded {2}feed-user:bob#1 .* after 3 attempts: delivering to feed\.timeline\.deliver failed: internal error\n$/) });

    // Kept in the log: a restart (which replays the log into new timelines) still lists it.
    await app!.close();
    await start();
    await shows(alice, ['third', 'first']);
    expect((await deadletters('list')).output).toContain('1 dead letter(s):');
    expect(await fanoutCounters()).toEqual({ logHead: expect.any(Number), deadLettered: 1 });

    // Replaying while the fault lasts leaves it a dead letter and says so.
    expect(await deadletters('replay')).toEqual({ code: 1, output: expect.stringContaining('replayed 0; 1 still dead') });
    store.refusing = false;
    expect(await deadletters('replay')).toEqual({ code: 0, output: 'replayed 1; 0 still dead\n' });
    await shows(alice, ['third', 'poison', 'first']);
    expect(await deadletters('list')).toEqual({ code: 0, output: 'no dead letters\n' });
    expect(await fanoutCounters()).toEqual({ logHead: expect.any(Number), deadLettered: 0 });
  });

  it('waits out a failure that passes with time instead of dead-lettering it', async () => {
    const erin = 'user:erin' as FeedId;
    const fay = 'timeline:fay' as FeedId;
    Object.assign(store, { refusing: true, unavailable: true });
    await api.follow(fay, erin);
    await api.post(erin, { actor: 'erin', verb: 'post', object: 'poison' });
    // Longer than the retries of the batch and of the event alone (3 attempts each, 10 ms doubling).
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await ids(fay)).toEqual([]);
    expect(await fanoutCounters()).toEqual({ logHead: expect.any(Number), deadLettered: 0 });
    Object.assign(store, { refusing: false, unavailable: false });
    await shows(fay, ['poison']);
    expect(await deadletters('list')).toEqual({ code: 0, output: 'no dead letters\n' });
  });

  it('replays as the log now stands: a dead-lettered post removed since stays away', async () => {
    const carol = 'user:carol' as FeedId;
    const dan = 'timeline:dan' as FeedId;
    store.refusing = true;
    await api.follow(dan, carol);
    const poison = (await api.post(carol, { actor: 'carol', verb: 'post', object: 'poison' })).body;
    await api.post(carol, { actor: 'carol', verb: 'post', object: 'after' });
    await shows(dan, ['after']);
    expect((await api.remove(carol, poison.id)).status).toBe(204);
    store.refusing = false;
    expect(await deadletters('replay')).toEqual({ code: 0, output: 'replayed 1; 0 still dead\n' });
    expect(await ids(dan)).toEqual(['after']);
  });
});

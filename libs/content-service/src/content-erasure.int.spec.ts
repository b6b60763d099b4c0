import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activityStream, type Activity } from '@feedmill/contracts';
import { FileEventLog, FileFeedKeyStore, SealedEventLog, type EventLog, type FeedKeyStore, type SubscribeOptions, type Subscription } from '@feedmill/event-log';
import { sharedKeyStore } from '@feedmill/event-log/testing';
import { MemoryContentStore } from '@feedmill/stores';
import { ContentService } from './content.service.js';

/**
 * The log as a content replica that lags behind sees it: its subscriptions hand on nothing
 * while held, as a replica whose consumer is behind; appends and reads go through at once.
 */
class HeldBackLog implements EventLog {
  private gate: Promise<void> = Promise.resolve();
  private open: () => void = () => undefined;
  /** How often the log's head was asked for. */
  heads = 0;

  /** Two replicas append to the one file log here: neither is its only writer, unless said so. */
  constructor(
    private readonly inner: EventLog,
    readonly soleWriter = false,
  ) {}

  holdBack(): void {
    this.gate = new Promise((resolve) => (this.open = resolve));
  }

  release(): void {
    this.open();
  }

  get openSubscriptions(): number {
    return this.inner.openSubscriptions;
  }
  appendToStream: EventLog['appendToStream'] = (stream, events, options) => this.inner.appendToStream(stream, events, options);
  readStream: EventLog['readStream'] = (stream) => this.inner.readStream(stream);
  headPosition: EventLog['headPosition'] = () => (this.heads++, this.inner.headPosition());
  saveCheckpoint: EventLog['saveCheckpoint'] = (consumer, position) => this.inner.saveCheckpoint(consumer, position);
  loadCheckpoint: EventLog['loadCheckpoint'] = (consumer) => this.inner.loadCheckpoint(consumer);
  subscribeToAll(options: SubscribeOptions): Subscription {
    return this.inner.subscribeToAll({ ...options, onEvents: async (events) => (await this.gate, options.onEvents(events)) });
  }
  async close(): Promise<void> {}
}

/** One key store shared by both replicas (as a JetStream KV bucket is), closed once by the test. */
const sharedKeys = sharedKeyStore;

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-content-erasure-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

const post = (id: string, object: string) => ({ feed: 'user:a' as const, activity: { actor: 'a', verb: 'post', object }, id, receivedAt: '2026-01-01T00:00:00.000Z' });

/**
 * Two content replicas on one file log and one key store: A reads the log as it grows, B's
 * log reader can be held back. With `shared`, B decides on A's content store (as replicas
 * sharing MongoDB do), else on one of its own.
 */
async function twoReplicas(shared: boolean, keysOfB: (keys: FeedKeyStore) => FeedKeyStore = sharedKeys, storeOfB: MemoryContentStore = new MemoryContentStore()) {
  const file = await FileEventLog.open({ dir });
  const keys = await FileFeedKeyStore.open(dir);
  const lagging = new HeldBackLog(file);
  const storeA = new MemoryContentStore();
  const replicaA = new ContentService(new SealedEventLog(new HeldBackLog(file), sharedKeys(keys)), storeA);
  const replicaB = new ContentService(new SealedEventLog(lagging, keysOfB(keys)), shared ? storeA : storeOfB);
  await replicaA.onApplicationBootstrap();
  await replicaB.onApplicationBootstrap();
  const close = async () => {
    await replicaA.onModuleDestroy();
    await replicaB.onModuleDestroy();
    await file.close();
    await keys.close();
  };
  return { file, keys, lagging, replicaA, replicaB, close };
}

describe('ContentService.erase across replicas', () => {
  for (const shared of [false, true]) {
    it(`fences an erasure and a post decided at the same moment on two replicas (${shared ? 'one shared content store, as with MongoDB' : 'a content store each'}): the post, acknowledged, is appended after the erasure with a new key`, async () => {
      const { file, keys, lagging, replicaA, replicaB, close } = await twoReplicas(shared);

      // B has posted to the feed, so it holds the feed's key as the one new posts are sealed with.
      const first = await replicaB.add(post('p1', 'before the erasure'));
      await replicaA.get({ ids: [first.id], atLeast: await file.headPosition() });
      // B falls behind; A erases the feed, and its key is destroyed.
      lagging.holdBack();
      const { position } = await replicaA.erase({ feed: 'user:a', time: '2026-01-01T00:00:01.000Z' });
      // B decides a post: on what its own store holds (without the erasure), or on the shared one (with it).
      const acknowledged = replicaB.add(post('p2', 'after the erasure'));
      setTimeout(() => lagging.release(), 50);
      const second = await acknowledged;
      expect(second).toMatchObject({ id: 'p2', object: 'after the erasure' });

      // What any replica or a rebuild reads: the first post erased, the acknowledged one whole and after the erasure.
      const rebuilt = new SealedEventLog(file, sharedKeys(keys));
      const stream = await rebuilt.readStream(activityStream('user:a'));
      expect(stream.map((record) => record.type)).toEqual(['ContentErased', 'FeedErased', 'ActivityAdded']);
      expect(stream[2]!.position).toBeGreaterThan(position);
      expect((stream[2]!.data as { activity: Activity }).activity.object).toBe('after the erasure');
      expect(await replicaA.get({ ids: ['p1', 'p2'], atLeast: stream[2]!.position })).toEqual([second]);
      expect(await replicaB.get({ ids: ['p1', 'p2'], atLeast: stream[2]!.position })).toEqual([second]);

      await close();
    });

    it(`seals an import acknowledged after an erasure on another replica with a new key (${shared ? 'one shared content store' : 'a content store each'}): it is read whole, not as a tombstone`, async () => {
      const { file, keys, lagging, replicaA, replicaB, close } = await twoReplicas(shared);

      const first = await replicaB.add(post('p1', 'before the erasure'));
      await replicaA.get({ ids: [first.id], atLeast: await file.headPosition() });
      lagging.holdBack();
      const { position } = await replicaA.erase({ feed: 'user:a', time: '2026-01-01T00:00:01.000Z' });
      // B, which has not read the erasure, imports into the feed once the erasure is acknowledged.
      const [imported] = await replicaB.addMany({ id: 'import-1', receivedAt: '2026-01-01T00:00:02.000Z', activities: [{ feed: 'user:a', id: 'p2', activity: { actor: 'a', verb: 'post', object: 'imported after the erasure' } }] });
      lagging.release();
      expect(imported).toMatchObject({ id: 'p2', object: 'imported after the erasure' });

      const head = await file.headPosition();
      expect(head).toBeGreaterThan(position);
      expect(await replicaA.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([imported]);
      expect(await replicaB.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([imported]);
      const rebuilt = new ContentService(new SealedEventLog(file, sharedKeys(keys)), new MemoryContentStore());
      await rebuilt.onApplicationBootstrap();
      expect(await rebuilt.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([imported]);

      await rebuilt.onModuleDestroy();
      await close();
    });
    it(`erases an import sealed with the key an erasure on another replica destroyed while it was under way (${shared ? 'one shared content store' : 'a content store each'}): no replica keeps it`, async () => {
      // Set once B has posted: the erasure B's check sets off.
      const race: { eraseOnA?: () => Promise<unknown>; erasing?: Promise<unknown>; sealed?: () => void; finds: number } = { finds: 0 };
      // B's check before sealing finds the key; A's erasure destroys it just after.
      const racing = (keys: FeedKeyStore): FeedKeyStore => ({
        ...sharedKeys(keys),
        find: async (refs) => {
          const found = await keys.find(refs);
          if (race.eraseOnA) race.erasing ??= race.eraseOnA();
          await race.erasing;
          // The second question is asked once the import is durable, sealed with the destroyed key.
          if (race.eraseOnA && ++race.finds === 2) race.sealed?.();
          return found;
        },
      });
      const { file, keys, lagging, replicaA, replicaB, close } = await twoReplicas(shared, racing);
      const first = await replicaB.add(post('p1', 'before the erasure'));
      await replicaA.get({ ids: [first.id], atLeast: await file.headPosition() });
      // B reads nothing of the erasure until its import is sealed, with the key being destroyed.
      lagging.holdBack();
      race.eraseOnA = () => replicaA.erase({ feed: 'user:a', time: '2026-01-01T00:00:01.000Z' });
      race.sealed = () => lagging.release();
      const imported = await replicaB.addMany({ id: 'import-2', receivedAt: '2026-01-01T00:00:02.000Z', activities: [{ feed: 'user:a', id: 'p2', activity: { actor: 'a', verb: 'post', object: 'imported as it was erased' } }] });
      expect(imported.map((activity) => activity.id)).toEqual(['p2']);

      const head = await file.headPosition();
      expect(await replicaA.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([]);
      expect(await replicaB.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([]);
      const rebuilt = new ContentService(new SealedEventLog(file, sharedKeys(keys)), new MemoryContentStore());
      await rebuilt.onApplicationBootstrap();
      expect(await rebuilt.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([]);
      await rebuilt.onModuleDestroy();
      await close();
    });
  }

});

describe('ContentService: a repeated foreignId across replicas', () => {
  /** A content store that says when a lookup by foreignId has found an activity. */
  class FindingStore extends MemoryContentStore {
    onFound: () => void = () => undefined;
    override async byForeignId(...args: Parameters<MemoryContentStore['byForeignId']>): ReturnType<MemoryContentStore['byForeignId']> {
      const found = await super.byForeignId(...args);
      if (found) this.onFound();
      return found;
    }
  }

  const withForeignId = (id: string, object: string) => ({ ...post(id, object), activity: { actor: 'a', verb: 'post', object, foreignId: 'f1' } });
  const gone = {
    erased: (replica: ContentService) => replica.erase({ feed: 'user:a', time: '2026-01-01T00:00:01.000Z' }),
    removed: (replica: ContentService) => replica.remove({ feed: 'user:a', id: 'p1', time: '2026-01-01T00:00:01.000Z' }),
  };
  for (const [how, makeGone] of Object.entries(gone)) {
    for (const many of [false, true]) {
      it(`adds anew ${many ? 'an import item' : 'a post'} whose foreignId names an activity another replica ${how}, which this replica has not read yet: it is not answered with the activity that is gone`, async () => {
        const storeOfB = new FindingStore();
        const { file, lagging, replicaA, replicaB, close } = await twoReplicas(false, sharedKeys, storeOfB);
        const first = await replicaB.add(withForeignId('p1', 'first'));
        await replicaA.get({ ids: [first.id], atLeast: await file.headPosition() });
        // B falls behind; A removes or erases the post, and says so.
        lagging.holdBack();
        await makeGone(replicaA);
        // B finds the foreignId in its own store, then reads on.
        storeOfB.onFound = () => lagging.release();
        const [again] = many
          ? await replicaB.addMany({ id: 'import-3', receivedAt: '2026-01-01T00:00:02.000Z', activities: [{ feed: 'user:a', id: 'p2', activity: withForeignId('p2', 'again').activity }] })
          : [await replicaB.add(withForeignId('p2', 'again'))];
        expect(again).toMatchObject({ id: 'p2', object: 'again', foreignId: 'f1' });
        const head = await file.headPosition();
        expect(await replicaA.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([again]);
        expect(await replicaB.get({ ids: ['p1', 'p2'], atLeast: head })).toEqual([again]);
        await close();
      });
    }
  }

  it('looks at the log only where another process may append: on a log it alone writes, a repeated foreignId is answered from its own store', async () => {
    const file = await FileEventLog.open({ dir });
    const keys = await FileFeedKeyStore.open(dir);
    const heads: number[] = [];
    for (const soleWriter of [true, false]) {
      const log = new HeldBackLog(file, soleWriter);
      const content = new ContentService(new SealedEventLog(log, sharedKeys(keys)), new MemoryContentStore());
      await content.onApplicationBootstrap();
      const first = await content.add(withForeignId(`p-${soleWriter}`, 'first'));
      const before = log.heads;
      expect(await content.add(withForeignId(`q-${soleWriter}`, 'again'))).toEqual(first);
      heads.push(log.heads - before);
      await content.onModuleDestroy();
    }
    expect(heads).toEqual([0, 1]);
    await file.close();
    await keys.close();
  });

  it('answers a repeated foreignId with the activity it names once the log confirms it still stands', async () => {
    const { file, replicaA, replicaB, close } = await twoReplicas(false);
    const first = await replicaA.add(withForeignId('p1', 'first'));
    await replicaB.get({ ids: [first.id], atLeast: await file.headPosition() });
    expect(await replicaB.add(withForeignId('p2', 'again'))).toEqual(first);
    expect(await replicaB.addMany({ id: 'import-4', receivedAt: '2026-01-01T00:00:02.000Z', activities: [{ feed: 'user:a', id: 'p3', activity: withForeignId('p3', 'again').activity }] })).toEqual([first]);
    expect(await file.headPosition()).toBe(1);
    await close();
  });
});

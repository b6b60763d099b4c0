import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { feedEvents, type Activity, type FeedId, type FeedLogEvent } from '@feedmill/contracts';
import { FileEventLog } from '../file/file-event-log.js';
import type { AppendResult, RecordedEvent } from '../event-log.port.js';
import type { FeedKeyStore } from './feed-keys.port.js';
import { FileFeedKeyStore } from './file-feed-keys.js';
import type { FeedKey } from './sealed-content.js';
import { SealedEventLog } from './sealed-event-log.js';
import { sharedKeyStore } from './shared-key-store.js';

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-sealed-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

/** A key store that counts what it is asked. */
function counting(store: FeedKeyStore): FeedKeyStore & { calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    currentKeys: (feeds) => (calls.push(`current ${feeds.length}`), store.currentKeys(feeds)),
    keysOf: (feed) => (calls.push(`keysOf ${feed}`), store.keysOf(feed)),
    find: (refs) => (calls.push(`find ${refs.length}`), store.find(refs)),
    markDestroying: (refs) => (calls.push(`mark ${refs.length}`), store.markDestroying(refs)),
    marked: (refs) => (calls.push(`marked ${refs.length}`), store.marked(refs)),
    destroy: (refs) => (calls.push(`destroy ${refs.length}`), store.destroy(refs)),
    close: () => store.close(),
  };
}

const unclosedKeys = sharedKeyStore;

async function openSealed(): Promise<{ log: SealedEventLog; keys: ReturnType<typeof counting> }> {
  const keys = counting(await FileFeedKeyStore.open(dir));
  return { log: new SealedEventLog(await FileEventLog.open({ dir }), keys), keys };
}

const secret = 'SECRET-TEXT-42';
const post = (id: string, feed: FeedId): FeedLogEvent => ({
  type: 'ActivityAdded',
  data: { activity: { id, feed, actor: 'someone', verb: 'post', object: `${secret} ${id}`, time: '2026-01-01T00:00:00.000Z', extra: { text: secret } } as Activity },
});
const erase = (feed: FeedId): FeedLogEvent => ({ type: 'FeedErased', data: { feed, time: '2026-01-02T00:00:00.000Z' } });

async function readAll(log: SealedEventLog | FileEventLog): Promise<RecordedEvent[]> {
  const records: RecordedEvent[] = [];
  const head = await log.headPosition();
  if (head === 0) return records;
  await new Promise<void>((resolve) => {
    const subscription = log.subscribeToAll({
      onEvents: (events) => {
        records.push(...events);
        if (records[records.length - 1]!.position >= head) void subscription.stop().then(resolve);
      },
    });
  });
  return records;
}

/**
 * The store's `find`, its first call held until `release`: held before it asks the store, or
 * after it found the keys (and answers with what it found then). `lookingUp` settles once the
 * first call got where it is held.
 */
function firstFindHeld(store: FeedKeyStore, held: 'before asking' | 'after finding') {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  const lookingUp = new Promise<void>((resolve) => (reached = resolve));
  let finds = 0;
  const find: FeedKeyStore['find'] = async (refs) => {
    if (++finds > 1) return store.find(refs);
    if (held === 'before asking') {
      reached();
      await released;
      return store.find(refs);
    }
    const found = await store.find(refs);
    reached();
    await released;
    return found;
  };
  return { find, lookingUp, release };
}

describe('SealedEventLog', () => {
  it('makes the keys of new feeds posted to at once in shared writes, and appends those waiting for one write in the order they were called', async () => {
    const { log, keys } = await openSealed();
    const feeds = Array.from({ length: 40 }, (_, n) => `user:n${n}` as FeedId);
    const results = await Promise.all(feeds.map((feed, n) => log.appendToStream(`feed-${feed}`, [feedEvents.encode(post(`p${n}`, feed))])));
    // Called in one tick, they all join the first write (one at a time, it took forty).
    expect(keys.calls).toEqual(['current 40']);
    expect(results.map((result) => result.position)).toEqual(feeds.map((_, n) => n + 1));
    const opened = await readAll(log);
    expect(opened.map((record) => (record.data as { activity: Activity }).activity.object)).toEqual(feeds.map((_, n) => `${secret} p${n}`));
    await log.close();
  });

  it('reads a record it opens as a plain record: its data an own field that a copy, Object.keys and JSON see, opened once', async () => {
    const first = await openSealed();
    await first.log.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))]);
    await first.log.close();
    // Opened anew: this process sealed nothing, so the record is opened when its data is read.
    const { log } = await openSealed();
    const [record] = await readAll(log);
    const data = record!.data as { activity: Activity };
    expect(data.activity.object).toBe(`${secret} a0`);
    expect(record!.data).toBe(data);
    const plain = await FileEventLog.open({ dir: join(dir, 'plain') });
    await plain.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))]);
    const [inner] = await readAll(plain);
    await plain.close();
    expect(Object.keys(record!).sort()).toEqual(Object.keys(inner!).sort());
    expect({ ...record }.data).toBe(data);
    expect(JSON.parse(JSON.stringify(record))).toMatchObject({ stream: 'feed-user:a', revision: 0, position: 1, type: 'ActivityAdded', data: { activity: { object: `${secret} a0` } } });
    await log.close();
  });

  it('keeps appends in the order they were called while a key is made, and seals what users typed', async () => {
    const { log } = await openSealed();
    const appends = [0, 1, 2].map((n) => log.appendToStream('feed-user:a', [feedEvents.encode(post(`a${n}`, 'user:a'))], { expectedVersion: n === 0 ? 'no_stream' : n - 1 }));
    expect((await Promise.all(appends)).map((result) => result.nextExpectedVersion)).toEqual([0, 1, 2]);
    const opened = await log.readStream('feed-user:a');
    expect(opened.map((record) => (record.data as { activity: Activity }).activity.object)).toEqual([`${secret} a0`, `${secret} a1`, `${secret} a2`]);
    await log.close();
    expect((await readFile(join(dir, 'events.log'))).includes(secret)).toBe(false);
    const plain = await FileEventLog.open({ dir });
    expect(JSON.stringify((await plain.readStream('feed-user:a'))[0]!.data)).not.toContain(secret);
    await plain.close();
  });

  it("does not hold up a feed whose key is known while another feed's key is being written", async () => {
    const store = await FileFeedKeyStore.open(dir);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const log = new SealedEventLog(await FileEventLog.open({ dir }), { ...unclosedKeys(store), currentKeys: async (feeds) => (feeds.includes('user:b') && (await held), store.currentKeys(feeds)) });
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))], { expectedVersion: 'no_stream' });
    let newFeedDone = false;
    const newFeed = log.appendToStream('feed-user:b', [feedEvents.encode(post('b0', 'user:b'))], { expectedVersion: 'no_stream' }).then((result) => ((newFeedDone = true), result));
    // Its stream's next append, and a follow of nobody's content, go on meanwhile (held up, they would wait for the release).
    const withinASecond = <T>(append: Promise<T>) => Promise.race([append, new Promise<'held up'>((resolve) => setTimeout(() => resolve('held up'), 1_000).unref())]);
    const known = await withinASecond(log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))], { expectedVersion: 0 }));
    const follow = await withinASecond(log.appendToStream('graph-x', [{ type: 'FeedFollowed', data: { source: 'timeline:x', target: 'user:a' } }]));
    expect({ known, follow, newFeedDone }).toEqual({ known: expect.objectContaining({ position: 2 }), follow: expect.objectContaining({ position: 3 }), newFeedDone: false });
    // A second post of the waiting feed waits behind its first, in its stream's order.
    const second = log.appendToStream('feed-user:b', [feedEvents.encode(post('b1', 'user:b'))], { expectedVersion: 0 });
    release();
    expect([(await newFeed).position, (await second).position]).toEqual([4, 5]);
    expect((await log.readStream('feed-user:b')).map((record) => (record.data as { activity: Activity }).activity.object)).toEqual([`${secret} b0`, `${secret} b1`]);
    await log.close();
    await store.close();
  });

  it('seals a post called right after an erasure of its feed with a new key, not with the one the erasure destroys', async () => {
    let { log } = await openSealed();
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))], { expectedVersion: 'no_stream' });
    // Called one after the other, neither awaited: the post is not to wait for the erasure to be durable before its call.
    const erasure = log.appendToStream('feed-user:a', [feedEvents.encode(erase('user:a'))], { expectedVersion: 0 });
    const after = log.appendToStream('feed-user:a', [feedEvents.encode(post('a2', 'user:a'))], { expectedVersion: 1 });
    await Promise.all([erasure, after]);
    await log.close();
    ({ log } = await openSealed());
    expect((await log.readStream('feed-user:a')).map((record) => [record.type, (record.data as { activity?: Activity }).activity?.object])).toEqual([
      ['ContentErased', undefined],
      ['FeedErased', undefined],
      ['ActivityAdded', `${secret} a2`],
    ]);
    await log.close();
  });

  /**
   * Posts a1 to user:a while an erasure of user:a destroys its keys (called from the erasure's
   * look-up of which keys exist, once it is durable), and reads the feed after a reopen. The
   * store's answer to the post's ask for a key comes at once, or, with `answerLate`, only once
   * the erasure is done: either way it is the key being destroyed, the store's current one until
   * its destroy begins.
   */
  async function postDuringErasure(answerLate: boolean): Promise<{ erasure: AppendResult; after: AppendResult; read: Array<[string, unknown]> }> {
    const store = await FileFeedKeyStore.open(dir);
    let after: Promise<AppendResult> | undefined;
    let erasureDone!: () => void;
    const done = new Promise<void>((resolve) => (erasureDone = resolve));
    const keys: FeedKeyStore = {
      ...unclosedKeys(store),
      find: (refs) => ((after ??= log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))])), store.find(refs)),
      currentKeys: async (feeds) => {
        const answer = store.currentKeys(feeds);
        if (answerLate && after) await done;
        return answer;
      },
    };
    const log = new SealedEventLog(await FileEventLog.open({ dir }), keys);
    log.onErased(() => erasureDone());
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))]);
    const erasure = await log.appendToStream('feed-user:a', [feedEvents.encode(erase('user:a'))]);
    const result = { erasure, after: await after! };
    await log.close();
    await store.close();
    const reopened = await openSealed();
    const read = (await reopened.log.readStream('feed-user:a')).map((record): [string, unknown] => [record.type, (record.data as { activity?: Activity }).activity?.object]);
    await reopened.log.close();
    return { ...result, read };
  }

  it.each([
    ['at once', false],
    ['after the erasure is done', true],
  ])('seals a post called while an erasure of its feed destroys its keys with a new key, the store answering %s', async (_, answerLate) => {
    const { erasure, after, read } = await postDuringErasure(answerLate);
    expect(after.position).toBeGreaterThan(erasure.position);
    expect(read).toEqual([
      ['ContentErased', undefined],
      ['FeedErased', undefined],
      ['ActivityAdded', `${secret} a1`],
    ]);
  });

  it("asks again for a feed's key when the store's answer has none for it, instead of failing the feed's appends", async () => {
    const store = await FileFeedKeyStore.open(dir);
    let asked = 0;
    // What the file store handed back for a feed whose key an erasure destroyed while another feed's key was written.
    const keys: FeedKeyStore = {
      ...unclosedKeys(store),
      currentKeys: async (feeds) => {
        const answer = await store.currentKeys(feeds);
        if (++asked === 1) answer.set('user:a', undefined as unknown as FeedKey);
        return answer;
      },
    };
    const log = new SealedEventLog(await FileEventLog.open({ dir }), keys);
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))], { expectedVersion: 'no_stream' });
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))], { expectedVersion: 0 });
    await log.close();
    await store.close();
    const reopened = await openSealed();
    expect((await reopened.log.readStream('feed-user:a')).map((record) => (record.data as { activity: Activity }).activity.object)).toEqual([`${secret} a0`, `${secret} a1`]);
    await reopened.log.close();
  });

  it('erases: keys named in the event and destroyed once it is durable; the content reads as tombstones in place, positions and revisions kept', async () => {
    let { log } = await openSealed();
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))]);
    await log.appendToStream('feed-user:b', [feedEvents.encode(post('b1', 'user:b'))]);
    const heard: Array<{ feed: FeedId; position: number }> = [];
    log.onErased((erasure) => heard.push(erasure));
    const { position } = await log.appendToStream('erased-user:a', [feedEvents.encode(erase('user:a'))]);
    expect(heard).toEqual([{ feed: 'user:a', position }]);
    const [erasure] = await log.readStream('erased-user:a');
    expect((erasure!.data as { keys: string[] }).keys).toHaveLength(1);
    const [tombstone] = await log.readStream('feed-user:a');
    expect(tombstone).toMatchObject({ type: 'ContentErased', revision: 0, position: 1, data: { of: 'ActivityAdded', feed: 'user:a', ids: ['a1'] } });
    expect(feedEvents.decode(tombstone!)).toEqual({ type: 'ContentErased', data: { of: 'ActivityAdded', feed: 'user:a', ids: ['a1'] } });
    // The id is used again: a new key, and the new post reads.
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a2', 'user:a'))]);
    await log.close();
    expect(await readFile(join(dir, 'feed-keys.jsonl'), 'utf8')).not.toContain((erasure!.data as { keys: string[] }).keys[0]);
    ({ log } = await openSealed());
    const records = await readAll(log);
    expect(records.map((record) => [record.position, record.type])).toEqual([
      [1, 'ContentErased'],
      [2, 'ActivityAdded'],
      [3, 'FeedErased'],
      [4, 'ActivityAdded'],
    ]);
    expect((records[3]!.data as { activity: Activity }).activity.object).toBe(`${secret} a2`);
    await log.close();
  });

  it('finishes an erasure a crash interrupted: a read that meets a FeedErased whose key still exists destroys it', async () => {
    let { log } = await openSealed();
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))]);
    const keyIds = (await FileFeedKeyStore.open(dir).then((store) => store.keysOf('user:a'))).map((key) => key.id);
    await log.close();
    // As if the process died after the erasure was durable and before the key was destroyed.
    const plain = await FileEventLog.open({ dir });
    await plain.appendToStream('erased-user:a', [{ ...feedEvents.encode(erase('user:a')), data: { feed: 'user:a', time: 't', keys: keyIds } }]);
    await plain.close();
    const reopened = await openSealed();
    log = reopened.log;
    const keys = reopened.keys;
    const heard: number[] = [];
    log.onErased(({ position }) => heard.push(position));
    const first = await readAll(log);
    // Read before the key was destroyed, the post opens (the erasure after it removes it from every projection),
    // even when its data is read only after the erasure in the same batch destroyed the key.
    expect(first.map((record) => record.type)).toEqual(['ActivityAdded', 'FeedErased']);
    expect((first[0]!.data as { activity: Activity }).activity.object).toBe(`${secret} a1`);
    expect(keys.calls).toContain('destroy 1');
    expect(heard).toEqual([2]);
    expect((await log.readStream('feed-user:a'))[0]!.type).toBe('ContentErased');
    await log.close();
  });

  it('looks up the keys of a batch at once, and caches them', async () => {
    let { log } = await openSealed();
    for (let n = 0; n < 40; n++) await log.appendToStream(`feed-user:f${n % 8}`, [feedEvents.encode(post(`p${n}`, `user:f${n % 8}` as FeedId))]);
    await log.close();
    const reopened = await openSealed();
    log = reopened.log;
    const keys = reopened.keys;
    const records = await readAll(log);
    expect(records).toHaveLength(40);
    expect(keys.calls.filter((call) => call.startsWith('find'))).toEqual(['find 8']);
    await readAll(log);
    expect(keys.calls.filter((call) => call.startsWith('find'))).toHaveLength(1);
    await log.close();
  });

  it('asks again for a key the store did not find, until an erasure naming it is seen', async () => {
    let { log } = await openSealed();
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))]);
    await log.close();
    // A store that answers "not found" once for a key it holds, as a lagging replica would.
    const store = counting(await FileFeedKeyStore.open(dir));
    let lagging = true;
    const keys: FeedKeyStore = { ...store, find: async (refs) => (lagging ? ((lagging = false), store.calls.push(`find ${refs.length}`), new Map()) : store.find(refs)) };
    log = new SealedEventLog(await FileEventLog.open({ dir }), keys);
    expect((await log.readStream('feed-user:a'))[0]!.type).toBe('ContentErased');
    const [again] = await log.readStream('feed-user:a');
    expect((again!.data as { activity: Activity }).activity.object).toBe(`${secret} a1`);
    await log.appendToStream('erased-user:a', [feedEvents.encode(erase('user:a'))]);
    const finds = store.calls.filter((call) => call.startsWith('find')).length;
    // Known destroyed once the erasure is seen: no more lookups for it.
    expect((await log.readStream('feed-user:a'))[0]!.type).toBe('ContentErased');
    expect((await log.readStream('feed-user:a'))[0]!.type).toBe('ContentErased');
    expect(store.calls.filter((call) => call.startsWith('find'))).toHaveLength(finds);
    await log.close();
  });

  it('hands back the data it sealed for a record this process appended, and opens a record once for all its readers', async () => {
    let { log } = await openSealed();
    const appended = feedEvents.encode(post('a1', 'user:a'));
    await log.appendToStream('feed-user:a', [appended]);
    const [first, second] = await Promise.all([readAll(log), readAll(log)]);
    // Nothing to open: the appender's own object, as the file log keeps it for its subscribers.
    expect(first[0]!.data).toBe(appended.data);
    expect(second[0]!.data).toBe(appended.data);
    await log.close();

    ({ log } = await openSealed());
    const [a, b] = await Promise.all([readAll(log), readAll(log)]);
    const opened = a[0]!.data as { activity: Activity };
    expect(opened.activity.object).toBe(`${secret} a1`);
    // Read from disk, one subscriber opened it and the other was handed what it found.
    expect(b[0]!.data).toBe(opened);
    await log.close();
  });

  it('reads a record it sealed as a tombstone when an erasure destroys its key while the batch waits for another record\'s key', async () => {
    const file = await FileEventLog.open({ dir });
    const store = await FileFeedKeyStore.open(dir);
    // The reader's first key look-up (for user:b's key, which this log has not met) waits.
    const { find, lookingUp, release } = firstFindHeld(store, 'before asking');
    const log = new SealedEventLog(file, { ...unclosedKeys(store), find });
    const other = new SealedEventLog(file, unclosedKeys(store));
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))]);
    await other.appendToStream('feed-user:b', [feedEvents.encode(post('b1', 'user:b'))]);
    const reading = readAll(log);
    await lookingUp;
    await log.appendToStream('erased-user:a', [feedEvents.encode(erase('user:a'))]);
    release();
    const records = await reading;
    // The batch read up to the head before the erasure: user:a's post erased, user:b's whole.
    expect(records.map((record) => record.type)).toEqual(['ContentErased', 'ActivityAdded']);
    await log.close();
    await store.close();
  });

  it('reads content as erased once an erasure destroyed its key, also when a read was looking that key up meanwhile', async () => {
    const file = await FileEventLog.open({ dir });
    const store = await FileFeedKeyStore.open(dir);
    // The reader's first key look-up (for user:a's key, which another log made) finds it, and answers once the erasure is done.
    const { find, lookingUp, release } = firstFindHeld(store, 'after finding');
    const log = new SealedEventLog(file, { ...unclosedKeys(store), find });
    await new SealedEventLog(file, unclosedKeys(store)).appendToStream('feed-user:a', [feedEvents.encode(post('a1', 'user:a'))]);
    const reading = readAll(log);
    await lookingUp;
    await log.appendToStream('erased-user:a', [feedEvents.encode(erase('user:a'))]);
    release();
    await reading;
    expect(await store.keysOf('user:a')).toEqual([]);
    expect((await log.readStream('feed-user:a')).map((record) => record.type)).toEqual(['ContentErased']);
    await log.close();
    await store.close();
  });

  it('leaves out an erased feed\'s items of an import another reader opened whole before the erasure', async () => {
    const { log } = await openSealed();
    const items = [post('a1', 'user:a'), post('b1', 'user:b')].map((event) => (event.data as { activity: Activity }).activity);
    await log.appendToStream('import-1', [feedEvents.encode({ type: 'ActivitiesAdded', data: { id: 'import-1', activities: items } })]);
    const before = await readAll(log);
    expect((before[0]!.data as { activities: Activity[] }).activities.map((item) => item.id)).toEqual(['a1', 'b1']);
    await log.appendToStream('erased-user:a', [feedEvents.encode(erase('user:a'))]);
    const after = await readAll(log);
    expect((after[0]!.data as { activities: Activity[] }).activities.map((item) => item.id)).toEqual(['b1']);
    await log.close();
  });

  it('asks the key store whether its cached key stands only when another writer appended to the stream since its own appends', async () => {
    const file = await FileEventLog.open({ dir });
    const store = await FileFeedKeyStore.open(dir);
    const unclosed = unclosedKeys(store);
    const keys = counting(unclosed);
    const log = new SealedEventLog(file, keys);
    // Appends of its own, called one after another before the first is durable: no question.
    await Promise.all([0, 1, 2].map((n) => log.appendToStream('feed-user:a', [feedEvents.encode(post(`a${n}`, 'user:a'))], { expectedVersion: n === 0 ? 'no_stream' : n - 1 })));
    expect(keys.calls).toEqual(['current 1']);
    // Another replica appends to the stream: the next append of this one checks its key once.
    const other = new SealedEventLog(file, unclosed);
    await other.appendToStream('feed-user:a', [feedEvents.encode(post('b0', 'user:a'))], { expectedVersion: 2 });
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a3', 'user:a'))], { expectedVersion: 3 });
    await log.appendToStream('feed-user:a', [feedEvents.encode(post('a4', 'user:a'))], { expectedVersion: 4 });
    expect(keys.calls).toEqual(['current 1', 'find 1']);
    // An import goes to a new stream of its own, which no erasure can be in: its cached keys are
    // always checked before (the one of user:a; user:c's is new), and all its keys once it is durable.
    const items = [post('a5', 'user:a'), post('c0', 'user:c')].map((event) => (event.data as { activity: Activity }).activity);
    await log.appendToStream('import-2', [feedEvents.encode({ type: 'ActivitiesAdded', data: { id: 'import-2', activities: items } })], { expectedVersion: 'no_stream' });
    expect(keys.calls).toEqual(['current 1', 'find 1', 'current 1', 'find 1', 'marked 2', 'find 2']);
    await log.close();
    await store.close();
  });

  it('seals an import with a new key when another replica destroyed the cached one, so that it is not acknowledged and then read as a tombstone', async () => {
    const file = await FileEventLog.open({ dir });
    const store = await FileFeedKeyStore.open(dir);
    const unclosed = unclosedKeys(store);
    const importer = new SealedEventLog(file, unclosed);
    const eraser = new SealedEventLog(file, unclosed);
    await importer.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))], { expectedVersion: 'no_stream' });
    // The eraser has read the post; the importer has read nothing of the erasure that follows.
    await readAll(eraser);
    await eraser.appendToStream('feed-user:a', [feedEvents.encode(erase('user:a'))], { expectedVersion: 0 });
    const items = [post('a1', 'user:a')].map((event) => (event.data as { activity: Activity }).activity);
    await importer.appendToStream('import-3', [feedEvents.encode({ type: 'ActivitiesAdded', data: { id: 'import-3', activities: items } })], { expectedVersion: 'no_stream' });
    const read = await readAll(new SealedEventLog(file, unclosed));
    expect(read.map((record) => record.type)).toEqual(['ContentErased', 'FeedErased', 'ActivitiesAdded']);
    expect((read[2]!.data as { activities: Activity[] }).activities.map((item) => item.id)).toEqual(['a1']);
    await file.close();
    await store.close();
  });
  it("waits on a key an erasure marked, and says the import is erased when its check comes after the erasure was appended and before its key is destroyed", async () => {
    const file = await FileEventLog.open({ dir });
    const store = await FileFeedKeyStore.open(dir);
    const unclosed = unclosedKeys(store);
    let releaseDestroy!: () => void;
    const destroyHeld = new Promise<void>((resolve) => (releaseDestroy = resolve));
    const eraser = new SealedEventLog(file, { ...unclosed, destroy: async (refs) => (await destroyHeld, store.destroy(refs)) });
    const importer = new SealedEventLog(file, unclosed);
    await importer.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))], { expectedVersion: 'no_stream' });
    await readAll(eraser);
    // The erasure is durable; its key is not destroyed yet.
    const erased = eraser.appendToStream('feed-user:a', [feedEvents.encode(erase('user:a'))], { expectedVersion: 0 });
    while ((await file.headPosition()) < 2) await new Promise((resolve) => setTimeout(resolve, 5));
    const items = [post('a1', 'user:a'), post('b1', 'user:b')].map((event) => (event.data as { activity: Activity }).activity);
    const imported = importer.appendToStream('import-6', [feedEvents.encode({ type: 'ActivitiesAdded', data: { id: 'import-6', activities: items } })], { expectedVersion: 'no_stream' });
    // The import is durable, and waits for the erasure rather than take its key for standing.
    while ((await file.headPosition()) < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 100));
    let settled = false;
    void imported.then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    releaseDestroy();
    expect((await imported).contentErased).toBe(true);
    await erased;
    const read = await readAll(new SealedEventLog(file, unclosed));
    expect(read.map((record) => record.type)).toEqual(['ContentErased', 'FeedErased', 'ActivitiesAdded']);
    expect((read[2]!.data as { activities: Activity[] }).activities.map((item) => item.id)).toEqual(['b1']);
    await file.close();
    await store.close();
  });

  it('takes an import sealed with a key whose erasure never came (a crash after the mark) for whole, once the mark is stale', async () => {
    const file = await FileEventLog.open({ dir });
    const store = await FileFeedKeyStore.open(dir);
    const importer = new SealedEventLog(file, unclosedKeys(store), { staleMarkMs: 300 });
    await importer.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))], { expectedVersion: 'no_stream' });
    await store.markDestroying(await store.keysOf('user:a'));
    const items = [post('a1', 'user:a')].map((event) => (event.data as { activity: Activity }).activity);
    const started = performance.now();
    const result = await importer.appendToStream('import-7', [feedEvents.encode({ type: 'ActivitiesAdded', data: { id: 'import-7', activities: items } })], { expectedVersion: 'no_stream' });
    expect(result.contentErased).toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(250);
    const read = await readAll(new SealedEventLog(file, unclosedKeys(store)));
    expect((read[1]!.data as { activities: Activity[] }).activities.map((item) => item.object)).toEqual([`${secret} a1`]);
    await file.close();
    await store.close();
  });

  it('says so when an import was sealed with a key another replica destroyed while the import was under way', async () => {
    const file = await FileEventLog.open({ dir });
    const store = await FileFeedKeyStore.open(dir);
    const unclosed = unclosedKeys(store);
    const eraser = new SealedEventLog(file, unclosed);
    let erasing: Promise<unknown> | undefined;
    // The importer's check finds the key, and the erasure destroys it just after: the two meet.
    const racing: FeedKeyStore = {
      ...unclosed,
      find: async (refs) => {
        const found = await store.find(refs);
        erasing ??= readAll(eraser).then(() => eraser.appendToStream('feed-user:a', [feedEvents.encode(erase('user:a'))], { expectedVersion: 0 }));
        await erasing;
        return found;
      },
    };
    const importer = new SealedEventLog(file, racing);
    await importer.appendToStream('feed-user:a', [feedEvents.encode(post('a0', 'user:a'))], { expectedVersion: 'no_stream' });
    const items = [post('a1', 'user:a'), post('b1', 'user:b')].map((event) => (event.data as { activity: Activity }).activity);
    const result = await importer.appendToStream('import-4', [feedEvents.encode({ type: 'ActivitiesAdded', data: { id: 'import-4', activities: items } })], { expectedVersion: 'no_stream' });
    expect(result.contentErased).toBe(true);
    const read = await readAll(new SealedEventLog(file, unclosed));
    expect(read.map((record) => record.type)).toEqual(['ContentErased', 'FeedErased', 'ActivitiesAdded']);
    expect((read[2]!.data as { activities: Activity[] }).activities.map((item) => item.id)).toEqual(['b1']);
    // An import nothing raced is not marked.
    const calm = await new SealedEventLog(file, unclosed).appendToStream('import-5', [feedEvents.encode({ type: 'ActivitiesAdded', data: { id: 'import-5', activities: [items[1]!] } })], { expectedVersion: 'no_stream' });
    expect(calm.contentErased).toBeUndefined();
    await file.close();
    await store.close();
  });
});

import { FeedmillError, type Activity, type DeliverRequest, type FeedId, type TimelineDelivery } from '@feedmill/contracts';
import { MemoryTimelineStore, MongoTimelineStore, type TimelineCollections, type TimelinePolicy, type TimelineStore } from '@feedmill/stores';
import { MingoCollection } from '@feedmill/stores/testing';
import type { ReaderFailure } from './reader-dead-letters.js';
import { ReaderIsolation } from './reader-isolation.js';

const ring: TimelinePolicy = { model: 'ring', cap: 10, inactivityMs: 0 };
const post = (id: string, second = 1): Activity => ({ id, feed: 'user:a', actor: 'a', verb: 'post', object: id, time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
const readers = (n: number): FeedId[] => Array.from({ length: n }, (_, i) => `timeline:r${i}` as FeedId);
const follows = (who: FeedId[]): TimelineDelivery[] => who.map((reader) => ({ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true }));
const none = async () => [];
const idsOf = async (store: TimelineStore, reader: FeedId) => (await store.readPage(reader, undefined, 10, none)).items.map((a) => a.id);

/** Fails every delivery to a poisoned reader while it is poisoned (a broken entry), or all of them (a store gone wrong). */
class RefusingMemoryStore extends MemoryTimelineStore {
  readonly poisoned = new Set<FeedId>();
  /** Deliveries to poisoned readers fail this many more times, then pass (-1: always). */
  failuresLeft = -1;
  refuseAll: Error | undefined;
  calls = 0;

  constructor() {
    super(() => ring);
  }

  override deliver(request: DeliverRequest) {
    this.calls++;
    if (this.refuseAll) return Promise.reject(this.refuseAll);
    const hits = request.deliveries.some((d) => ('readers' in d ? d.readers : [d.reader]).some((r) => this.poisoned.has(r)) && (d.kind !== 'insert' || d.activity.object !== 'fine'));
    if (hits && this.failuresLeft !== 0) {
      if (this.failuresLeft > 0) this.failuresLeft--;
      return Promise.reject(new Error('the entry is too large'));
    }
    return super.deliver(request);
  }
}

/** A store that takes no write for a while, whatever it holds. */
class DownStore extends MemoryTimelineStore {
  constructor() {
    super(() => ring);
  }
  override deliver(): never {
    throw new Error('connection refused');
  }
}

function isolation(maxFailingReaders = 4) {
  const letters: ReaderFailure[] = [];
  const pauses: number[] = [];
  const readerIsolation = new ReaderIsolation(
    { append: async (failure) => letters.push(failure) },
    { attempts: 3, firstBackoffMs: 50, maxFailingReaders },
    async (ms) => void pauses.push(ms),
  );
  return { readerIsolation, letters, pauses };
}

/** Delivers as timeline does: the store first, and reader by reader only if it fails. */
async function deliver(store: TimelineStore, readerIsolation: ReaderIsolation, request: DeliverRequest) {
  try {
    return await store.deliver(request);
  } catch (failure) {
    return readerIsolation.deliverReaderByReader(store, request, failure);
  }
}

describe('ReaderIsolation', () => {
  const all = readers(6);
  const poisoned = all[3]!;

  async function followed(store: TimelineStore): Promise<void> {
    expect(await store.deliver({ after: 0, position: 1, deliveries: follows(all) })).toEqual({ applied: true, position: 1 });
  }

  it('delivers to every other reader, retries the failing one alone, then dead-letters it with its event’s position', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    store.poisoned.add(poisoned);
    const { readerIsolation, letters, pauses } = isolation();
    const reply = await deliver(store, readerIsolation, { after: 1, position: 3, deliveries: [{ kind: 'insert', readers: all, activity: post('p'), eventPosition: 2 }] });
    expect(reply).toEqual({ applied: true, position: 3 });
    expect(await store.position()).toBe(3);
    for (const reader of all) expect(await idsOf(store, reader)).toEqual(reader === poisoned ? [] : ['p']);
    expect(letters).toEqual([{ reader: poisoned, position: 2, reason: 'the entry is too large', attempts: 3 }]);
    expect(pauses).toEqual([50, 100]);
    expect(readerIsolation.deadLettered).toBe(1);
  });

  it('dead-letters only the reader’s delivery that fails, and applies its others in order', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    store.poisoned.add(poisoned);
    const { readerIsolation, letters } = isolation();
    const fine = { ...post('f1', 1), object: 'fine' };
    const later = { ...post('f2', 3), object: 'fine' };
    const deliveries: TimelineDelivery[] = [
      { kind: 'insert', readers: all, activity: fine, eventPosition: 2 },
      { kind: 'insert', readers: all, activity: post('p', 2), eventPosition: 3 },
      { kind: 'insert', readers: all, activity: later, eventPosition: 4 },
    ];
    expect(await deliver(store, readerIsolation, { after: 1, position: 4, deliveries })).toEqual({ applied: true, position: 4 });
    expect(await idsOf(store, poisoned)).toEqual(['f2', 'f1']);
    expect(await idsOf(store, all[0]!)).toEqual(['f2', 'p', 'f1']);
    expect(letters.map((letter) => `${letter.reader} ${letter.position}`)).toEqual([`${poisoned} 3`]);
  });

  it('writes no dead letter for a reader whose delivery passes on a retry', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    store.poisoned.add(poisoned);
    store.failuresLeft = 2; // the whole request, then the reader's deliveries: the reader's delivery alone passes
    const { readerIsolation, letters, pauses } = isolation();
    expect(await deliver(store, readerIsolation, { after: 1, position: 2, deliveries: [{ kind: 'insert', readers: all, activity: post('p'), eventPosition: 2 }] })).toEqual({ applied: true, position: 2 });
    expect(await idsOf(store, poisoned)).toEqual(['p']);
    expect(letters).toEqual([]);
    expect(pauses).toEqual([]);
  });

  it('throws the store’s failure, moving nothing, when every reader fails: that is no one reader’s', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    for (const reader of all) store.poisoned.add(reader);
    const { readerIsolation, letters } = isolation();
    await expect(deliver(store, readerIsolation, { after: 1, position: 2, deliveries: [{ kind: 'insert', readers: all, activity: post('p'), eventPosition: 2 }] })).rejects.toThrow('the entry is too large');
    expect(await store.position()).toBe(1);
    expect(letters).toEqual([]);
  });

  it('throws the store’s failure, moving nothing, when more readers fail than the policy allows, and stops trying readers there', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    for (const reader of all.slice(0, 3)) store.poisoned.add(reader);
    const { readerIsolation, letters } = isolation(2);
    store.calls = 0;
    await expect(deliver(store, readerIsolation, { after: 1, position: 2, deliveries: [{ kind: 'insert', readers: all, activity: post('p'), eventPosition: 2 }] })).rejects.toThrow('the entry is too large');
    // The whole request, the empty probe, then three readers: the third failing one ends it.
    expect(store.calls).toBe(5);
    expect(await store.position()).toBe(1);
    expect(letters).toEqual([]);
  });

  it('throws at once, trying no reader, a failure that passes with time or a store that takes no write', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    const { readerIsolation, letters } = isolation();
    store.refuseAll = new FeedmillError('unavailable', 'the store is not answering');
    store.calls = 0;
    const request: DeliverRequest = { after: 1, position: 2, deliveries: [{ kind: 'insert', readers: all, activity: post('p') }] };
    await expect(deliver(store, readerIsolation, request)).rejects.toThrow('the store is not answering');
    expect(store.calls).toBe(1);
    await expect(deliver(new DownStore(), readerIsolation, request)).rejects.toThrow('connection refused');
    expect(letters).toEqual([]);
  });

  it('leaves a fenced request’s position where it is, and names the request’s position for a delivery without its event’s', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    store.poisoned.add(poisoned);
    const { readerIsolation, letters } = isolation();
    expect(await deliver(store, readerIsolation, { after: 1, position: 1, deliveries: [{ kind: 'insert', readers: all, activity: post('p') }] })).toEqual({ applied: true, position: 1 });
    expect(await store.position()).toBe(1);
    expect(await idsOf(store, all[0]!)).toEqual(['p']);
    expect(letters.map((letter) => letter.position)).toEqual([1]);
  });

  it('answers where the store stands when another request moved it meanwhile', async () => {
    const store = new RefusingMemoryStore();
    await followed(store);
    store.poisoned.add(poisoned);
    const { readerIsolation } = isolation();
    const request: DeliverRequest = { after: 1, position: 2, deliveries: [{ kind: 'insert', readers: all, activity: post('p') }] };
    await store.deliver({ after: 1, position: 5, deliveries: [] });
    expect(await readerIsolation.deliverReaderByReader(store, request, new Error('the entry is too large'))).toEqual({ applied: false, position: 5 });
  });
});

/** A ring collection that refuses to write a poisoned reader's slots, as MongoDB refuses a document too large. */
class RefusingRing<TDocument extends { _id: string }> extends MingoCollection<TDocument> {
  constructor(private readonly poisoned: FeedId) {
    super();
  }

  override async bulkUpdate(operations: Parameters<MingoCollection<TDocument>['bulkUpdate']>[0]) {
    const refused = operations.filter((op) => String(op.filter['_id']).startsWith(`${this.poisoned}_`));
    // An unordered bulk write applies the rest, then reports what it refused.
    const duplicates = await super.bulkUpdate(operations.filter((op) => !refused.includes(op)));
    if (refused.length > 0) throw new Error(`document ${String(refused[0]!.filter['_id'])} is too large`);
    return duplicates;
  }
}

describe('ReaderIsolation over the MongoDB store (documents on mingo)', () => {
  it('delivers to every other reader and dead-letters the one whose document is refused', async () => {
    const all = readers(4);
    const poisoned = all[2]!;
    const collections: TimelineCollections = {
      positions: new MingoCollection(),
      cache: new MingoCollection(),
      meta: new MingoCollection(),
      ring: new RefusingRing(poisoned),
      timeBuckets: new MingoCollection(),
      sizeBuckets: new MingoCollection(),
    };
    const store = new MongoTimelineStore(collections, () => ring);
    const { readerIsolation, letters } = isolation();
    expect(await store.deliver({ after: 0, position: 1, deliveries: follows(all) })).toEqual({ applied: true, position: 1 });
    expect(await deliver(store, readerIsolation, { after: 1, position: 2, deliveries: [{ kind: 'insert', readers: all, activity: post('p'), eventPosition: 2 }] })).toEqual({ applied: true, position: 2 });
    expect(await store.position()).toBe(2);
    for (const reader of all) expect(await idsOf(store, reader)).toEqual(reader === poisoned ? [] : ['p']);
    // Each attempt claimed a slot of its own before its write was refused.
    expect(letters).toEqual([{ reader: poisoned, position: 2, reason: expect.stringMatching(new RegExp(`^document ${poisoned}_\\d+ is too large$`)), attempts: 3 }]);
  });
});

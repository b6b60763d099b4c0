import { describeTimelineStoreContract } from '../contract/timeline-store.contract.js';
import { MingoCollection } from '../contract/mingo-collection.js';
import type { StoredDocument, TimelineCollections } from './document-collection.js';
import { isDuplicateKeyError } from './duplicate-key.js';
import { CACHE_BUILD_TIMEOUT_MS, MongoTimelineStore, mongoTimelineModels, timelinePositionId } from './mongo-timeline-store.js';
import { referenceTo, relevanceKeyOf, type FeedId } from '@feedmill/contracts';
import {
  cacheDocuments,
  EMBEDDED_BYTES_PER_DOCUMENT,
  embedLimit,
  entryOf,
  readerMetaDocuments,
  ringDocuments,
  sizeBucketDocuments,
  timeBucketDocuments,
  type CacheDocument,
  type ReaderMetaDocument,
  type RingSlotDocument,
  type SizeBucketDocument,
  type TimeBucketDocument,
  type TimelinePositionDocument,
} from './timeline-documents.js';

const collections = () => ({
  positions: new MingoCollection<TimelinePositionDocument>(),
  cache: new MingoCollection<CacheDocument>(),
  meta: new MingoCollection<ReaderMetaDocument>(),
  ring: new MingoCollection<RingSlotDocument>(),
  timeBuckets: new MingoCollection<TimeBucketDocument>(),
  sizeBuckets: new MingoCollection<SizeBucketDocument>(),
});

describeTimelineStoreContract('mongodb documents on mingo', async (policyOf, now) => new MongoTimelineStore(collections(), policyOf, now), mongoTimelineModels);

describe('timeline partitions on shared collections', () => {
  it('keep a position document each, so that each fences its own deliveries; a single partition keeps the one timelines had before', async () => {
    const shared = collections();
    const policy = () => ({ model: 'ring' as const, cap: 10, inactivityMs: 60_000 });
    const [first, second] = [0, 1].map((partition) => new MongoTimelineStore(shared, policy, undefined, timelinePositionId(partition, 2)));
    expect(await first!.deliver({ after: 0, position: 5, deliveries: [] })).toEqual({ applied: true, position: 5 });
    expect(await second!.position()).toBe(0);
    expect(await second!.deliver({ after: 5, position: 7, deliveries: [] })).toEqual({ applied: false, position: 0 });
    expect(await second!.deliver({ after: 0, position: 7, deliveries: [] })).toEqual({ applied: true, position: 7 });
    expect(await first!.position()).toBe(5);
    expect(await shared.positions.findOne({ _id: 'timeline-p0' })).toMatchObject({ position: 5 });
    expect(await shared.positions.findOne({ _id: 'timeline-p1' })).toMatchObject({ position: 7 });
    expect(await shared.positions.findOne({ _id: 'timeline' })).toBeNull();
    expect(timelinePositionId(0, 1)).toBe('timeline');
  });
});

const at = (second: number, id = `a${second}`) => ({ id, feed: 'user:a' as const, actor: 'a', verb: 'post', object: 'o', time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });

describe('capped cache documents', () => {
  it('never create a cache on delivery, push once, keep the newest cap, and know where pulling starts', async () => {
    const cache = new MingoCollection<CacheDocument>();
    await cache.updateMany(cacheDocuments.insert(['timeline:r'], entryOf(at(1)), 3));
    expect(cache.documents).toEqual([]);
    await cache.updateOne(cacheDocuments.startBuild('timeline:r', 'build-1', new Date(0), new Date(0)));
    for (const second of [5, 1, 4, 4, 2, 3, 6]) await cache.updateMany(cacheDocuments.insert(['timeline:r'], entryOf(at(second)), 3));
    const [document] = cache.documents;
    expect(document!.entries.map((e) => e.id)).toEqual(['a6', 'a5', 'a4']);
    expect(cacheDocuments.pullBelow(document!, 3)).toBe(entryOf(at(4)).k);
    expect(cacheDocuments.pullBelow({ entries: [entryOf(at(9))] }, 3)).toBeUndefined();
  });

  it('finish a build only on the entries they were merged with, and only by its builder', async () => {
    const cache = new MingoCollection<CacheDocument>();
    await cache.updateOne(cacheDocuments.startBuild('timeline:r', 'build-1', new Date(0), new Date(0)));
    const stale = cacheDocuments.finishBuild('timeline:r', 'build-1', [], [at(1)], 3, new Date(0));
    await cache.updateMany(cacheDocuments.insert(['timeline:r'], entryOf(at(2)), 3));
    expect({ staleFinished: await cache.replaceOne(stale) }).toEqual({ staleFinished: false });
    const current = cache.documents[0]!.entries;
    const another = cacheDocuments.finishBuild('timeline:r', 'build-2', current, [at(2), at(1)], 3, new Date(0));
    expect({ anotherFinished: await cache.replaceOne(another) }).toEqual({ anotherFinished: false });
    const fresh = cacheDocuments.finishBuild('timeline:r', 'build-1', current, [at(2), at(1)], 3, new Date(0));
    expect({ freshFinished: await cache.replaceOne(fresh) }).toEqual({ freshFinished: true });
    expect(cache.documents[0]!.entries.map((e) => e.id)).toEqual(['a2', 'a1']);
    expect(cache.documents[0]!.building).toBeUndefined();
  });
});

describe('MongoTimelineStore caches', () => {
  const reader = 'timeline:r' as const;
  const policy = { model: 'cache' as const, cap: 5, inactivityMs: 3_600_000 };

  it('take over a build left unfinished by a crash once it is older than the timeout, and not before', async () => {
    let clock = 1_000_000;
    const db = collections();
    const store = new MongoTimelineStore(db, () => policy, () => clock);
    // A reader started a build and died before finishing it; a post was delivered to it since.
    await db.cache.updateOne(cacheDocuments.startBuild(reader, 'crashed', new Date(clock), new Date(clock + 3_600_000)));
    await store.deliver({ after: 0, position: 1, deliveries: [{ kind: 'insert', readers: [reader], activity: at(3) }] });
    const pull = async () => [at(2), at(1)];
    clock += CACHE_BUILD_TIMEOUT_MS - 1;
    expect((await store.readPage(reader, undefined, 10, pull)).items.map((a) => a.id)).toEqual(['a2', 'a1']);
    expect({ sizeWhileFresh: await store.size(reader) }).toEqual({ sizeWhileFresh: 1 });
    clock += 2;
    expect((await store.readPage(reader, undefined, 10, pull)).items.map((a) => a.id)).toEqual(['a3', 'a2', 'a1']);
    expect(db.cache.documents[0]).toMatchObject({ _id: reader, entries: [{ id: 'a3' }, { id: 'a2' }, { id: 'a1' }] });
    expect(db.cache.documents[0]!.building).toBeUndefined();
  });

  it('keep each group’s cap when one post reaches caches of groups with different caps', async () => {
    const db = collections();
    const caps = new Map<FeedId, number>([
      ['small:r', 2],
      ['large:r', 4],
    ]);
    const store = new MongoTimelineStore(db, (r) => ({ ...policy, cap: caps.get(r)! }), Date.now);
    for (const r of caps.keys()) await store.readPage(r, undefined, 1, async () => []);
    const posts = [1, 2, 3, 4, 5].map((second) => at(second));
    for (const [index, activity] of posts.entries()) {
      await store.deliver({ after: index, position: index + 1, deliveries: [{ kind: 'insert', readers: ['small:r', 'large:r'], activity }] });
    }
    expect({ small: await store.size('small:r'), large: await store.size('large:r') }).toEqual({ small: 2, large: 4 });
  });
});

describe('entries of large activities', () => {
  const large = (second: number) => ({ ...at(second), extra: { text: 'x'.repeat(60_000) } });

  it('are linked where a document could otherwise pass 16 MB, and embedded where it cannot', () => {
    for (const model of ['cache', 'time-buckets'] as const) {
      // A full document at the embed limit stays under MongoDB's 16 MB with room for references.
      expect(embedLimit({ model, cap: 10_000 }) * 10_000).toBeLessThanOrEqual(EMBEDDED_BYTES_PER_DOCUMENT);
      expect(entryOf(large(1), embedLimit({ model, cap: 800 })).a).toEqual(referenceTo(large(1)));
    }
    expect(entryOf(large(1), embedLimit({ model: 'ring', cap: 800 })).a).toEqual(large(1));
    expect(entryOf(at(1), embedLimit({ model: 'cache', cap: 800 })).a).toEqual(at(1));
    expect(entryOf(at(1), embedLimit({ model: 'cache', cap: 800, embed: false })).a).toEqual(referenceTo(at(1)));
  });

  it('keep a cache of 800 large activities far below 16 MB', async () => {
    const db = collections();
    const store = new MongoTimelineStore(db, () => ({ model: 'cache', cap: 800, inactivityMs: 3_600_000 }), Date.now);
    await store.readPage('timeline:r', undefined, 1, async () => []);
    const deliveries = Array.from({ length: 800 }, (_, i) => ({ kind: 'insert' as const, readers: ['timeline:r' as const], activity: large(i) }));
    await store.deliver({ after: 0, position: 1, deliveries });
    expect(await store.size('timeline:r')).toBe(800);
    expect(JSON.stringify(db.cache.documents[0]).length).toBeLessThan(1024 * 1024);
  });
});

describe('ring documents', () => {
  it('count arrivals atomically and overwrite the oldest slot, holding at most cap documents', async () => {
    const ring = new MingoCollection<RingSlotDocument>();
    const meta = new MingoCollection<ReaderMetaDocument>();
    for (let second = 1; second <= 10; second++) {
      const counter = await meta.findOneAndUpdate(ringDocuments.claimSlot('timeline:r'));
      const previous = await ring.findOneAndUpdate(ringDocuments.writeSlot('timeline:r', ringDocuments.slotOf(counter!.n, 4), entryOf(at(second))));
      if (previous) await meta.updateOne(readerMetaDocuments.raiseFloor('timeline:r', previous.k));
    }
    expect(ring.documents.map((d) => d._id).sort()).toEqual(['timeline:r_0', 'timeline:r_1', 'timeline:r_2', 'timeline:r_3']);
    expect(meta.documents[0]).toMatchObject({ _id: 'timeline:r', n: 10, floor: entryOf(at(6)).k });
    const newest = await ring.find(ringDocuments.page('timeline:r', meta.documents[0]!.floor, undefined, 10));
    expect(newest.map((d) => d.id)).toEqual(['a10', 'a9', 'a8', 'a7']);
  });
});

describe('time bucket documents', () => {
  it('append by upsert into the bucket of the activity time, once, oldest first', async () => {
    const buckets = new MingoCollection<TimeBucketDocument>();
    const day = 86_400_000;
    for (const second of [3, 1, 2]) await buckets.updateOne(timeBucketDocuments.append('timeline:r', entryOf(at(second)), day));
    await expect(buckets.updateOne(timeBucketDocuments.append('timeline:r', entryOf(at(2)), day))).rejects.toMatchObject({ code: 11000 });
    await buckets.updateOne(timeBucketDocuments.append('timeline:r', entryOf({ ...at(0, 'next-day'), time: '2026-01-02T00:00:00.000Z' }), day));
    expect(buckets.documents.map((d) => [d._id, d.entries.map((e) => e.id)])).toEqual([
      ['timeline:r|2026-01-01T00:00:00.000Z', ['a1', 'a2', 'a3']],
      ['timeline:r|2026-01-02T00:00:00.000Z', ['next-day']],
    ]);
  });
});

describe('size bucket documents', () => {
  it('roll over at N, and two writers racing for a full bucket neither overfill it nor both open the next', async () => {
    const buckets = new MingoCollection<SizeBucketDocument>();
    const append = async (seq: number, id: string) => {
      for (let s = seq; ; s++) {
        try {
          await buckets.updateOne(sizeBucketDocuments.append('timeline:r', s, entryOf(at(1, id)), 2));
          return s;
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
        }
      }
    };
    expect(await append(0, 'x1')).toBe(0);
    expect(await append(0, 'x2')).toBe(0);
    // Both writers still believe bucket 0 is current.
    const [first, second] = await Promise.all([append(0, 'x3'), append(0, 'x4')]);
    expect([first, second]).toEqual([1, 1]);
    expect(await append(0, 'x5')).toBe(2);
    expect(buckets.documents.map((d) => [d._id, d.n, d.entries.length])).toEqual([
      ['timeline:r|0', 2, 2],
      ['timeline:r|1', 2, 2],
      ['timeline:r|2', 1, 1],
    ]);
    expect(sizeBucketDocuments.effectiveSize({ cap: 800, bucketSize: 100 })).toBe(100);
    expect(sizeBucketDocuments.effectiveSize({ cap: 4, bucketSize: 100 })).toBe(2);
  });
});

describe('fan-out into MongoDB timelines', () => {
  it.each(['ring', 'time-buckets', 'size-buckets'] as const)('takes as many round trips for fifty %s readers as for one, and stores each entry once', async (model) => {
    const calls: string[] = [];
    const counted = <TDocument extends StoredDocument>(): MingoCollection<TDocument> =>
      new Proxy(new MingoCollection<TDocument>(), {
        get(target, property, receiver) {
          const value = Reflect.get(target, property, receiver);
          if (typeof value !== 'function' || property === 'constructor') return value;
          return (...args: unknown[]) => {
            calls.push(String(property));
            return Reflect.apply(value, target, args);
          };
        },
      });
    const db: TimelineCollections = { positions: counted(), cache: counted(), meta: counted(), ring: counted(), timeBuckets: counted(), sizeBuckets: counted() };
    const store = new MongoTimelineStore(db, () => ({ model, cap: 3, inactivityMs: 0, bucketSize: 1 }));
    const readers = Array.from({ length: 50 }, (_, i) => `timeline:r${i}` as const);
    const deliver = async (position: number, to: readonly `timeline:${string}`[], id: string) => {
      calls.length = 0;
      await store.deliver({ after: position - 1, position, deliveries: [{ kind: 'insert', readers: [...to], activity: at(position, id) }] });
      return calls.length;
    };
    await store.deliver({ after: 0, position: 1, deliveries: readers.map((reader) => ({ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true })) });
    await deliver(2, readers, 'w');
    const one = await deliver(3, readers.slice(0, 1), 'x');
    const fifty = await deliver(4, readers, 'y');
    expect(fifty).toBe(one);
    expect(await store.size('timeline:r0')).toBe(3);
    expect(await store.size('timeline:r49')).toBe(2);
    // The same delivery again changes nothing.
    await store.deliver({ after: 4, position: 5, deliveries: [{ kind: 'insert', readers: [...readers], activity: at(4, 'y') }] });
    expect(await store.size('timeline:r49')).toBe(2);
    // An update is one write for all of them, whatever their number.
    const update = async (position: number, to: readonly `timeline:${string}`[], object: string) => {
      calls.length = 0;
      await store.deliver({ after: position - 1, position, deliveries: [{ kind: 'update', readers: [...to], activity: { ...at(4, 'y'), object, updatedAt: at(9).time } }] });
      return calls.length;
    };
    expect(await update(6, readers.slice(0, 1), 'edited once')).toBe(await update(7, readers, 'edited for all'));
    const [newest] = (await store.readPage('timeline:r49', undefined, 1, async () => [])).items;
    expect(newest).toMatchObject({ id: 'y', object: 'edited for all' });
  });
});

describe('updates in place', () => {
  const edited = (activity: ReturnType<typeof at>) => ({ ...activity, object: 'edited', updatedAt: '2026-02-01T00:00:00.000Z' });

  it('replace the entry held under the same key in a document’s entries, wherever it is, and nothing else', async () => {
    const buckets = new MingoCollection<TimeBucketDocument>();
    const day = 86_400_000;
    for (const reader of ['timeline:r', 'timeline:s'] as const) for (const second of [1, 2, 3]) await buckets.updateOne(timeBucketDocuments.append(reader, entryOf(at(second)), day));
    await buckets.updateMany(timeBucketDocuments.replacement(['timeline:r'], entryOf(edited(at(2)))));
    expect(buckets.documents.map((d) => [d.r, d.entries.map((e) => [e.id, (e.a as { object: string }).object])])).toEqual([
      ['timeline:r', [['a1', 'o'], ['a2', 'edited'], ['a3', 'o']]],
      ['timeline:s', [['a1', 'o'], ['a2', 'o'], ['a3', 'o']]],
    ]);
    // A version held under another key (bumped since, by relevance) is the bump's to move, not the update's.
    const bumped = { ...edited(at(3)), bumpedAt: '2026-03-01T00:00:00.000Z' };
    await buckets.updateMany(timeBucketDocuments.replacement(['timeline:r'], entryOf(bumped, undefined, relevanceKeyOf)));
    expect(buckets.documents[0]!.entries.map((e) => (e.a as { object: string }).object)).toEqual(['o', 'edited', 'o']);
  });

  it('reach every materialized model and built caches, keep each entry’s place, and drop caches being built', async () => {
    const db = collections();
    const models = { ring: 'ring', time: 'time-buckets', size: 'size-buckets', cache: 'cache', building: 'cache', linked: 'ring' } as const;
    const policyOf = (reader: FeedId) => {
      const kind = reader.slice(0, reader.indexOf(':')) as keyof typeof models;
      return { model: models[kind], cap: 4, inactivityMs: 3_600_000, bucketSize: 2, embed: kind !== 'linked' };
    };
    const store = new MongoTimelineStore(db, policyOf, Date.now);
    const readers = Object.keys(models).map((kind) => `${kind}:r` as FeedId);
    const posts = [1, 2, 3].map((second) => at(second));
    const pull = async (_before: string | undefined, limit: number) => [...posts].reverse().slice(0, limit);
    await store.deliver({ after: 0, position: 1, deliveries: readers.map((reader) => ({ kind: 'follow', reader, target: 'user:a', recent: [], exhausted: true })) });
    await store.deliver({ after: 1, position: 2, deliveries: posts.map((activity) => ({ kind: 'insert', readers, activity })) });
    await store.readPage('cache:r', undefined, 1, pull);
    await db.cache.updateOne(cacheDocuments.startBuild('building:r', 'someone', new Date(), new Date(Date.now() + 60_000)));
    await store.deliver({ after: 2, position: 3, deliveries: [{ kind: 'update', readers, activity: edited(at(2)) }] });
    for (const reader of ['ring:r', 'time:r', 'size:r', 'cache:r'] as FeedId[]) {
      const page = await store.readPage(reader, undefined, 10, pull);
      expect({ reader, items: page.items.map((a) => [a.id, 'object' in a ? a.object : 'linked']) }).toEqual({ reader, items: [['a3', 'o'], ['a2', 'edited'], ['a1', 'o']] });
    }
    // A linked entry stays a reference: the reader gets the activity from content.
    expect((await store.readPage('linked:r', undefined, 10, pull)).items).toEqual(posts.map(referenceTo).reverse());
    expect(await db.cache.findOne({ _id: 'building:r' })).toBeNull();
  });
});

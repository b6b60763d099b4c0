import type { FeedId, SortKey, TimelineItem } from '@feedmill/contracts';
import type { TimelinePolicy } from '../ports.js';
import type { DocumentCollection } from './document-collection.js';
import { isDuplicateKeyError } from './duplicate-key.js';
import {
  bucketTotalDocuments,
  readerMetaDocuments,
  ringDocuments,
  sizeBucketDocuments,
  timeBucketDocuments,
  type BucketDocument,
  type EntryDocument,
  type FindOperation,
  type ReaderMetaDocument,
  type RingSlotDocument,
  type SizeBucketDocument,
  type TimeBucketDocument,
  type UpdateOperation,
} from './timeline-documents.js';

/**
 * How one model stores the entries of a timeline that exists from the reader's first follow
 * (`ring`, `time-buckets`, `size-buckets`). The reader's `meta` document (its floor and the
 * model's counters) is kept by the store; a layout writes and reads its entry documents.
 */
export interface MaterializedLayout {
  /** Stores an entry above the floor; false when it was already there. May raise the floor. */
  insert(reader: FeedId, entry: EntryDocument, policy: TimelinePolicy, meta: ReaderMetaDocument): Promise<boolean>;
  newestBelow(reader: FeedId, floor: SortKey | undefined, before: SortKey | undefined, limit: number): Promise<TimelineItem[]>;
  remove(readers: readonly FeedId[], activityId: string): Promise<void>;
  /**
   * Puts the entry's item (a new version of its activity) in place of the one each listed
   * reader holds under the same key; readers holding none are left as they are.
   */
  replace(readers: readonly FeedId[], entry: EntryDocument): Promise<void>;
  removeFeed(reader: FeedId, feed: FeedId): Promise<void>;
  /** Takes an erased feed's entries out of every reader's timeline (addressed ones too). */
  eraseFeed(feed: FeedId): Promise<void>;
  entryCount(): Promise<number>;
  /**
   * Stores one activity's entry for many readers (the materialized ones, above each one's
   * floor) in a fixed number of round trips, however many readers. Returns how many were stored.
   */
  insertMany(items: ReadonlyArray<InsertItem>): Promise<number>;
}

export interface InsertItem {
  reader: FeedId;
  entry: EntryDocument;
  cap: number;
  bucketMs?: number;
  bucketSize?: number;
}

const above = (floor: SortKey | undefined, before: SortKey | undefined) => (e: EntryDocument) =>
  (floor === undefined || e.k > floor) && (before === undefined || e.k < before);
const newestFirst = (a: EntryDocument, b: EntryDocument) => (a.k < b.k ? 1 : -1);

/**
 * A bucket reader's entry total, trusted unless a removal marked it for a recount (a `$pull`
 * over many readers cannot say how many entries each lost); then counted from its buckets.
 */
async function exactTotal<TBucket extends BucketDocument>(
  reader: FeedId,
  readerMeta: ReaderMetaDocument,
  buckets: DocumentCollection<TBucket>,
  meta: DocumentCollection<ReaderMetaDocument>,
  all: FindOperation,
): Promise<number> {
  if (readerMeta.recount !== true) return readerMeta.total ?? 0;
  const total = (await buckets.find(all)).reduce((sum, bucket) => sum + bucket.entries.length, 0);
  await meta.updateOne(bucketTotalDocuments.recounted(reader, total));
  return total;
}

/** How a bucket model finds and removes entries in its readers' buckets. */
interface BucketRemovals {
  holdingAmong(readers: readonly FeedId[], activityId: string): FindOperation;
  removal(readers: readonly FeedId[], activityId: string): UpdateOperation;
  unfollowed(reader: FeedId, feed: FeedId): UpdateOperation;
  erased(feed: FeedId): UpdateOperation;
}

/** Removes an activity from the buckets of the readers holding it, marking their totals for a recount first. */
async function removeFromBuckets<TBucket extends BucketDocument>(
  buckets: DocumentCollection<TBucket>,
  meta: DocumentCollection<ReaderMetaDocument>,
  documents: BucketRemovals,
  readers: readonly FeedId[],
  id: string,
): Promise<void> {
  const holders = [...new Set((await buckets.find(documents.holdingAmong(readers, id))).map((d) => d.r))];
  if (holders.length === 0) return;
  await meta.updateMany(bucketTotalDocuments.recountDue(holders));
  await buckets.updateMany(documents.removal(holders, id));
}

/** Removes an unfollowed feed's entries from a reader's buckets, marking its total for a recount first. */
async function removeFeedFromBuckets<TBucket extends BucketDocument>(
  buckets: DocumentCollection<TBucket>,
  meta: DocumentCollection<ReaderMetaDocument>,
  documents: BucketRemovals,
  reader: FeedId,
  feed: FeedId,
): Promise<void> {
  await meta.updateMany(bucketTotalDocuments.recountDue([reader]));
  await buckets.updateMany(documents.unfollowed(reader, feed));
}

/** An erasure: its entries out of every reader's buckets; the readers' totals are counted again, since which readers held some is not known. */
async function eraseFeedFromBuckets<TBucket extends BucketDocument>(
  buckets: DocumentCollection<TBucket>,
  meta: DocumentCollection<ReaderMetaDocument>,
  documents: BucketRemovals,
  feed: FeedId,
): Promise<void> {
  await meta.updateMany(bucketTotalDocuments.recountAll());
  await buckets.updateMany(documents.erased(feed));
}

/** Seed 000: claim the next slot and overwrite it, raising the floor past what it held. */
export function ringLayout(entries: DocumentCollection<RingSlotDocument>, meta: DocumentCollection<ReaderMetaDocument>): MaterializedLayout {
  return {
    async insert(reader, entry, policy) {
      if (await entries.findOne(ringDocuments.holding(reader, entry.id))) return false;
      const counter = await meta.findOneAndUpdate(ringDocuments.claimSlot(reader));
      const slot = ringDocuments.slotOf(counter!.n, policy.cap);
      const previous = await entries.findOneAndUpdate(ringDocuments.writeSlot(reader, slot, entry));
      if (previous) await meta.updateOne(readerMetaDocuments.raiseFloor(reader, previous.k));
      return true;
    },
    async newestBelow(reader, floor, before, limit) {
      return (await entries.find(ringDocuments.page(reader, floor, before, limit))).map((d) => d.a);
    },
    async insertMany(items) {
      // 1-2. Floors, who is materialized, and who already holds the activity.
      const due = await dueReaders(items, meta, (readers, id) => entries.find(ringDocuments.holdingAmong(readers, id)));
      if (due.length === 0) return 0;
      // 3. Claim a slot each: one $inc per reader in one round trip, then read the counters.
      await meta.bulkUpdate(due.map(({ reader }) => ringDocuments.claimSlot(reader)));
      const counters = new Map((await meta.find(readerMetaDocuments.of(due.map((d) => d.reader)))).map((d) => [d._id, d.n]));
      const slots = due.map((item) => ({ ...item, slot: ringDocuments.slotOf(counters.get(item.reader)!, item.cap) }));
      // 4. What the slots held, whose keys the floors must pass; 5. write slots, raise floors.
      const slotIds = slots.map(({ reader, slot }) => `${reader}_${slot}`);
      const previous = new Map((await entries.find(ringDocuments.slots(slotIds))).map((d) => [d._id, d.k]));
      await entries.bulkUpdate(slots.map(({ reader, slot, entry }) => ringDocuments.writeSlot(reader, slot, entry)));
      await meta.bulkUpdate(
        slots.flatMap(({ reader, slot }) => {
          const overwritten = previous.get(`${reader}_${slot}`);
          return overwritten === undefined ? [] : [readerMetaDocuments.raiseFloor(reader, overwritten)];
        }),
      );
      return slots.length;
    },
    remove: async (readers, id) => void (await entries.deleteMany(ringDocuments.removal(readers, id))),
    replace: (readers, entry) => entries.updateMany(ringDocuments.replacement(readers, entry)),
    removeFeed: async (reader, feed) => void (await entries.deleteMany(ringDocuments.unfollowed(reader, feed))),
    eraseFeed: async (feed) => void (await entries.deleteMany(ringDocuments.erased(feed))),
    entryCount: () => entries.count({}),
  };
}

/**
 * One document per reader per time span, appended by upsert, entries oldest first. Past the
 * cap, the oldest entry of the oldest bucket goes and the floor rises to it.
 */
export function timeBucketLayout(buckets: DocumentCollection<TimeBucketDocument>, meta: DocumentCollection<ReaderMetaDocument>): MaterializedLayout {
  /** Past the cap, drops the oldest entries of the oldest bucket and raises the floor to them. */
  const trim = async (reader: FeedId, readerMeta: ReaderMetaDocument, cap: number) => {
    if ((readerMeta.total ?? 0) <= cap) return;
    let total = await exactTotal(reader, readerMeta, buckets, meta, timeBucketDocuments.all(reader));
    while (total > cap) {
      const [oldest] = await buckets.find(timeBucketDocuments.oldest(reader));
      if (!oldest) break;
      const dropped = oldest.entries[0];
      if (dropped) {
        await buckets.updateOne(timeBucketDocuments.dropOldestEntry(oldest._id));
        await meta.updateOne(readerMetaDocuments.raiseFloor(reader, dropped.k));
      }
      if (oldest.entries.length <= 1) await buckets.deleteMany({ _id: oldest._id });
      total = (await meta.findOneAndUpdate(bucketTotalDocuments.count(reader, dropped ? -1 : 0)))!.total ?? 0;
    }
  };
  return {
    async insert(reader, entry, policy) {
      try {
        await buckets.updateOne(timeBucketDocuments.append(reader, entry, policy.bucketMs ?? 86_400_000));
      } catch (error) {
        if (isDuplicateKeyError(error)) return false; // the bucket exists and already holds it
        throw error;
      }
      await trim(reader, (await meta.findOneAndUpdate(bucketTotalDocuments.count(reader, 1)))!, policy.cap);
      return true;
    },
    async insertMany(items) {
      const due = await dueReaders(items, meta, (readers, id) => buckets.find(timeBucketDocuments.holdingAmong(readers, id)));
      if (due.length === 0) return 0;
      const refused = new Set(await buckets.bulkUpdate(due.map(({ reader, entry, bucketMs }) => timeBucketDocuments.append(reader, entry, bucketMs ?? 86_400_000))));
      const stored = due.filter((_, index) => !refused.has(index));
      await meta.bulkUpdate(stored.map(({ reader }) => bucketTotalDocuments.count(reader, 1)));
      const totals = await meta.find(readerMetaDocuments.of(stored.map((s) => s.reader)));
      const capOf = new Map(stored.map((s) => [s.reader, s.cap]));
      for (const document of totals) await trim(document._id, document, capOf.get(document._id)!);
      return stored.length;
    },
    async newestBelow(reader, floor, before, limit) {
      const out: EntryDocument[] = [];
      let upTo = before;
      // Buckets are in key order: read newest buckets until the page is full.
      for (let round = 0; round < 10_000 && out.length < limit; round++) {
        const batch = await buckets.find(timeBucketDocuments.newest(reader, upTo, 4));
        if (batch.length === 0) break;
        for (const bucket of batch) out.push(...bucket.entries.filter(above(floor, before)));
        upTo = batch[batch.length - 1]!.b;
        if (batch.length < 4) break;
      }
      return out.sort(newestFirst).slice(0, limit).map((e) => e.a);
    },
    remove: (readers, id) => removeFromBuckets(buckets, meta, timeBucketDocuments, readers, id),
    replace: (readers, entry) => buckets.updateMany(timeBucketDocuments.replacement(readers, entry)),
    removeFeed: (reader, feed) => removeFeedFromBuckets(buckets, meta, timeBucketDocuments, reader, feed),
    eraseFeed: (feed) => eraseFeedFromBuckets(buckets, meta, timeBucketDocuments, feed),
    entryCount: () => buckets.sumOfArrayLengths('entries'),
  };
}

/**
 * Documents of N entries in arrival order, `_id = reader|seq`: a full bucket refuses the
 * append (its `n` guard) and the upsert of the same `_id` then fails on the unique key, so
 * two writers can never both open the next bucket or overfill one (Socialite's race).
 * Past the cap, the oldest bucket goes and the floor rises past everything it held.
 */
export function sizeBucketLayout(buckets: DocumentCollection<SizeBucketDocument>, meta: DocumentCollection<ReaderMetaDocument>): MaterializedLayout {
  /** Past the cap, drops the oldest bucket and raises the floor past everything it held. */
  const trim = async (reader: FeedId, readerMeta: ReaderMetaDocument, cap: number) => {
    if ((readerMeta.total ?? 0) <= cap) return;
    let total = await exactTotal(reader, readerMeta, buckets, meta, sizeBucketDocuments.all(reader));
    while (total > cap) {
      const [oldest] = await buckets.find(sizeBucketDocuments.oldest(reader));
      if (!oldest) break;
      const held = oldest.entries;
      await buckets.deleteMany({ _id: oldest._id });
      const newestHeld = held.reduce<SortKey | undefined>((max, e) => (max === undefined || e.k > max ? e.k : max), undefined);
      if (newestHeld !== undefined) await meta.updateOne(readerMetaDocuments.raiseFloor(reader, newestHeld));
      total = (await meta.findOneAndUpdate(bucketTotalDocuments.count(reader, -held.length)))!.total ?? 0;
    }
  };
  return {
    async insert(reader, entry, policy, readerMeta) {
      if (await buckets.findOne(sizeBucketDocuments.holding(reader, entry.id))) return false;
      const size = sizeBucketDocuments.effectiveSize(policy);
      let seq = readerMeta.s ?? 0;
      for (;;) {
        try {
          await buckets.updateOne(sizeBucketDocuments.append(reader, seq, entry, size));
          break;
        } catch (error) {
          if (!isDuplicateKeyError(error)) throw error;
          seq += 1; // full: the next bucket
        }
      }
      await trim(reader, (await meta.findOneAndUpdate(sizeBucketDocuments.advance(reader, seq)))!, policy.cap);
      return true;
    },
    async insertMany(items) {
      const due = await dueReaders(items, meta, (readers, id) => buckets.find(sizeBucketDocuments.holdingAmong(readers, id)));
      if (due.length === 0) return 0;
      // Append where each reader's current bucket is; those refused (full) try the next one.
      let pending = due.map((item) => ({ ...item, seq: item.meta.s ?? 0 }));
      const placed: typeof pending = [];
      while (pending.length > 0) {
        const refused = new Set(await buckets.bulkUpdate(pending.map(({ reader, seq, entry, cap, bucketSize }) => sizeBucketDocuments.append(reader, seq, entry, sizeBucketDocuments.effectiveSize({ cap, bucketSize })))));
        placed.push(...pending.filter((_, index) => !refused.has(index)));
        pending = pending.filter((_, index) => refused.has(index)).map((item) => ({ ...item, seq: item.seq + 1 }));
      }
      await meta.bulkUpdate(placed.map(({ reader, seq }) => sizeBucketDocuments.advance(reader, seq)));
      const capOf = new Map(placed.map((p) => [p.reader, p.cap]));
      for (const document of await meta.find(readerMetaDocuments.of(placed.map((p) => p.reader)))) await trim(document._id, document, capOf.get(document._id)!);
      return placed.length;
    },
    async newestBelow(reader, floor, before, limit) {
      // Arrival order is not key order: a reader's buckets (at most cap / N + 1) are read whole.
      const all = (await buckets.find(sizeBucketDocuments.all(reader))).flatMap((b) => b.entries);
      return all.filter(above(floor, before)).sort(newestFirst).slice(0, limit).map((e) => e.a);
    },
    remove: (readers, id) => removeFromBuckets(buckets, meta, sizeBucketDocuments, readers, id),
    replace: (readers, entry) => buckets.updateMany(sizeBucketDocuments.replacement(readers, entry)),
    removeFeed: (reader, feed) => removeFeedFromBuckets(buckets, meta, sizeBucketDocuments, reader, feed),
    eraseFeed: (feed) => eraseFeedFromBuckets(buckets, meta, sizeBucketDocuments, feed),
    entryCount: () => buckets.sumOfArrayLengths('entries'),
  };
}

/**
 * The readers of a batch that should store the entry: materialized, above their floor, and
 * not holding it yet. Two queries, however many readers.
 */
async function dueReaders(
  items: ReadonlyArray<InsertItem>,
  meta: DocumentCollection<ReaderMetaDocument>,
  holdingAmong: (readers: FeedId[], activityId: string) => Promise<ReadonlyArray<{ r: FeedId }>>,
): Promise<Array<InsertItem & { meta: ReaderMetaDocument }>> {
  if (items.length === 0) return [];
  const readers = items.map((item) => item.reader);
  const metas = new Map((await meta.find(readerMetaDocuments.of(readers))).map((d) => [d._id, d]));
  const holding = new Set((await holdingAmong(readers, items[0]!.entry.id)).map((d) => d.r));
  return items.flatMap((item) => {
    const readerMeta = metas.get(item.reader);
    const floor = readerMeta?.floor;
    if (!readerMeta || holding.has(item.reader) || (floor !== undefined && item.entry.k <= floor)) return [];
    return [{ ...item, meta: readerMeta }];
  });
}

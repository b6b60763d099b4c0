import { approximateBytes, referenceTo, sortKeyOf, type Activity, type FeedId, type KeyOf, type SortKey, type TimelineItem } from '@feedmill/contracts';

/**
 * The MongoDB documents of the timeline models, built by pure functions: every filter,
 * update and option is plain data, so that its meaning can be checked without a server
 * (with mingo, in the unit tests) and the adapter only hands it to the driver.
 */

/** One timeline entry as stored: the sort key, the activity id, and the activity or a reference to it. */
export interface EntryDocument {
  k: SortKey;
  id: string;
  a: TimelineItem;
}

/**
 * @param embedUpTo store a copy of the activity when it is at most this many bytes, else a
 *   reference (seed 002's linking). @defaultValue every activity is copied
 */
export function entryOf(activity: Activity, embedUpTo = Number.POSITIVE_INFINITY, keyOf: KeyOf = sortKeyOf): EntryDocument {
  const embed = embedUpTo === Number.POSITIVE_INFINITY || (embedUpTo > 0 && approximateBytes(activity) <= embedUpTo);
  return { k: keyOf(activity), id: activity.id, a: embed ? activity : referenceTo(activity) };
}

/**
 * Embedded copies a document may hold in all: MongoDB refuses documents over 16 MB, and the
 * rest of the budget is for references (a few hundred bytes each at most).
 */
export const EMBEDDED_BYTES_PER_DOCUMENT = 8 * 1024 * 1024;

/**
 * The largest activity a reader's entries embed; larger ones are stored as references and
 * read from content. A cache or a time bucket may hold all `cap` entries in one document, a
 * size bucket its bucket size, a ring slot one. 0 when the group links every entry.
 */
export function embedLimit(policy: { model: string; cap: number; embed?: boolean; bucketSize?: number }): number {
  if (policy.embed === false) return 0;
  const perDocument = policy.model === 'ring' ? 1 : policy.model === 'size-buckets' ? sizeBucketDocuments.effectiveSize(policy) : policy.cap;
  return Math.floor(EMBEDDED_BYTES_PER_DOCUMENT / perDocument);
}

export interface UpdateOperation {
  filter: Record<string, unknown>;
  update: Record<string, unknown>;
  /** `arrayFilters` name the array elements an update's `$[name]` paths change. */
  options?: { upsert?: boolean; returnDocument?: 'before' | 'after'; arrayFilters?: Array<Record<string, unknown>> };
}

/**
 * updateMany on documents holding `entries`: a new version of an activity put in place of
 * the one held with the same key (an update, or a bump by time), wherever the filter's
 * documents hold it. The entry keeps its place; one held under another key (a version
 * bumped since, by relevance) is left for the bump that moves it.
 */
function entryReplacement(filter: Record<string, unknown>, entry: EntryDocument): UpdateOperation {
  return {
    filter: { ...filter, 'entries.id': entry.id },
    update: { $set: { 'entries.$[held].a': entry.a } },
    options: { arrayFilters: [{ 'held.id': entry.id, 'held.k': entry.k }] },
  };
}

/** A whole document put in place of the one the filter matches. */
export interface ReplaceOperation<TDocument> {
  filter: Record<string, unknown>;
  replacement: TDocument;
  options?: { upsert?: boolean };
}

export interface FindOperation {
  filter: Record<string, unknown>;
  sort: Record<string, 1 | -1>;
  limit: number;
}

/** An index a collection's queries need, as `createIndex` takes it. */
export interface IndexDefinition {
  key: Record<string, 1 | -1>;
  options?: { unique?: boolean; expireAfterSeconds?: number; partialFilterExpression?: Record<string, unknown> };
}

/** Where the timeline store stands in the log: `{ _id: 'timeline', position, applying }`. */
export interface TimelinePositionDocument {
  _id: string;
  /** The log position of the last batch applied in full. */
  position?: number;
  /** The log position of the batch being applied: its writes may already be visible. */
  applying?: number;
}

/** A reader's capped cache: its newest entries, or a build under way. */
export interface CacheDocument {
  _id: FeedId;
  /** Newest first. */
  entries: EntryDocument[];
  expiresAt: Date;
  /** The token of the reader building it; absent once built. */
  building?: string;
  buildStartedAt?: Date;
}

/** MongoDB deletes a cache once its `expiresAt` has passed. */
const cacheIndexes: IndexDefinition[] = [{ key: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } }];

/**
 * Seed 002's capped cache: one document per active reader, `{ _id: reader, entries, expiresAt }`,
 * entries newest first. Fan-out pushes with `$each` `$sort` `$slice` and never upserts, so
 * only readers who have a cache pay for it; a TTL index on `expiresAt` drops idle ones. A
 * cache holding `cap` entries is exact from its oldest entry up (older pages come from the
 * pull path); one holding fewer is the whole timeline. Whatever would break that (a
 * removal, a follow, an unfollow) deletes the document, and the next read builds it again.
 */
export const cacheDocuments = {
  collection: 'timeline_cache',

  indexes: cacheIndexes,

  /** updateMany: add an entry to every listed reader's existing cache, once. */
  insert(readers: readonly FeedId[], entry: EntryDocument, cap: number): UpdateOperation {
    return {
      filter: { _id: { $in: readers }, 'entries.id': { $ne: entry.id } },
      update: { $push: { entries: { $each: [entry], $sort: { k: -1 }, $slice: cap } } },
    };
  },

  /**
   * deleteMany filter: the caches of these readers that hold the activity, and those being
   * built (what their build pulled may predate the change: it starts again at the next read).
   */
  holding(readers: readonly FeedId[], activityId: string): Record<string, unknown> {
    return { _id: { $in: readers }, $or: [{ 'entries.id': activityId }, { building: { $exists: true } }] };
  },

  /** deleteMany filter: every cache holding an erased feed's entry, and the erased feed's own. */
  erased(feed: FeedId): Record<string, unknown> {
    return { $or: [{ 'entries.a.feed': feed }, { _id: feed }] };
  },

  /** deleteMany filter: these readers' caches. */
  of(readers: readonly FeedId[]): Record<string, unknown> {
    return { _id: { $in: readers } };
  },

  /** deleteMany filter: these readers' caches being built (what their build pulled may predate a change). */
  building(readers: readonly FeedId[]): Record<string, unknown> {
    return { _id: { $in: readers }, building: { $exists: true } };
  },

  /** updateMany: a new version of the entry's activity in the built caches of these readers that hold it. */
  replacement(readers: readonly FeedId[], entry: EntryDocument): UpdateOperation {
    return entryReplacement({ _id: { $in: readers }, building: { $exists: false } }, entry);
  },

  /**
   * updateOne with upsert: a cache being built, under the builder's `token`. It takes
   * deliveries at once, so that none is missed while the pull path is read; readers ignore
   * it until it is built.
   */
  startBuild(reader: FeedId, token: string, now: Date, expiresAt: Date): UpdateOperation {
    return { filter: { _id: reader }, update: { $set: { building: token, buildStartedAt: now, expiresAt }, $push: { entries: { $each: [] } } }, options: { upsert: true } };
  },

  /**
   * findOneAndUpdate, after: a build begun before `staleBefore` was left by a reader that
   * crashed or gave up; another takes it over under its own token, keeping what was delivered.
   */
  takeOverBuild(reader: FeedId, staleBefore: Date, token: string, now: Date): UpdateOperation {
    return {
      filter: { _id: reader, building: { $exists: true }, $or: [{ buildStartedAt: { $lt: staleBefore } }, { buildStartedAt: { $exists: false } }] },
      update: { $set: { building: token, buildStartedAt: now } },
      options: { returnDocument: 'after' },
    };
  },

  /**
   * replaceOne, on the condition that the build is still this builder's and the entries are
   * still `current`: the built cache, the pulled entries merged with what was delivered
   * meanwhile, newest `cap` kept.
   */
  finishBuild(reader: FeedId, token: string, current: readonly EntryDocument[], pulled: readonly Activity[], cap: number, expiresAt: Date, embedUpTo = Number.POSITIVE_INFINITY, keyOf: KeyOf = sortKeyOf): ReplaceOperation<CacheDocument> {
    const byId = new Map<string, EntryDocument>();
    for (const entry of [...current, ...pulled.map((a) => entryOf(a, embedUpTo, keyOf))]) byId.set(entry.id, entry);
    const entries = [...byId.values()].sort((a, b) => (a.k < b.k ? 1 : -1)).slice(0, cap);
    return { filter: { _id: reader, building: token, entries: current }, replacement: { _id: reader, entries, expiresAt } };
  },

  /** updateOne: the reader read; keep the cache alive. */
  touch(reader: FeedId, expiresAt: Date): UpdateOperation {
    return { filter: { _id: reader }, update: { $set: { expiresAt } } };
  },

  /** deleteMany filter: caches whose reader stopped reading. */
  expired(now: Date): Record<string, unknown> {
    return { expiresAt: { $lt: now } };
  },

  /** Pull strictly below this key; undefined when the cache is the whole timeline. */
  pullBelow(document: { entries: EntryDocument[] }, cap: number): SortKey | undefined {
    return document.entries.length >= cap ? document.entries[document.entries.length - 1]!.k : undefined;
  },
};

/**
 * A materialized reader's meta document, one per reader whatever its model: its floor, and
 * the counters of the model that holds its entries.
 */
export interface ReaderMetaDocument {
  _id: FeedId;
  /** The ring's arrival counter. `materialize` starts it at 0 for every model, so it is always there. */
  n: number;
  /** Nothing at or below this key is known to be stored any more: the pull path serves it. */
  floor?: SortKey;
  /** The bucket models' entry total. */
  total?: number;
  /** Set while `total` may be too high: it is counted again from the buckets before it is trusted. */
  recount?: true;
  /** The size-bucket model's current bucket. */
  s?: number;
}

/**
 * The meta documents of every materialized model: created at the reader's first follow, and
 * the floor below which the pull path serves the reader.
 */
export const readerMetaDocuments = {
  collection: 'timeline_meta',

  /** updateOne with upsert: the reader's timeline exists from now on. */
  materialize(reader: FeedId): UpdateOperation {
    return { filter: { _id: reader }, update: { $inc: { n: 0 } }, options: { upsert: true } };
  },

  /** updateOne: nothing at or below `key` is known to be stored any more. */
  raiseFloor(reader: FeedId, key: SortKey): UpdateOperation {
    return { filter: { _id: reader }, update: { $max: { floor: key } }, options: { upsert: true } };
  },

  /** find: these readers' floors and counters. */
  of(readers: readonly FeedId[]): FindOperation {
    return { filter: { _id: { $in: readers } }, sort: { _id: 1 }, limit: readers.length };
  },
};

/** One slot of a reader's ring, `_id = reader_slot`: the entry written to it last. */
export interface RingSlotDocument {
  _id: string;
  r: FeedId;
  s: number;
  k: SortKey;
  id: string;
  a: TimelineItem;
}

/** A reader's page by key, a held activity, an unfollowed feed's entries. */
const ringIndexes: IndexDefinition[] = [{ key: { r: 1, k: -1 } }, { key: { r: 1, id: 1 } }, { key: { r: 1, 'a.feed': 1 } }];

/**
 * Seed 000's capped, segmented feed: an atomic counter per reader and one document per slot,
 * `_id = reader_(n mod cap)`, written by upsert, so the oldest arrival is overwritten and a
 * reader never holds more than `cap` documents. Reads sort by key. Because arrivals are not
 * always in time order, overwriting a slot raises the reader's floor to the overwritten key:
 * the slots are exact above the floor, and the pull path serves what is at or below it.
 */
export const ringDocuments = {
  entries: 'timeline_ring',

  indexes: ringIndexes,

  /** findOneAndUpdate on meta, returning the document after: the reader's counter moves on. */
  claimSlot(reader: FeedId): UpdateOperation {
    return { filter: { _id: reader }, update: { $inc: { n: 1 } }, options: { upsert: true, returnDocument: 'after' } };
  },

  slotOf(counter: number, cap: number): number {
    return (counter - 1) % cap;
  },

  /** findOneAndUpdate on entries, returning the document before: what the slot held. */
  writeSlot(reader: FeedId, slot: number, entry: EntryDocument): UpdateOperation {
    return {
      filter: { _id: `${reader}_${slot}` },
      update: { $set: { r: reader, s: slot, k: entry.k, id: entry.id, a: entry.a } },
      options: { upsert: true, returnDocument: 'before' },
    };
  },

  /** find on entries: the reader's stored entries above its floor and below `before`. */
  page(reader: FeedId, floor: SortKey | undefined, before: SortKey | undefined, limit: number): FindOperation {
    const k: Record<string, SortKey> = {};
    if (floor !== undefined) k['$gt'] = floor;
    if (before !== undefined) k['$lt'] = before;
    return { filter: Object.keys(k).length > 0 ? { r: reader, k } : { r: reader }, sort: { k: -1 }, limit };
  },

  /** find on entries: which of these readers already hold the activity. */
  holdingAmong(readers: readonly FeedId[], activityId: string): FindOperation {
    return { filter: { r: { $in: readers }, id: activityId }, sort: { r: 1 }, limit: readers.length };
  },

  /** find on entries: what these slots hold now. */
  slots(ids: readonly string[]): FindOperation {
    return { filter: { _id: { $in: ids } }, sort: { _id: 1 }, limit: ids.length };
  },

  /** find filter: whether the reader already holds the activity (a delivery repeated). */
  holding(reader: FeedId, activityId: string): Record<string, unknown> {
    return { r: reader, id: activityId };
  },

  /** deleteMany filter: an activity removed, from every listed reader. */
  removal(readers: readonly FeedId[], activityId: string): Record<string, unknown> {
    return { r: { $in: readers }, id: activityId };
  },

  /** updateMany: a new version of the entry's activity in the slot of each listed reader holding it under the same key. */
  replacement(readers: readonly FeedId[], entry: EntryDocument): UpdateOperation {
    return { filter: { r: { $in: readers }, id: entry.id, k: entry.k }, update: { $set: { a: entry.a } } };
  },

  /** deleteMany filter: an unfollowed feed's entries, but those addressed to the reader. */
  unfollowed(reader: FeedId, feed: FeedId): Record<string, unknown> {
    return { r: reader, 'a.feed': feed, 'a.to': { $ne: reader } };
  },

  /** deleteMany filter: every slot holding an erased feed's entry, and the erased feed's own ring. */
  erased(feed: FeedId): Record<string, unknown> {
    return { $or: [{ 'a.feed': feed }, { r: feed }] };
  },
};

/** What every bucket holds, whichever model cut it: its reader and entries. */
export interface BucketDocument {
  _id: string;
  r: FeedId;
  entries: EntryDocument[];
}

/**
 * The entry total both bucket models keep in a reader's meta document, moved by each append
 * and drop, and counted again from the buckets after a removal that cannot say how many went.
 */
export const bucketTotalDocuments = {
  /** findOneAndUpdate on meta, after: the reader's entry total moves by `by`. */
  count(reader: FeedId, by: number): UpdateOperation {
    return { filter: { _id: reader }, update: { $inc: { total: by } }, options: { upsert: true, returnDocument: 'after' } };
  },

  /**
   * updateMany on meta, before a `$pull` that may take entries out: those readers' totals are
   * counted again before they are next trusted. Set before the removal, so that a crash
   * between the two leaves a recount due rather than a total that stays too high.
   */
  /** updateMany: every reader's total is counted again from its buckets (after an erasure took entries out of unknown readers' buckets). */
  recountAll(): UpdateOperation {
    return { filter: {}, update: { $set: { recount: true } } };
  },

  /** deleteMany filter: an erased feed's own timeline meta. */
  erased(feed: FeedId): Record<string, unknown> {
    return { _id: feed };
  },

  recountDue(readers: readonly FeedId[]): UpdateOperation {
    return { filter: { _id: { $in: readers } }, update: { $set: { recount: true } } };
  },

  /** updateOne on meta: the reader's total as counted from its buckets. */
  recounted(reader: FeedId, total: number): UpdateOperation {
    return { filter: { _id: reader }, update: { $set: { total }, $unset: { recount: '' } } };
  },
};

/** The UTC start of the time span holding a key's activity time. */
function bucketStart(key: SortKey, spanMs: number): string {
  const time = Date.parse(key.slice(0, key.indexOf('|')));
  return new Date(Math.floor(time / spanMs) * spanMs).toISOString();
}

/** A reader's entries of one time span, oldest first. */
export interface TimeBucketDocument extends BucketDocument {
  /** The span's UTC start, an ISO string: buckets sort by it. */
  b: string;
}

/** A reader's buckets by start. */
const timeBucketIndexes: IndexDefinition[] = [{ key: { r: 1, b: -1 } }];

/** What time and size buckets do alike to the entries they hold, by reader (`r`) and activity. */
const bucketEntryOperations = {
  /** updateMany: an activity out of the buckets of the listed readers. */
  removal(readers: readonly FeedId[], activityId: string): UpdateOperation {
    return { filter: { r: { $in: readers }, 'entries.id': activityId }, update: { $pull: { entries: { id: activityId } } } };
  },

  /** updateMany: a new version of the entry's activity in the buckets of the listed readers holding it. */
  replacement: (readers: readonly FeedId[], entry: EntryDocument): UpdateOperation => entryReplacement({ r: { $in: readers } }, entry),

  unfollowed(reader: FeedId, feed: FeedId): UpdateOperation {
    return { filter: { r: reader }, update: { $pull: { entries: { 'a.feed': feed, 'a.to': { $ne: reader } } } } };
  },

  /** updateMany: an erased feed's entries out of every reader's buckets (addressed ones too). */
  erased(feed: FeedId): UpdateOperation {
    return { filter: { 'entries.a.feed': feed }, update: { $pull: { entries: { 'a.feed': feed } } } };
  },

  /** deleteMany filter: an erased feed's own buckets, as a reader. */
  erasedReader: (feed: FeedId) => ({ r: feed }),
};

/**
 * Seed 002's time buckets: `{ _id: reader|start, r, b: start, entries }`, one document per
 * reader per span, entries oldest first, appended by upsert. A repeated delivery matches
 * nothing (the entry is there) and its upsert fails on the unique `_id`: nothing changes.
 */
export const timeBucketDocuments = {
  collection: 'timeline_time_buckets',
  indexes: timeBucketIndexes,

  append(reader: FeedId, entry: EntryDocument, spanMs: number): UpdateOperation {
    const start = bucketStart(entry.k, spanMs);
    return {
      filter: { _id: `${reader}|${start}`, 'entries.id': { $ne: entry.id } },
      update: { $push: { entries: { $each: [entry], $sort: { k: 1 } } }, $set: { r: reader, b: start } },
      options: { upsert: true },
    };
  },

  all(reader: FeedId): FindOperation {
    return { filter: { r: reader }, sort: { b: 1 }, limit: 100_000 };
  },

  oldest(reader: FeedId): FindOperation {
    return { filter: { r: reader }, sort: { b: 1 }, limit: 1 };
  },

  /** The buckets at or before the one holding `before`, newest first. */
  newest(reader: FeedId, before: SortKey | string | undefined, limit: number): FindOperation {
    const filter: Record<string, unknown> = { r: reader };
    if (before !== undefined) filter['b'] = before.includes('|') ? { $lte: before.slice(0, before.indexOf('|')) } : { $lt: before };
    return { filter, sort: { b: -1 }, limit };
  },

  /** find: which of these readers' buckets already hold the activity. */
  holdingAmong(readers: readonly FeedId[], activityId: string): FindOperation {
    return { filter: { r: { $in: readers }, 'entries.id': activityId }, sort: { r: 1 }, limit: 100_000 };
  },

  /** updateOne: entries are oldest first, so `$pop: -1` drops the oldest. */
  dropOldestEntry(bucketId: string): UpdateOperation {
    return { filter: { _id: bucketId }, update: { $pop: { entries: -1 } } };
  },
  ...bucketEntryOperations,
};

/** A reader's bucket of at most N entries, in arrival order. */
export interface SizeBucketDocument extends BucketDocument {
  /** The bucket's place in the reader's sequence. */
  s: number;
  /** How many entries it has taken: the guard that closes it at N. */
  n: number;
}

/** A reader's buckets in sequence, and those holding an activity. */
const sizeBucketIndexes: IndexDefinition[] = [{ key: { r: 1, s: 1 } }, { key: { r: 1, 'entries.id': 1 } }];

/**
 * Seed 002's size buckets: `{ _id: reader|seq, r, s: seq, n, entries }` with at most N
 * entries each. The append is guarded by `n < N`; when the bucket is full the upsert of the
 * same `_id` fails on the unique key, which sends the writer to the next seq.
 */
export const sizeBucketDocuments = {
  collection: 'timeline_size_buckets',
  indexes: sizeBucketIndexes,

  /** Buckets of at most half the cap, so that dropping the oldest never empties a timeline. */
  effectiveSize(policy: { cap: number; bucketSize?: number }): number {
    return Math.max(1, Math.min(policy.bucketSize ?? 100, Math.floor(policy.cap / 2)));
  },

  append(reader: FeedId, seq: number, entry: EntryDocument, size: number): UpdateOperation {
    return {
      filter: { _id: `${reader}|${seq}`, n: { $lt: size } },
      update: { $push: { entries: entry }, $inc: { n: 1 }, $set: { r: reader, s: seq } },
      options: { upsert: true },
    };
  },

  /** findOneAndUpdate on meta, after: the current bucket and the entry total. */
  advance(reader: FeedId, seq: number): UpdateOperation {
    return { filter: { _id: reader }, update: { $max: { s: seq }, $inc: { total: 1 } }, options: { upsert: true, returnDocument: 'after' } };
  },

  holding(reader: FeedId, activityId: string): Record<string, unknown> {
    return { r: reader, 'entries.id': activityId };
  },

  holdingAmong(readers: readonly FeedId[], activityId: string): FindOperation {
    return { filter: { r: { $in: readers }, 'entries.id': activityId }, sort: { r: 1 }, limit: 100_000 };
  },

  oldest(reader: FeedId): FindOperation {
    return { filter: { r: reader }, sort: { s: 1 }, limit: 1 };
  },

  all(reader: FeedId): FindOperation {
    return { filter: { r: reader }, sort: { s: 1 }, limit: 100_000 };
  },
  ...bucketEntryOperations,
};

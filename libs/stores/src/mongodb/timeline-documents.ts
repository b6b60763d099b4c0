import { sortKeyOf, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';

/**
 * The MongoDB documents of the timeline models, built by pure functions: every filter,
 * update and option is plain data, so that its meaning can be checked without a server
 * (with mingo, in the unit tests) and the adapter only hands it to the driver.
 */

/** One timeline entry as stored: the sort key, the activity id, and the activity embedded. */
export interface EntryDocument {
  k: SortKey;
  id: string;
  a: Activity;
}

export function entryOf(activity: Activity): EntryDocument {
  return { k: sortKeyOf(activity), id: activity.id, a: activity };
}

export interface UpdateOperation {
  filter: Record<string, unknown>;
  update: Record<string, unknown>;
  options?: { upsert?: boolean; returnDocument?: 'before' | 'after' };
}

export interface FindOperation {
  filter: Record<string, unknown>;
  sort: Record<string, 1 | -1>;
  limit: number;
}

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

  /** MongoDB deletes a cache once its `expiresAt` has passed. */
  indexes: [{ key: { expiresAt: 1 }, options: { expireAfterSeconds: 0 } }],

  /** updateMany: add an entry to every listed reader's existing cache, once. */
  insert(readers: readonly FeedId[], entry: EntryDocument, cap: number): UpdateOperation {
    return {
      filter: { _id: { $in: readers }, 'entries.id': { $ne: entry.id } },
      update: { $push: { entries: { $each: [entry], $sort: { k: -1 }, $slice: cap } } },
    };
  },

  /** deleteMany filter: the caches of these readers that hold the activity. */
  holding(readers: readonly FeedId[], activityId: string): Record<string, unknown> {
    return { _id: { $in: readers }, 'entries.id': activityId };
  },

  /** deleteMany filter: these readers' caches. */
  of(readers: readonly FeedId[]): Record<string, unknown> {
    return { _id: { $in: readers } };
  },

  /**
   * updateOne with upsert: a cache being built. It takes deliveries at once, so that none
   * is missed while the pull path is read; readers ignore it until it is built.
   */
  startBuild(reader: FeedId, expiresAt: Date): UpdateOperation {
    return { filter: { _id: reader }, update: { $set: { building: true, expiresAt }, $push: { entries: { $each: [] } } }, options: { upsert: true } };
  },

  /**
   * replaceOne, on the condition that the entries are still `current`: the built cache, the
   * pulled entries merged with what was delivered meanwhile, newest `cap` kept.
   */
  finishBuild(reader: FeedId, current: readonly EntryDocument[], pulled: readonly Activity[], cap: number, expiresAt: Date): UpdateOperation {
    const byId = new Map<string, EntryDocument>();
    for (const entry of [...current, ...pulled.map(entryOf)]) byId.set(entry.id, entry);
    const entries = [...byId.values()].sort((a, b) => (a.k < b.k ? 1 : -1)).slice(0, cap);
    return { filter: { _id: reader, entries: current }, update: { _id: reader, entries, expiresAt } };
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
 * Seed 000's capped, segmented feed: an atomic counter per reader and one document per slot,
 * `_id = reader_(n mod cap)`, written by upsert, so the oldest arrival is overwritten and a
 * reader never holds more than `cap` documents. Reads sort by key. Because arrivals are not
 * always in time order, overwriting a slot raises the reader's floor to the overwritten key:
 * the slots are exact above the floor, and the pull path serves what is at or below it.
 */
export const ringDocuments = {
  entries: 'timeline_ring',
  meta: 'timeline_ring_meta',

  indexes: [{ key: { r: 1, k: -1 } }, { key: { r: 1, id: 1 } }, { key: { r: 1, 'a.feed': 1 } }] as Array<{ key: Record<string, 1 | -1> }>,

  /** updateOne with upsert on meta: the reader's ring exists from now on. */
  materialize(reader: FeedId): UpdateOperation {
    return { filter: { _id: reader }, update: { $inc: { n: 0 } }, options: { upsert: true } };
  },

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

  /** updateOne on meta: nothing at or below `key` is known to be stored any more. */
  raiseFloor(reader: FeedId, key: SortKey): UpdateOperation {
    return { filter: { _id: reader }, update: { $max: { floor: key } }, options: { upsert: true } };
  },

  /** find on entries: the reader's stored entries above its floor and below `before`. */
  page(reader: FeedId, floor: SortKey | undefined, before: SortKey | undefined, limit: number): FindOperation {
    const k: Record<string, SortKey> = {};
    if (floor !== undefined) k['$gt'] = floor;
    if (before !== undefined) k['$lt'] = before;
    return { filter: Object.keys(k).length > 0 ? { r: reader, k } : { r: reader }, sort: { k: -1 }, limit };
  },

  /** find filter: whether the reader already holds the activity (a delivery repeated). */
  holding(reader: FeedId, activityId: string): Record<string, unknown> {
    return { r: reader, id: activityId };
  },

  /** deleteMany filter: an activity removed, from every listed reader. */
  removal(readers: readonly FeedId[], activityId: string): Record<string, unknown> {
    return { r: { $in: readers }, id: activityId };
  },

  /** deleteMany filter: an unfollowed feed's entries. */
  unfollowed(reader: FeedId, feed: FeedId): Record<string, unknown> {
    return { r: reader, 'a.feed': feed };
  },
};

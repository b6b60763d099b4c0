import { justAbove, sortKeyOf, type Activity, type DeliverReply, type DeliverRequest, type FeedId, type SortKey, type TimelineDelivery } from '@feedmill/contracts';
import { readTimelinePage, type PullPath, type StoredTimeline, type TimelinePage } from '@feedmill/feed-models';
import type { TimelinePolicy, TimelineStore } from '../ports.js';
import type { TimelineCollections } from './document-collection.js';
import { cacheDocuments, entryOf, ringDocuments, type EntryDocument } from './timeline-documents.js';

const POSITION_ID = 'timeline';
const SWEEP_INTERVAL_MS = 10_000;
const MAX_BUILD_ATTEMPTS = 5;

/**
 * Timelines in MongoDB, each reader's in its group's model: `ring` in segmented slot
 * documents from the first follow, `cache` in one capped document per active reader built
 * at the first read, `pull` nowhere. Every operation is a document from the builders in
 * timeline-documents.ts. Deliveries are at-least-once: the position is stored after the
 * batch, and every operation is idempotent.
 */
export class MongoTimelineStore implements TimelineStore {
  private delivered = 0;
  private lastSweep = 0;

  constructor(
    private readonly db: TimelineCollections,
    private readonly policyOf: (reader: FeedId) => TimelinePolicy,
    private readonly now: () => number = Date.now,
  ) {}

  async position(): Promise<number> {
    const document = await this.db.positions.findOne({ _id: POSITION_ID });
    return typeof document?.['position'] === 'number' ? document['position'] : 0;
  }

  async deliver(request: DeliverRequest): Promise<DeliverReply> {
    const position = await this.position();
    if (request.after !== position) return { applied: false, position };
    for (const delivery of request.deliveries) await this.applyDelivery(delivery);
    await this.db.positions.updateOne({ filter: { _id: POSITION_ID }, update: { $set: { position: request.position } }, options: { upsert: true } });
    await this.sweepExpiredCaches();
    return { applied: true, position: request.position };
  }

  private byModel(readers: readonly FeedId[]): { ring: FeedId[]; cache: FeedId[] } {
    const groups = { ring: [] as FeedId[], cache: [] as FeedId[] };
    for (const reader of readers) {
      const model = this.policyOf(reader).model;
      if (model !== 'pull') groups[model].push(reader);
    }
    return groups;
  }

  private async applyDelivery(delivery: TimelineDelivery): Promise<void> {
    switch (delivery.kind) {
      case 'insert': {
        const { ring, cache } = this.byModel(delivery.readers);
        const entry = entryOf(delivery.activity);
        for (const reader of ring) if (await this.insertIntoRing(reader, entry)) this.delivered++;
        if (cache.length > 0) await this.db.cache.updateMany(cacheDocuments.insert(cache, entry, this.policyOf(cache[0]!).cap));
        return;
      }
      case 'remove': {
        const { ring, cache } = this.byModel(delivery.readers);
        if (ring.length > 0) await this.db.ring.deleteMany(ringDocuments.removal(ring, delivery.id));
        if (cache.length > 0) await this.db.cache.deleteMany(cacheDocuments.holding(cache, delivery.id));
        return;
      }
      case 'follow': {
        const model = this.policyOf(delivery.reader).model;
        if (model === 'cache') await this.db.cache.deleteMany(cacheDocuments.of([delivery.reader]));
        if (model !== 'ring') return;
        await this.db.ringMeta.updateOne(ringDocuments.materialize(delivery.reader));
        const oldest = delivery.recent[delivery.recent.length - 1];
        if (!delivery.exhausted && oldest) await this.db.ringMeta.updateOne(ringDocuments.raiseFloor(delivery.reader, sortKeyOf(oldest)));
        // Oldest first, so that the newest are the latest arrivals and the last overwritten.
        for (const activity of [...delivery.recent].reverse()) await this.insertIntoRing(delivery.reader, entryOf(activity));
        return;
      }
      case 'unfollow': {
        const model = this.policyOf(delivery.reader).model;
        if (model === 'ring') await this.db.ring.deleteMany(ringDocuments.unfollowed(delivery.reader, delivery.target));
        if (model === 'cache') await this.db.cache.deleteMany(cacheDocuments.of([delivery.reader]));
        return;
      }
    }
  }

  /** Seed 000's write: claim the next slot and overwrite it, raising the floor past what it held. */
  private async insertIntoRing(reader: FeedId, entry: EntryDocument): Promise<boolean> {
    const meta = await this.db.ringMeta.findOne({ _id: reader });
    if (!meta) return false; // not materialized: the reader follows nothing yet
    const floor = meta['floor'] as SortKey | undefined;
    if (floor !== undefined && entry.k <= floor) return false;
    if (await this.db.ring.findOne(ringDocuments.holding(reader, entry.id))) return false;
    const counter = await this.db.ringMeta.findOneAndUpdate(ringDocuments.claimSlot(reader));
    const slot = ringDocuments.slotOf(counter!['n'] as number, this.policyOf(reader).cap);
    const previous = await this.db.ring.findOneAndUpdate(ringDocuments.writeSlot(reader, slot, entry));
    if (previous) await this.db.ringMeta.updateOne(ringDocuments.raiseFloor(reader, previous['k'] as SortKey));
    return true;
  }

  async readPage(reader: FeedId, before: SortKey | undefined, limit: number, pull: PullPath): Promise<TimelinePage> {
    const policy = this.policyOf(reader);
    if (policy.model === 'ring') return readTimelinePage(await this.storedRing(reader), before, limit, pull);
    if (policy.model === 'cache') return readTimelinePage(await this.storedCache(reader, policy, pull), before, limit, pull);
    return readTimelinePage(undefined, before, limit, pull);
  }

  private async storedRing(reader: FeedId): Promise<StoredTimeline | undefined> {
    const meta = await this.db.ringMeta.findOne({ _id: reader });
    if (!meta) return undefined;
    const floor = meta['floor'] as SortKey | undefined;
    return {
      pullBelow: floor === undefined ? null : justAbove(floor),
      newestBelow: async (before, limit) => (await this.db.ring.find(ringDocuments.page(reader, floor, before, limit))).map((d) => d['a'] as Activity),
    };
  }

  /** The reader's cache, built from the pull path when there is none. */
  private async storedCache(reader: FeedId, policy: TimelinePolicy, pull: PullPath): Promise<StoredTimeline | undefined> {
    const expiresAt = new Date(this.now() + policy.inactivityMs);
    let document = await this.db.cache.findOne({ _id: reader });
    if (document?.['building']) return undefined; // another read is building it: pull this once
    if (document) {
      await this.db.cache.updateOne(cacheDocuments.touch(reader, expiresAt));
    } else {
      await this.db.cache.updateOne(cacheDocuments.startBuild(reader, expiresAt));
      const pulled = await pull(undefined, policy.cap + 1);
      for (let attempt = 0; attempt < MAX_BUILD_ATTEMPTS; attempt++) {
        const current = ((await this.db.cache.findOne({ _id: reader }))?.['entries'] ?? []) as EntryDocument[];
        if (await this.db.cache.replaceOne(cacheDocuments.finishBuild(reader, current, pulled, policy.cap, expiresAt))) break;
      }
      document = await this.db.cache.findOne({ _id: reader });
      if (!document || document['building']) return undefined;
    }
    const entries = document['entries'] as EntryDocument[];
    const bound = cacheDocuments.pullBelow({ entries }, policy.cap);
    return {
      pullBelow: bound ?? null,
      newestBelow: (before, limit) => entries.filter((e) => before === undefined || e.k < before).slice(0, limit).map((e) => e.a),
    };
  }

  private async sweepExpiredCaches(): Promise<void> {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    await this.db.cache.deleteMany(cacheDocuments.expired(new Date(now)));
  }

  async size(reader: FeedId): Promise<number> {
    const model = this.policyOf(reader).model;
    if (model === 'ring') return (await this.storedRingEntries(reader)).length;
    if (model === 'cache') return (((await this.db.cache.findOne({ _id: reader }))?.['entries'] as unknown[] | undefined) ?? []).length;
    return 0;
  }

  private async storedRingEntries(reader: FeedId): Promise<Activity[]> {
    const stored = await this.storedRing(reader);
    return stored ? stored.newestBelow(undefined, Number.MAX_SAFE_INTEGER) : [];
  }

  async counters(): Promise<{ timelines: number; entries: number; delivered: number }> {
    const [rings, caches, ringEntries, cacheEntries] = await Promise.all([
      this.db.ringMeta.count({}),
      this.db.cache.count({}),
      this.db.ring.count({}),
      this.db.cache.sumOfArrayLengths('entries'),
    ]);
    return { timelines: rings + caches, entries: ringEntries + cacheEntries, delivered: this.delivered };
  }
}

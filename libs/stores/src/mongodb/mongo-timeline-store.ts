import { randomUUID } from 'node:crypto';
import { isAddressedTo, justAbove, relevanceKeyOf, sortKeyOf, type Activity, type KeyOf, type DeliverReply, type DeliverRequest, type FeedId, type SortKey, type TimelineDelivery, type TimelineModel } from '@feedmill/contracts';
import { readTimelinePage, type HiddenActivities, type NotificationMarks, type PullPath, type StoredTimeline, type TimelinePage } from '@feedmill/feed-models';
import type { TimelineCounters, TimelinePolicy, TimelineStore } from '../ports.js';
import type { TimelineCollections } from './document-collection.js';
import { ringLayout, sizeBucketLayout, timeBucketLayout, type InsertItem, type MaterializedLayout } from './materialized-layouts.js';
import { bucketTotalDocuments, cacheDocuments, embedLimit, entryOf, readerMetaDocuments, type EntryDocument } from './timeline-documents.js';

const POSITION_ID = 'timeline';

/**
 * The position document of one timeline partition: each has its own position, so that
 * fan-out fences each partition's deliveries alone. Partition 0 of a single one keeps the
 * document timelines had before partitions.
 */
export function timelinePositionId(partition: number, partitions: number): string {
  return partitions <= 1 ? POSITION_ID : `${POSITION_ID}-p${partition}`;
}
const SWEEP_INTERVAL_MS = 10_000;
const MAX_BUILD_ATTEMPTS = 5;
/** A cache build not finished after this long was left by a crash: the next read takes it over. */
export const CACHE_BUILD_TIMEOUT_MS = 30_000;

/** The models this store keeps; `hybrid` keeps its edges' sides in memory only. */
export const mongoTimelineModels = ['ring', 'cache', 'pull', 'time-buckets', 'size-buckets'] as const satisfies readonly TimelineModel[];
type MaterializedModel = Exclude<(typeof mongoTimelineModels)[number], 'cache' | 'pull'>;

/**
 * Timelines in MongoDB, each reader's in its group's model: `ring`, `time-buckets` and
 * `size-buckets` from the first follow (their documents in materialized-layouts.ts), `cache`
 * in one capped document per active reader built at the first read, `pull` nowhere. Every
 * operation is a document from the builders in timeline-documents.ts. Deliveries are
 * at-least-once: the position is stored after the batch, and every operation is idempotent.
 */
export class MongoTimelineStore implements TimelineStore {
  private delivered = 0;
  private lastSweep = 0;
  private readonly layouts: Record<MaterializedModel, MaterializedLayout>;

  constructor(
    private readonly db: TimelineCollections,
    private readonly policyOf: (reader: FeedId) => TimelinePolicy,
    private readonly now: () => number = Date.now,
    /** Which position document this store fences deliveries with ({@link timelinePositionId}). @defaultValue 'timeline' */
    private readonly positionId = POSITION_ID,
  ) {
    this.layouts = {
      ring: ringLayout(db.ring, db.meta),
      'time-buckets': timeBucketLayout(db.timeBuckets, db.meta),
      'size-buckets': sizeBucketLayout(db.sizeBuckets, db.meta),
    };
  }

  private layoutOf(reader: FeedId): MaterializedLayout | undefined {
    const model = this.policyOf(reader).model;
    if (model === 'hybrid') throw new Error('MongoDB timelines do not keep the hybrid model');
    return model === 'cache' || model === 'pull' ? undefined : this.layouts[model];
  }

  async position(): Promise<number> {
    const document = await this.db.positions.findOne({ _id: this.positionId });
    return document?.position ?? 0;
  }

  /** A batch is applied over many round trips, each visible at once: its end is marked before it starts. */
  async pullPosition(): Promise<number> {
    const document = await this.db.positions.findOne({ _id: this.positionId });
    return Math.max(document?.position ?? 0, document?.applying ?? 0);
  }

  async deliver(request: DeliverRequest): Promise<DeliverReply> {
    const position = await this.position();
    if (request.after !== position) return { applied: false, position };
    await this.db.positions.updateOne({ filter: { _id: this.positionId }, update: { $max: { applying: request.position } }, options: { upsert: true } });
    for (const delivery of request.deliveries) await this.applyDelivery(delivery);
    await this.db.positions.updateOne({ filter: { _id: this.positionId }, update: { $set: { position: request.position } }, options: { upsert: true } });
    await this.sweepExpiredCaches();
    return { applied: true, position: request.position };
  }

  private async applyDelivery(delivery: TimelineDelivery): Promise<void> {
    switch (delivery.kind) {
      case 'insert': {
        const cacheReaders: FeedId[] = [];
        const byModel = new Map<MaterializedModel, InsertItem[]>();
        for (const reader of delivery.readers) {
          const policy = this.policyOf(reader);
          if (policy.model === 'cache') cacheReaders.push(reader);
          else if (policy.model === 'hybrid') throw new Error('MongoDB timelines do not keep the hybrid model');
          else if (policy.model !== 'pull') {
            // An activity addressed to a reader that follows nothing yet starts its timeline, as a first follow does.
            if (isAddressedTo(delivery.activity, reader)) await this.db.meta.updateOne(readerMetaDocuments.materialize(reader));
            const items = byModel.get(policy.model) ?? [];
            items.push({ reader, entry: this.entryFor(delivery.activity, policy), cap: policy.cap, bucketMs: policy.bucketMs, bucketSize: policy.bucketSize });
            byModel.set(policy.model, items);
          }
        }
        // Each model's readers in a fixed number of round trips, however many there are.
        for (const [model, items] of byModel) this.delivered += await this.layouts[model].insertMany(items);
        // One update per timeline group: its readers share a cap and an entry shape.
        for (const { policy, readers } of byGroupPolicy(cacheReaders, this.policyOf)) {
          await this.db.cache.updateMany(cacheDocuments.insert(readers, this.entryFor(delivery.activity, policy), policy.cap));
        }
        return;
      }
      case 'bump': {
        // By time a bump changes the activity's copy, not its place: it is replaced where it
        // is held, as an update is. By relevance the activity moves up: every follower's
        // cache is built again at its next read (it now belongs near the top), and a stored
        // timeline moves the entry.
        const byRelevance = delivery.readers.filter((r) => this.policyOf(r).relevancy);
        await this.replaceHeld(
          delivery.readers.filter((r) => !this.policyOf(r).relevancy),
          delivery.activity,
        );
        const caches = byRelevance.filter((r) => this.policyOf(r).model === 'cache');
        if (caches.length > 0) await this.db.cache.deleteMany(cacheDocuments.of(caches));
        for (const reader of byRelevance) {
          const layout = this.layoutOf(reader);
          if (!layout) continue;
          await layout.remove([reader], delivery.activity.id);
          await this.insertMaterialized(reader, this.entryFor(delivery.activity, this.policyOf(reader)));
        }
        return;
      }
      case 'update':
        await this.replaceHeld(delivery.readers, delivery.activity);
        return;
      case 'remove': {
        const cacheReaders = delivery.readers.filter((r) => this.policyOf(r).model === 'cache');
        if (cacheReaders.length > 0) await this.db.cache.deleteMany(cacheDocuments.holding(cacheReaders, delivery.id));
        for (const [model, layout] of Object.entries(this.layouts)) {
          const readers = delivery.readers.filter((r) => this.policyOf(r).model === model);
          if (readers.length > 0) await layout.remove(readers, delivery.id);
        }
        return;
      }
      case 'follow': {
        const model = this.policyOf(delivery.reader).model;
        if (model === 'cache') await this.db.cache.deleteMany(cacheDocuments.of([delivery.reader]));
        if (model === 'cache' || model === 'pull') return;
        // A bounded follow decides anew what of the feed the timeline shows: entries kept from an earlier follow go first.
        if (delivery.since !== undefined) await this.layoutOf(delivery.reader)?.removeFeed(delivery.reader, delivery.target);
        await this.db.meta.updateOne(readerMetaDocuments.materialize(delivery.reader));
        const oldest = delivery.recent[delivery.recent.length - 1];
        if (!delivery.exhausted && oldest) await this.db.meta.updateOne(readerMetaDocuments.raiseFloor(delivery.reader, keyOf(this.policyOf(delivery.reader))(oldest)));
        // Oldest first, so that the newest are the latest arrivals and the last to be dropped.
        const policy = this.policyOf(delivery.reader);
        for (const activity of [...delivery.recent].reverse()) await this.insertMaterialized(delivery.reader, this.entryFor(activity, policy));
        return;
      }
      case 'unfollow': {
        const model = this.policyOf(delivery.reader).model;
        if (model === 'cache') await this.db.cache.deleteMany(cacheDocuments.of([delivery.reader]));
        // With its history kept, what the feed delivered stays; fan-out delivers it nothing new.
        if (!delivery.keepHistory) await this.layoutOf(delivery.reader)?.removeFeed(delivery.reader, delivery.target);
        return;
      }
      case 'mark':
        // Notification groups are refused at start on MongoDB: a mark in the log from another
        // configuration has no group to mark here.
        return;
      case 'hide':
      case 'show':
        // Hiding is refused on MongoDB timelines (see keepsHidden): a hiding in the log from
        // a memory deployment has nowhere to be kept here.
        return;
      case 'erase': {
        const feed = delivery.reader;
        await this.db.cache.deleteMany(cacheDocuments.erased(feed));
        for (const layout of Object.values(this.layouts)) await layout.eraseFeed(feed);
        await this.db.meta.deleteMany(bucketTotalDocuments.erased(feed));
        return;
      }
    }
  }

  /** MongoDB timelines keep no hidden activities: the timeline service refuses to hide on them. */
  readonly keepsHidden = false;

  async hiddenOf(): Promise<HiddenActivities | undefined> {
    return undefined;
  }

  /** MongoDB timelines keep no seen or read marks (notification groups are refused at start). */
  async notificationMarks(): Promise<NotificationMarks | undefined> {
    return undefined;
  }

  /**
   * Puts a new version of an activity in place of the one each reader holds under the same
   * key, keeping its place: in the entries of every materialized model and in built caches.
   * A cache being built is dropped instead (its pull may predate the change; the next read
   * builds it again). Readers whose entries take the same shape share one write.
   */
  private async replaceHeld(readers: readonly FeedId[], activity: Activity): Promise<void> {
    const caches: FeedId[] = [];
    const groups = new Map<string, { entry: EntryDocument; readers: FeedId[]; layout: MaterializedLayout | undefined }>();
    for (const reader of readers) {
      const policy = this.policyOf(reader);
      if (policy.model === 'pull') continue;
      if (policy.model === 'cache') caches.push(reader);
      // The entry a reader stores depends on its model (through its embed limit) and its order.
      const shape = `${policy.model}|${embedLimit(policy)}|${policy.relevancy === true}`;
      const group = groups.get(shape);
      if (group) group.readers.push(reader);
      else groups.set(shape, { entry: this.entryFor(activity, policy), readers: [reader], layout: this.layoutOf(reader) });
    }
    if (caches.length > 0) await this.db.cache.deleteMany(cacheDocuments.building(caches));
    for (const { entry, readers: holders, layout } of groups.values()) {
      if (layout) await layout.replace(holders, entry);
      else await this.db.cache.updateMany(cacheDocuments.replacement(holders, entry));
    }
  }

  private entryFor(activity: Activity, policy: TimelinePolicy): EntryDocument {
    return entryOf(activity, embedLimit(policy), keyOf(policy));
  }

  /** Stores an entry for a materialized reader above its floor; false when skipped. */
  private async insertMaterialized(reader: FeedId, entry: EntryDocument): Promise<boolean> {
    const meta = await this.db.meta.findOne({ _id: reader });
    if (!meta) return false; // not materialized: the reader follows nothing yet
    const floor = meta.floor;
    if (floor !== undefined && entry.k <= floor) return false;
    return this.layoutOf(reader)!.insert(reader, entry, this.policyOf(reader), meta);
  }

  async readPage(reader: FeedId, before: SortKey | undefined, limit: number, pull: PullPath): Promise<TimelinePage> {
    const policy = this.policyOf(reader);
    if (policy.model === 'cache') return readTimelinePage(await this.storedCache(reader, policy, pull), before, limit, pull, keyOf(policy));
    const layout = this.layoutOf(reader);
    return readTimelinePage(layout && (await this.storedMaterialized(reader, layout)), before, limit, pull, keyOf(policy));
  }

  private async storedMaterialized(reader: FeedId, layout: MaterializedLayout): Promise<StoredTimeline | undefined> {
    const meta = await this.db.meta.findOne({ _id: reader });
    if (!meta) return undefined;
    const floor = meta.floor;
    return {
      pullBelow: floor === undefined ? null : justAbove(floor),
      newestBelow: (before, limit) => layout.newestBelow(reader, floor, before, limit),
    };
  }

  /**
   * The reader's cache, built from the pull path when there is none. While another read
   * builds it, this one pulls; a build left unfinished past its timeout is taken over.
   */
  private async storedCache(reader: FeedId, policy: TimelinePolicy, pull: PullPath): Promise<StoredTimeline | undefined> {
    const now = this.now();
    const expiresAt = new Date(now + policy.inactivityMs);
    let document = await this.db.cache.findOne({ _id: reader });
    if (document && document.building === undefined) {
      await this.db.cache.updateOne(cacheDocuments.touch(reader, expiresAt));
    } else {
      const token = randomUUID();
      if (!document) await this.db.cache.updateOne(cacheDocuments.startBuild(reader, token, new Date(now), expiresAt));
      else if (!(await this.db.cache.findOneAndUpdate(cacheDocuments.takeOverBuild(reader, new Date(now - CACHE_BUILD_TIMEOUT_MS), token, new Date(now))))) return undefined;
      document = await this.finishBuild(reader, token, policy, pull, expiresAt);
      if (!document || document.building !== undefined) return undefined;
    }
    const entries = document.entries;
    const bound = cacheDocuments.pullBelow({ entries }, policy.cap);
    return {
      pullBelow: bound ?? null,
      newestBelow: (before, limit) => entries.filter((e) => before === undefined || e.k < before).slice(0, limit).map((e) => e.a),
    };
  }

  /**
   * Merges the pulled entries into the cache under construction, unless the build stopped
   * being this one's (a change deleted it, or another reader took it over): then nothing.
   */
  private async finishBuild(reader: FeedId, token: string, policy: TimelinePolicy, pull: PullPath, expiresAt: Date) {
    const pulled = await pull(undefined, policy.cap + 1);
    for (let attempt = 0; attempt < MAX_BUILD_ATTEMPTS; attempt++) {
      const building = await this.db.cache.findOne({ _id: reader });
      if (building?.building !== token) return null;
      const current = building.entries;
      if (await this.db.cache.replaceOne(cacheDocuments.finishBuild(reader, token, current, pulled, policy.cap, expiresAt, embedLimit(policy), keyOf(policy)))) break;
    }
    return this.db.cache.findOne({ _id: reader });
  }

  private async sweepExpiredCaches(): Promise<void> {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    await this.db.cache.deleteMany(cacheDocuments.expired(new Date(now)));
  }

  async size(reader: FeedId): Promise<number> {
    const policy = this.policyOf(reader);
    if (policy.model === 'cache') return ((await this.db.cache.findOne({ _id: reader }))?.entries ?? []).length;
    const layout = this.layoutOf(reader);
    const stored = layout && (await this.storedMaterialized(reader, layout));
    return stored ? (await stored.newestBelow(undefined, Number.MAX_SAFE_INTEGER)).length : 0;
  }

  async counters(): Promise<TimelineCounters> {
    const [materialized, caches, cacheEntries, ...layoutEntries] = await Promise.all([
      this.db.meta.count({}),
      this.db.cache.count({}),
      this.db.cache.sumOfArrayLengths('entries'),
      ...Object.values(this.layouts).map((layout) => layout.entryCount()),
    ]);
    // Entries written by follows' backfills and cache builds are not counted here.
    return { timelines: materialized + caches, entries: cacheEntries + layoutEntries.reduce((a, b) => a + b, 0), delivered: this.delivered, entriesWritten: this.delivered };
  }
}

/** Readers grouped by the policy fields that shape a cache entry and its cap. */
function byGroupPolicy(readers: readonly FeedId[], policyOf: (reader: FeedId) => TimelinePolicy): Array<{ policy: TimelinePolicy; readers: FeedId[] }> {
  const groups = new Map<string, { policy: TimelinePolicy; readers: FeedId[] }>();
  for (const reader of readers) {
    const policy = policyOf(reader);
    const key = `${policy.cap}|${policy.embed !== false}|${policy.relevancy === true}`;
    const group = groups.get(key);
    if (group) group.readers.push(reader);
    else groups.set(key, { policy, readers: [reader] });
  }
  return [...groups.values()];
}

/** A reader's order: by relevance when its group says so, else by time. */
function keyOf(policy: TimelinePolicy): KeyOf {
  return policy.relevancy ? relevanceKeyOf : sortKeyOf;
}

import { referenceTo, relevanceKeyOf, sortKeyOf, type Activity, type KeyOf, type DeliverReply, type DeliverRequest, type FeedId, type SortKey, type TimelineDelivery, type TimelineItem } from '@feedmill/contracts';
import { CappedCache, readTimelinePage, storedCache, type PullPath, type TimelinePage } from '@feedmill/feed-models';
import type { TimelinePolicy, TimelineStore } from '../ports.js';

interface Materialized {
  cache: CappedCache;
  /** For the `cache` model: when the reader last read, and the build in progress. */
  lastReadAt: number;
  building?: Promise<void>;
  /**
   * Changes delivered while a build pulls, applied once the pulled entries are in: the pull
   * may have read the feeds before them, and must not undo a removal or an unfollow.
   */
  held?: Array<(cache: CappedCache) => void>;
}

/** How often idle `cache` timelines are looked for. */
const SWEEP_INTERVAL_MS = 10_000;

/**
 * Readers' timelines in memory, each stored as its group's model says:
 * - `ring`: a capped cache from the reader's first follow on, kept by fan-out.
 * - `cache`: a capped cache built from the pull path at the reader's first read, kept by
 *   fan-out while it exists, dropped after a period without reads.
 * - `pull`: nothing; every read comes from the pull path.
 * - `time-buckets`, `size-buckets`: as `ring` (their difference is in MongoDB's documents).
 *
 * Deliveries come from fan-out in log order; the store keeps the position they cover,
 * refuses a batch that does not start where it stands (after a restart it stands at 0, and
 * fan-out replays), and so applies each batch exactly once.
 */
export class MemoryTimelineStore implements TimelineStore {
  private readonly timelines = new Map<FeedId, Materialized>();
  private applied = 0;
  /** Entries newly written by insert deliveries: fan-out's output, counted for throughput. */
  private delivered = 0;
  private lastSweep = 0;

  /**
   * @param policyOf the model and sizes of a reader's group, from the feed config.
   * @param now the clock for inactivity. @defaultValue Date.now
   */
  constructor(
    private readonly policyOf: (reader: FeedId) => TimelinePolicy,
    private readonly now: () => number = Date.now,
  ) {}

  async position(): Promise<number> {
    return this.applied;
  }

  /** A batch is applied in one turn of the event loop: none is ever half applied. */
  pullPosition(): Promise<number> {
    return this.position();
  }

  async deliver(request: DeliverRequest): Promise<DeliverReply> {
    if (request.after !== this.applied) return { applied: false, position: this.applied };
    for (const delivery of request.deliveries) this.applyDelivery(delivery);
    this.applied = request.position;
    this.sweepIdleCaches();
    return { applied: true, position: this.applied };
  }

  private applyDelivery(delivery: TimelineDelivery): void {
    switch (delivery.kind) {
      case 'insert': {
        // One key and one reference for all readers: a copy per reader would defeat linking.
        const keys = { time: sortKeyOf(delivery.activity), relevance: relevanceKeyOf(delivery.activity) };
        let reference: TimelineItem | undefined;
        for (const reader of delivery.readers) {
          const timeline = this.timelines.get(reader);
          if (!timeline) continue;
          const policy = this.policyOf(reader);
          const item = policy.embed === false ? (reference ??= referenceTo(delivery.activity)) : delivery.activity;
          const key = policy.relevancy ? keys.relevance : keys.time;
          // The hot path: a closure only while a build holds changes back.
          if (timeline.held) timeline.held.push((cache) => this.insertCounted(cache, item, key));
          else this.insertCounted(timeline.cache, item, key);
        }
        return;
      }
      case 'bump':
        for (const reader of delivery.readers) {
          const timeline = this.timelines.get(reader);
          if (!timeline) continue;
          const policy = this.policyOf(reader);
          const item = policy.embed === false ? referenceTo(delivery.activity) : delivery.activity;
          this.change(timeline, (cache) => {
            // By relevance the entry moves up; by time it keeps its place with the new copy.
            const held = cache.remove(delivery.activity.id);
            if (held || policy.relevancy) cache.insert(item, keyOf(policy)(item));
          });
        }
        return;
      case 'remove':
        for (const reader of delivery.readers) {
          const timeline = this.timelines.get(reader);
          if (timeline) this.change(timeline, (cache) => cache.remove(delivery.id));
        }
        return;
      case 'follow': {
        const policy = this.policyOf(delivery.reader);
        if (materializesOnFollow(policy)) {
          this.materialize(delivery.reader, policy).cache.mergeFeed(stored(delivery.recent, policy), delivery.exhausted);
        } else {
          // A cache knows nothing of the new feed's history: the next read builds it again.
          this.timelines.delete(delivery.reader);
        }
        return;
      }
      case 'unfollow': {
        const timeline = this.timelines.get(delivery.reader);
        if (timeline) this.change(timeline, (cache) => cache.removeFeed(delivery.target));
        return;
      }
    }
  }

  private insertCounted(cache: CappedCache, item: TimelineItem, key: SortKey): void {
    if (cache.insert(item, key)) this.delivered++;
  }

  /** Applies a change now, or once the build in progress has merged what it pulled. */
  private change(timeline: Materialized, apply: (cache: CappedCache) => void): void {
    if (timeline.held) timeline.held.push(apply);
    else apply(timeline.cache);
  }

  async readPage(reader: FeedId, before: SortKey | undefined, limit: number, pull: PullPath): Promise<TimelinePage> {
    const policy = this.policyOf(reader);
    if (policy.model === 'cache') await this.buildOnRead(reader, policy, pull);
    const timeline = this.timelines.get(reader);
    return readTimelinePage(timeline && storedCache(timeline.cache), before, limit, pull, keyOf(policy));
  }

  /**
   * Builds a reader's cache from the pull path. The cache exists (and takes deliveries)
   * before the pull starts, so a change delivered meanwhile is not missed: it is held and
   * applied after the pulled entries, which may predate it. Concurrent readers wait for
   * the same build.
   */
  private async buildOnRead(reader: FeedId, policy: TimelinePolicy, pull: PullPath): Promise<void> {
    const existing = this.timelines.get(reader);
    if (existing) {
      existing.lastReadAt = this.now();
      await existing.building;
      return;
    }
    const timeline = this.materialize(reader, policy);
    timeline.held = [];
    timeline.building = (async () => {
      const recent = await pull(undefined, policy.cap + 1);
      timeline.cache.mergeFeed(stored(recent, policy), recent.length <= policy.cap);
      for (const apply of timeline.held!) apply(timeline.cache);
      timeline.held = undefined;
    })();
    try {
      await timeline.building;
    } catch (error) {
      if (this.timelines.get(reader) === timeline) this.timelines.delete(reader);
      throw error;
    } finally {
      timeline.building = undefined;
    }
  }

  private materialize(reader: FeedId, policy: TimelinePolicy): Materialized {
    let timeline = this.timelines.get(reader);
    if (!timeline) this.timelines.set(reader, (timeline = { cache: new CappedCache(policy.cap, keyOf(policy)), lastReadAt: this.now() }));
    return timeline;
  }

  /** Drops `cache` timelines nobody read for their group's inactivity period. */
  private sweepIdleCaches(): void {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    for (const [reader, timeline] of this.timelines) {
      const policy = this.policyOf(reader);
      if (policy.model === 'cache' && !timeline.building && now - timeline.lastReadAt > policy.inactivityMs) this.timelines.delete(reader);
    }
  }

  async size(reader: FeedId): Promise<number> {
    return this.timelines.get(reader)?.cache.size ?? 0;
  }

  async counters(): Promise<{ timelines: number; entries: number; delivered: number }> {
    let entries = 0;
    for (const timeline of this.timelines.values()) entries += timeline.cache.size;
    return { timelines: this.timelines.size, entries, delivered: this.delivered };
  }
}

/** Models whose timeline exists from the first follow on; in memory they share one shape. */
function materializesOnFollow(policy: TimelinePolicy): boolean {
  return policy.model === 'ring' || policy.model === 'time-buckets' || policy.model === 'size-buckets';
}

/** What a reader's group stores of these activities: copies, or references to them. */
function stored(activities: readonly Activity[], policy: TimelinePolicy): readonly TimelineItem[] {
  return policy.embed === false ? activities.map(referenceTo) : activities;
}

/** A reader's order: by relevance when its group says so, else by time. */
function keyOf(policy: TimelinePolicy): KeyOf {
  return policy.relevancy ? relevanceKeyOf : sortKeyOf;
}

import { sortKeyOf, type DeliverReply, type DeliverRequest, type FeedId, type SortKey, type TimelineDelivery } from '@feedmill/contracts';
import { CappedCache, readTimelinePage, type PullPath, type TimelinePage } from '@feedmill/feed-models';
import type { TimelineStore } from '../ports.js';

/**
 * One capped cache per reader. Deliveries come from fan-out in log order; the store keeps
 * the position they cover, refuses a batch that does not start where it stands (after a
 * restart it stands at 0, and fan-out replays), and so applies each batch exactly once.
 */
export class MemoryTimelineStore implements TimelineStore {
  private readonly caches = new Map<FeedId, CappedCache>();
  private applied = 0;
  /** Entries newly written by insert deliveries: fan-out's output, counted for throughput. */
  private delivered = 0;
  private entries = 0;

  /** @param capOf the cap of a reader's group, from the feed config. */
  constructor(private readonly capOf: (reader: FeedId) => number) {}

  async position(): Promise<number> {
    return this.applied;
  }

  async deliver(request: DeliverRequest): Promise<DeliverReply> {
    if (request.after !== this.applied) return { applied: false, position: this.applied };
    for (const delivery of request.deliveries) this.applyDelivery(delivery);
    this.applied = request.position;
    return { applied: true, position: this.applied };
  }

  private applyDelivery(delivery: TimelineDelivery): void {
    switch (delivery.kind) {
      case 'insert': {
        const key = sortKeyOf(delivery.activity);
        for (const reader of delivery.readers) {
          const cache = this.caches.get(reader);
          if (cache) {
            const before = cache.size;
            if (cache.insert(delivery.activity, key)) this.delivered++;
            this.entries += cache.size - before;
          }
        }
        return;
      }
      case 'remove':
        for (const reader of delivery.readers) if (this.caches.get(reader)?.remove(delivery.id)) this.entries--;
        return;
      case 'follow': {
        let cache = this.caches.get(delivery.reader);
        if (!cache) this.caches.set(delivery.reader, (cache = new CappedCache(this.capOf(delivery.reader))));
        const before = cache.size;
        cache.mergeFeed(delivery.recent, delivery.exhausted);
        this.entries += cache.size - before;
        return;
      }
      case 'unfollow':
        this.entries -= this.caches.get(delivery.reader)?.removeFeed(delivery.target) ?? 0;
        return;
    }
  }

  async readPage(reader: FeedId, before: SortKey | undefined, limit: number, pull: PullPath): Promise<TimelinePage> {
    return readTimelinePage(this.caches.get(reader), before, limit, pull);
  }

  async size(reader: FeedId): Promise<number> {
    return this.caches.get(reader)?.size ?? 0;
  }

  async counters(): Promise<{ timelines: number; entries: number; delivered: number }> {
    return { timelines: this.caches.size, entries: this.entries, delivered: this.delivered };
  }
}

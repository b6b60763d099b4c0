import { sortKeyOf, upcastEvent, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import { lowerBound, mergeNewestFirst, type DescendingSource } from '@feedmill/feed-models';
import type { ContentStore } from '../ports.js';
import { MemoryProjection } from './memory-projection.js';

interface Stored {
  key: SortKey;
  activity: Activity;
  /** Log position of the event that added it. */
  position: number;
}
const keyOfStored = (s: Stored) => s.key;

/** Activities by id, by feed (oldest first) and by foreign id, rebuilt from the log at start. */
export class MemoryContentStore extends MemoryProjection implements ContentStore {
  readonly name = 'content';
  protected readonly eventTypes = new Set(['ActivityAdded', 'ActivityRemoved']);
  private readonly byId = new Map<string, Stored>();
  private readonly byFeed = new Map<FeedId, Stored[]>();
  private readonly byForeign = new Map<string, string>();

  protected evolve(recorded: RecordedEvent): void {
    const event = upcastEvent(recorded.type, recorded.data, recorded.metadata['v'] as number | undefined);
    if (event?.type === 'ActivityAdded') {
      const { activity } = event.data;
      const stored = { key: sortKeyOf(activity), activity, position: recorded.position };
      this.byId.set(activity.id, stored);
      let list = this.byFeed.get(activity.feed);
      if (!list) this.byFeed.set(activity.feed, (list = []));
      const last = list[list.length - 1];
      if (!last || last.key < stored.key) list.push(stored);
      else list.splice(lowerBound(list, stored.key, keyOfStored), 0, stored);
      if (activity.foreignId !== undefined) this.byForeign.set(foreignKey(activity.feed, activity.foreignId), activity.id);
    } else if (event?.type === 'ActivityRemoved') {
      const stored = this.byId.get(event.data.id);
      if (!stored) return;
      this.byId.delete(event.data.id);
      const list = this.byFeed.get(stored.activity.feed)!;
      list.splice(lowerBound(list, stored.key, keyOfStored), 1);
      if (stored.activity.foreignId !== undefined) this.byForeign.delete(foreignKey(stored.activity.feed, stored.activity.foreignId));
    }
  }

  async get(ids: readonly string[]): Promise<Activity[]> {
    const out: Activity[] = [];
    for (const id of ids) {
      const stored = this.byId.get(id);
      if (stored) out.push(stored.activity);
    }
    return out;
  }

  async byForeignId(feed: FeedId, foreignId: string): Promise<Activity | undefined> {
    const id = this.byForeign.get(foreignKey(feed, foreignId));
    return id === undefined ? undefined : this.byId.get(id)?.activity;
  }

  async recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number): Promise<Activity[]> {
    const sources: DescendingSource<Stored>[] = [];
    for (const feed of feeds) {
      const items = this.byFeed.get(feed);
      if (!items || items.length === 0) continue;
      const end = before === undefined ? items.length : lowerBound(items, before, keyOfStored);
      if (end > 0) sources.push({ items, next: end - 1 });
    }
    const addedBy = atMost === undefined ? undefined : (s: Stored) => s.position <= atMost;
    return mergeNewestFirst(sources, keyOfStored, limit, addedBy).map((s) => s.activity);
  }
}

function foreignKey(feed: FeedId, foreignId: string): string {
  return `${feed}\n${foreignId}`;
}

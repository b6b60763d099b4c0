import { relevanceKeyOf, sortKeyOf, type Activity, type FeedEvent, type FeedId, type SortKey } from '@feedmill/contracts';
import { activityIdOf, activityEventTypes, evolveActivity, isActivityEvent, lowerBound, mergeNewestFirst, type DescendingSource } from '@feedmill/feed-models';
import type { ContentStore } from '../ports.js';
import { MemoryProjection } from './memory-projection.js';

interface Stored {
  key: SortKey;
  /** The relevance key: the key raised to the last bump. */
  relevance: SortKey;
  activity: Activity;
  /** Log position of the event that added it. */
  position: number;
}
interface ContentSnapshot {
  byId: Map<string, Stored>;
  byFeed: Map<FeedId, Stored[]>;
  byFeedRelevance: Map<FeedId, Stored[]>;
  byForeign: Map<string, string>;
}
const keyOfStored = (s: Stored) => s.key;
const relevanceOfStored = (s: Stored) => s.relevance;

/** Activities by id, by feed (oldest first) and by foreign id, rebuilt from the log at start. */
export class MemoryContentStore extends MemoryProjection implements ContentStore {
  readonly name = 'content';
  protected readonly eventTypes = activityEventTypes;
  // Not readonly: a snapshot restore replaces them whole.
  private byId = new Map<string, Stored>();
  private byFeed = new Map<FeedId, Stored[]>();
  /** The same activities per feed by relevance key: only bumps make it differ from byFeed. */
  private byFeedRelevance = new Map<FeedId, Stored[]>();
  private byForeign = new Map<string, string>();

  /**
   * Every index as it is: `node:v8` keeps shared references, so each activity is written
   * once and the indexes point at the same object after a restore, with no sorting to redo.
   */
  protected stateForSnapshot(): ContentSnapshot {
    return { byId: this.byId, byFeed: this.byFeed, byFeedRelevance: this.byFeedRelevance, byForeign: this.byForeign };
  }

  protected restoreState(state: unknown): void {
    ({ byId: this.byId, byFeed: this.byFeed, byFeedRelevance: this.byFeedRelevance, byForeign: this.byForeign } = state as ContentSnapshot);
  }

  /** Indexes the activity as {@link evolveActivity} leaves it. */
  protected evolve(event: FeedEvent, position: number): void {
    if (!isActivityEvent(event)) return;
    const id = activityIdOf(event);
    const stored = this.byId.get(id);
    const activity = evolveActivity(stored?.activity, event);
    if (!stored && activity) this.index({ key: sortKeyOf(activity), relevance: relevanceKeyOf(activity), activity, position });
    else if (stored && !activity) this.unindex(stored);
    else if (stored && activity) this.reindexRelevance(stored, activity);
  }

  private index(stored: Stored): void {
    const { activity } = stored;
    this.byId.set(activity.id, stored);
    insertOrdered(listOf(this.byFeed, activity.feed), stored, keyOfStored);
    insertOrdered(listOf(this.byFeedRelevance, activity.feed), stored, relevanceOfStored);
    if (activity.foreignId !== undefined) this.byForeign.set(foreignKey(activity.feed, activity.foreignId), activity.id);
  }

  private unindex(stored: Stored): void {
    const { activity } = stored;
    this.byId.delete(activity.id);
    removeOrdered(this.byFeed.get(activity.feed)!, stored, keyOfStored);
    removeOrdered(this.byFeedRelevance.get(activity.feed)!, stored, relevanceOfStored);
    if (activity.foreignId !== undefined) this.byForeign.delete(foreignKey(activity.feed, activity.foreignId));
  }

  /** A bump changes the activity and its place by relevance; its place by time stays. */
  private reindexRelevance(stored: Stored, activity: Activity): void {
    const relevance = this.byFeedRelevance.get(activity.feed)!;
    removeOrdered(relevance, stored, relevanceOfStored);
    stored.activity = activity;
    stored.relevance = relevanceKeyOf(activity);
    insertOrdered(relevance, stored, relevanceOfStored);
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

  async recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number, order: 'time' | 'relevance' = 'time'): Promise<Activity[]> {
    const [index, keyOf] = order === 'relevance' ? [this.byFeedRelevance, relevanceOfStored] : [this.byFeed, keyOfStored];
    const sources: DescendingSource<Stored>[] = [];
    for (const feed of feeds) {
      const items = index.get(feed);
      if (!items || items.length === 0) continue;
      const end = before === undefined ? items.length : lowerBound(items, before, keyOf);
      if (end > 0) sources.push({ items, next: end - 1 });
    }
    const addedBy = atMost === undefined ? undefined : (s: Stored) => s.position <= atMost;
    return mergeNewestFirst(sources, keyOf, limit, addedBy).map((s) => s.activity);
  }
}

function foreignKey(feed: FeedId, foreignId: string): string {
  return `${feed}\n${foreignId}`;
}

function listOf(index: Map<FeedId, Stored[]>, feed: FeedId): Stored[] {
  let list = index.get(feed);
  if (!list) index.set(feed, (list = []));
  return list;
}

/** Inserts into an oldest-first list; the usual case, the newest, is a push. */
function insertOrdered(list: Stored[], stored: Stored, keyOf: (s: Stored) => SortKey): void {
  const last = list[list.length - 1];
  if (!last || keyOf(last) < keyOf(stored)) list.push(stored);
  else list.splice(lowerBound(list, keyOf(stored), keyOf), 0, stored);
}

function removeOrdered(list: Stored[], stored: Stored, keyOf: (s: Stored) => SortKey): void {
  list.splice(lowerBound(list, keyOf(stored), keyOf), 1);
}

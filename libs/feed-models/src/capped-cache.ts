import { sortKeyOf, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import { lowerBound } from './newest-first-merge.js';

export interface TimelineEntry {
  key: SortKey;
  activity: Activity;
}

const keyOfEntry = (entry: TimelineEntry) => entry.key;

/**
 * A reader's newest timeline entries, at most `cap` of them (seed 002's capped cache).
 *
 * The cache is exact above its `floor`: every timeline entry with a key greater than the
 * floor is in it, and nothing at or below the floor is. Entries at or below the floor are
 * served by the pull path (the followed feeds' own activities). A null floor means the
 * cache holds the whole timeline.
 */
export class CappedCache {
  /** Oldest first, so that the usual insert (the newest post) is a push. */
  private readonly entries: TimelineEntry[] = [];
  private readonly keys = new Map<string, SortKey>();
  private floorKey: SortKey | null = null;

  constructor(readonly cap: number) {}

  get size(): number {
    return this.entries.length;
  }

  get floor(): SortKey | null {
    return this.floorKey;
  }

  /** Adds an activity unless it is present or belongs below the floor. Returns whether it changed. */
  insert(activity: Activity): boolean {
    if (this.keys.has(activity.id)) return false;
    const key = sortKeyOf(activity);
    if (this.floorKey !== null && key <= this.floorKey) return false;
    const last = this.entries[this.entries.length - 1];
    if (!last || last.key < key) this.entries.push({ key, activity });
    else this.entries.splice(lowerBound(this.entries, key, keyOfEntry), 0, { key, activity });
    this.keys.set(activity.id, key);
    this.trimToCap();
    return true;
  }

  remove(id: string): boolean {
    const key = this.keys.get(id);
    if (key === undefined) return false;
    this.entries.splice(lowerBound(this.entries, key, keyOfEntry), 1);
    this.keys.delete(id);
    return true;
  }

  /** Drops every entry of one feed (an unfollow). The cache stays exact above its floor. */
  removeFeed(feed: FeedId): number {
    let kept = 0;
    for (const entry of this.entries) {
      if (entry.activity.feed === feed) this.keys.delete(entry.activity.id);
      else this.entries[kept++] = entry;
    }
    const removed = this.entries.length - kept;
    this.entries.length = kept;
    return removed;
  }

  /**
   * Merges a newly followed feed's newest activities (newest first). When `exhausted` is
   * false the feed has older activities than these, so the floor rises to the oldest one
   * given: below it the cache no longer knows everything, and the pull path takes over.
   */
  mergeFeed(recent: readonly Activity[], exhausted: boolean): void {
    const oldest = recent[recent.length - 1];
    if (!exhausted && oldest) this.raiseFloor(sortKeyOf(oldest));
    for (const activity of recent) this.insert(activity);
  }

  /** Up to `limit` entries with keys below `before` (all when undefined), newest first. */
  newestBelow(before: SortKey | undefined, limit: number): Activity[] {
    let index = (before === undefined ? this.entries.length : lowerBound(this.entries, before, keyOfEntry)) - 1;
    const out: Activity[] = [];
    while (index >= 0 && out.length < limit) out.push(this.entries[index--]!.activity);
    return out;
  }

  private raiseFloor(key: SortKey): void {
    if (this.floorKey !== null && key <= this.floorKey) return;
    this.floorKey = key;
    const firstNotBelow = lowerBound(this.entries, key, keyOfEntry);
    const cut = firstNotBelow + (this.entries[firstNotBelow]?.key === key ? 1 : 0);
    for (const entry of this.entries.splice(0, cut)) this.keys.delete(entry.activity.id);
  }

  private trimToCap(): void {
    const excess = this.entries.length - this.cap;
    if (excess <= 0) return;
    const dropped = this.entries.splice(0, excess);
    for (const entry of dropped) this.keys.delete(entry.activity.id);
    const newestDropped = dropped[dropped.length - 1]!.key;
    if (this.floorKey === null || newestDropped > this.floorKey) this.floorKey = newestDropped;
  }
}

import { sortKeyOf, type FeedId, type KeyOf, type SortKey, type TimelineItem } from '@feedmill/contracts';

export interface TimelineEntry {
  key: SortKey;
  activity: TimelineItem;
}

/**
 * A reader's newest timeline entries, at most `cap` of them (seed 002's capped cache).
 *
 * The cache is exact above its `floor`: every timeline entry with a key greater than the
 * floor is in it, and nothing at or below the floor is. Entries at or below the floor are
 * served by the pull path (the followed feeds' own activities). A null floor means the
 * cache holds the whole timeline.
 */
export class CappedCache {
  /**
   * Oldest first, so that the usual insert (the newest post) is a push. Entries before
   * `start` were trimmed: dropping the oldest is an index bump, and the array is compacted
   * only once that dead prefix grows as long as the cap.
   */
  private entries: TimelineEntry[] = [];
  private start = 0;
  private readonly keys = new Map<string, SortKey>();
  private floorKey: SortKey | null = null;

  /** @param keyOf the order of this reader's timeline. @defaultValue by time */
  constructor(
    readonly cap: number,
    private readonly keyOf: KeyOf = sortKeyOf,
  ) {}

  get size(): number {
    return this.entries.length - this.start;
  }

  get floor(): SortKey | null {
    return this.floorKey;
  }

  /**
   * Adds an activity unless it is present or belongs below the floor. Returns whether it
   * changed. Pass the key when inserting one activity into many caches.
   */
  insert(activity: TimelineItem, key: SortKey = this.keyOf(activity)): boolean {
    if (this.keys.has(activity.id)) return false;
    if (this.floorKey !== null && key <= this.floorKey) return false;
    const last = this.entries[this.entries.length - 1];
    if (this.size === 0 || last!.key < key) this.entries.push({ key, activity });
    else this.entries.splice(this.indexOf(key), 0, { key, activity });
    this.keys.set(activity.id, key);
    if (this.size > this.cap) this.dropOldest(this.size - this.cap);
    return true;
  }

  remove(id: string): boolean {
    const key = this.keys.get(id);
    if (key === undefined) return false;
    this.entries.splice(this.indexOf(key), 1);
    this.keys.delete(id);
    return true;
  }

  /** Drops every entry of one feed (an unfollow). The cache stays exact above its floor. */
  removeFeed(feed: FeedId): number {
    const before = this.size;
    this.entries = this.entries.slice(this.start).filter((entry) => {
      if (entry.activity.feed !== feed) return true;
      this.keys.delete(entry.activity.id);
      return false;
    });
    this.start = 0;
    return before - this.size;
  }

  /**
   * Merges a newly followed feed's newest activities (newest first). When `exhausted` is
   * false the feed has older activities than these, so the floor rises to the oldest one
   * given: below it the cache no longer knows everything, and the pull path takes over.
   */
  mergeFeed(recent: readonly TimelineItem[], exhausted: boolean): void {
    const oldest = recent[recent.length - 1];
    if (!exhausted && oldest) this.raiseFloor(this.keyOf(oldest));
    for (const activity of recent) this.insert(activity);
  }

  /** Up to `limit` entries with keys below `before` (all when undefined), newest first. */
  newestBelow(before: SortKey | undefined, limit: number): TimelineItem[] {
    let index = (before === undefined ? this.entries.length : this.indexOf(before)) - 1;
    const out: TimelineItem[] = [];
    while (index >= this.start && out.length < limit) out.push(this.entries[index--]!.activity);
    return out;
  }

  /** Index of the first live entry whose key is >= `key`. */
  private indexOf(key: SortKey): number {
    let lo = this.start;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.entries[mid]!.key < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private raiseFloor(key: SortKey): void {
    if (this.floorKey !== null && key <= this.floorKey) return;
    const firstNotBelow = this.indexOf(key);
    const cut = firstNotBelow + (this.entries[firstNotBelow]?.key === key ? 1 : 0);
    if (cut > this.start) this.dropOldest(cut - this.start);
    this.floorKey = key;
  }

  private dropOldest(count: number): void {
    for (let i = this.start; i < this.start + count; i++) this.keys.delete(this.entries[i]!.activity.id);
    this.start += count;
    const newestDropped = this.entries[this.start - 1]!.key;
    if (this.floorKey === null || newestDropped > this.floorKey) this.floorKey = newestDropped;
    if (this.start >= this.cap) {
      this.entries = this.entries.slice(this.start);
      this.start = 0;
    }
  }
}

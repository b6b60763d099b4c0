import { isAddressedTo, justAbove, type FeedId, type SortKey, type TimelineItem } from '@feedmill/contracts';
import { NO_HANDLE, probeOf, type ActivityHandle, type ActivityTable, type TimelineOrder } from './activity-table.js';
import type { StoredTimeline } from './timeline-read.js';

/** Room a new timeline starts with: 16 handles fit the 64 bytes V8 keeps inside the heap object. */
const INITIAL_CAPACITY = 16;
/** What every timeline holds before its first entry: an import makes tens of thousands of empty ones. */
const NO_HANDLES = new Int32Array(0);

/**
 * Entries held by the timelines that share it, kept as each gains or drops one: `/metrics`
 * and the status read it at every scrape and probe, and a walk over every timeline would cost
 * them time in proportion to the readers (millions, for an import). A running count rather
 * than a memo of the walk, because it costs the hot path one integer add where an entry is
 * placed or dropped, and is exact at every moment (the contract tests read it right after a
 * delivery).
 */
export class EntryCount {
  entries = 0;
}

/**
 * A reader's newest timeline entries, at most `cap` of them (seed 002's capped cache), as
 * handles into an {@link ActivityTable} in one typed array: an entry costs four bytes, and a
 * delivery is an integer write.
 *
 * The timeline is exact above its `floor`: every timeline entry with a key greater than the
 * floor is in it, and nothing at or below the floor is. Entries at or below the floor are
 * served by the pull path (the followed feeds' own activities). No floor means the
 * timeline holds the whole of it. The floor is a handle too, held like an entry.
 *
 * It holds at most one version of an activity. Whether it holds one is a binary search for
 * each live version's key (usually one), so membership costs no map per reader; and the
 * timeline keeps its newest and floor keys' milliseconds, so that the usual delivery (a
 * post newer than everything held) is decided from the timeline object alone.
 *
 * A caller holds the handles it passes in for the length of the call: a trim or a
 * replacement may give up the timeline's own hold on a handle the call still uses.
 */
export class CompactTimeline implements StoredTimeline {
  /**
   * Oldest first, live between `start` and `end`, so that the usual insert (the newest post)
   * is an append. Trimming the oldest moves `start`; the array is compacted only when its
   * end is reached, and never grows past the cap and a slack of an eighth of it, so that a
   * full timeline compacts once per that many inserts.
   */
  private handles: Int32Array = NO_HANDLES;
  private start = 0;
  private end = 0;
  private floorHandle: ActivityHandle = NO_HANDLE;
  /** Milliseconds of the newest entry's key and of the floor's (-Infinity when none). */
  private newestMs = -Infinity;
  private floorMs = -Infinity;
  private readonly maxCapacity: number;

  /**
   * @param order the order of this reader's timeline. @defaultValue 'time'
   * @param count the running count this timeline adds its entries to. @defaultValue one of its own
   */
  constructor(
    readonly cap: number,
    private readonly table: ActivityTable,
    readonly order: TimelineOrder = 'time',
    private readonly count: EntryCount = new EntryCount(),
  ) {
    this.maxCapacity = cap + Math.max(8, cap >> 3);
  }

  get size(): number {
    return this.end - this.start;
  }

  /** The key of the newest entry dropped (or raised to), or null when nothing was. */
  get floor(): SortKey | null {
    return this.floorHandle === NO_HANDLE ? null : this.table.keyOf(this.floorHandle, this.order);
  }

  get pullBelow(): SortKey | null {
    const floor = this.floor;
    return floor === null ? null : justAbove(floor);
  }

  /**
   * Adds an activity version unless it belongs at or below the floor. When the timeline
   * holds another version of the activity, the new one takes its place (by relevance, the
   * place of its key). Returns whether the timeline gained an entry.
   */
  insert(handle: ActivityHandle): boolean {
    const held = this.indexOfVersionOf(handle);
    if (held < 0) return this.place(handle);
    this.swap(held, handle);
    return false;
  }

  /** Puts this version in place of the one held, if any. Returns whether one was held. */
  replace(handle: ActivityHandle): boolean {
    const held = this.indexOfVersionOf(handle);
    if (held < 0) return false;
    this.swap(held, handle);
    return true;
  }

  remove(id: string): boolean {
    const version = this.table.firstVersionOf(id);
    const held = version === NO_HANDLE ? -1 : this.indexOfVersionOf(version);
    if (held < 0) return false;
    this.removeAt(held);
    this.refreshNewest();
    return true;
  }

  /**
   * Drops every entry of one feed (an unfollow) but those addressed to `reader`, which it
   * holds whatever it follows (with no reader, an erasure: every entry of the feed). The
   * timeline stays exact above its floor.
   */
  removeFeed(feed: FeedId, reader: FeedId | undefined): number {
    return this.removeWhere((handle) => {
      const item = this.table.itemOf(handle);
      return item.feed === feed && (reader === undefined || !isAddressedTo(item, reader));
    });
  }

  /**
   * Drops the entries whose handles are marked (`marked[handle] === 1`): an erasure marks its
   * feed's versions in the table once, and each timeline then looks at an integer per entry.
   */
  removeMarked(marked: Uint8Array): number {
    return this.removeWhere((handle) => marked[handle] === 1);
  }

  private removeWhere(drops: (handle: ActivityHandle) => boolean): number {
    let kept = this.start;
    for (let index = this.start; index < this.end; index++) {
      const handle = this.handles[index]!;
      if (drops(handle)) this.table.release(handle);
      else this.handles[kept++] = handle;
    }
    const removed = this.end - kept;
    if (removed === 0) return 0;
    this.count.entries -= removed;
    this.end = kept;
    this.refreshNewest();
    return removed;
  }

  /**
   * Merges a newly followed feed's newest activities (newest first). When `exhausted` is
   * false the feed has older activities than these, so the floor rises to the oldest one
   * given: below it the timeline no longer knows everything, and the pull path takes over.
   * Returns the number of entries gained.
   */
  mergeFeed(recent: readonly ActivityHandle[], exhausted: boolean): number {
    // Most follows of an import bring nothing; and `recent[-1]` would be a slow lookup of a named property.
    if (recent.length === 0) return 0;
    if (!exhausted) this.raiseFloor(recent[recent.length - 1]!);
    let gained = 0;
    for (const handle of recent) if (this.insert(handle)) gained++;
    return gained;
  }

  /** Up to `limit` entries with keys below `before` (all when undefined), newest first. */
  newestBelow(before: SortKey | undefined, limit: number): TimelineItem[] {
    let index = (before === undefined ? this.end : this.lowerBoundOfKey(before)) - 1;
    const out: TimelineItem[] = [];
    while (index >= this.start && out.length < limit) out.push(this.table.itemOf(this.handles[index--]!));
    return out;
  }

  /** The entries' handles, oldest first (a view: copy it before the timeline changes). */
  get entryHandles(): Int32Array {
    return this.handles.subarray(this.start, this.end);
  }

  /** The floor's handle, or {@link NO_HANDLE}. */
  get floorEntry(): ActivityHandle {
    return this.floorHandle;
  }

  /**
   * Keeps the floor's key without its content, once an erasure took its activity: a
   * reference (id, feed, times) takes its place, so that the timeline stays exact above the
   * same key and no snapshot writes the erased content.
   */
  keepFloorAsReference(): void {
    const floor = this.floorHandle;
    if (floor === NO_HANDLE) return;
    const reference = this.table.referenceOf(floor);
    if (reference === floor) return;
    this.table.hold(reference);
    this.table.release(floor);
    this.setFloor(reference);
  }

  /**
   * Fills an empty timeline with the entries and floor a snapshot kept of it ({@link
   * entryHandles}, {@link floorEntry}), in a table restored with their holds
   * ({@link ActivityTable.restore}). Throws for more entries than the cap.
   */
  restore(handles: Int32Array, floor: ActivityHandle): void {
    if (this.end !== this.start || this.floorHandle !== NO_HANDLE) throw new Error('a snapshot restores only an empty timeline');
    if (handles.length > this.cap) throw new Error(`${handles.length} entries in a timeline capped at ${this.cap}`);
    this.handles = new Int32Array(Math.min(this.maxCapacity, Math.max(INITIAL_CAPACITY, handles.length + (handles.length >> 3))));
    this.handles.set(handles);
    this.start = 0;
    this.end = handles.length;
    this.count.entries += handles.length;
    if (floor !== NO_HANDLE) this.setFloor(floor);
    this.refreshNewest();
  }

  /** Gives up every hold, leaving the timeline empty, as a discarded one must. */
  clear(): void {
    this.count.entries -= this.size;
    for (let index = this.start; index < this.end; index++) this.table.release(this.handles[index]!);
    if (this.floorHandle !== NO_HANDLE) this.table.release(this.floorHandle);
    this.floorHandle = NO_HANDLE;
    this.handles = NO_HANDLES;
    this.start = this.end = 0;
    this.newestMs = this.floorMs = -Infinity;
  }

  /** Where the timeline holds a version of this handle's activity (any version), or -1. */
  private indexOfVersionOf(handle: ActivityHandle): number {
    let version = handle;
    do {
      const index = this.indexOfKey(version);
      if (index >= 0) return index;
      version = this.table.nextVersionOf(version);
    } while (version !== handle);
    return -1;
  }

  /** Where an entry with this handle's key is (keys name their activity), or -1. */
  private indexOfKey(handle: ActivityHandle): number {
    if (this.isAboveNewest(handle)) return -1;
    const index = this.lowerBound(handle);
    return index < this.end && this.table.compare(this.handles[index]!, handle, this.order) === 0 ? index : -1;
  }

  private isAboveNewest(handle: ActivityHandle): boolean {
    if (this.end === this.start || this.table.keyMsOf(handle, this.order) > this.newestMs) return true;
    return this.table.compare(this.handles[this.end - 1]!, handle, this.order) < 0;
  }

  private isAtOrBelowFloor(handle: ActivityHandle): boolean {
    if (this.floorHandle === NO_HANDLE || this.table.keyMsOf(handle, this.order) > this.floorMs) return false;
    return this.table.compare(handle, this.floorHandle, this.order) <= 0;
  }

  private refreshNewest(): void {
    this.newestMs = this.end === this.start ? -Infinity : this.table.keyMsOf(this.handles[this.end - 1]!, this.order);
  }

  private setFloor(handle: ActivityHandle): void {
    this.floorHandle = handle;
    this.floorMs = this.table.keyMsOf(handle, this.order);
  }

  private swap(index: number, handle: ActivityHandle): void {
    const held = this.handles[index]!;
    if (held === handle) return;
    if (this.table.compare(held, handle, this.order) === 0) {
      // The same key (by time, always): the new version takes the old one's place.
      this.table.hold(handle);
      this.handles[index] = handle;
      this.table.release(held);
      return;
    }
    // By relevance a new version may move: out of its old place, into the place of its key.
    this.removeAt(index);
    if (!this.place(handle)) this.refreshNewest();
  }

  /** Inserts a version the timeline does not hold, in key order, then trims to the cap. */
  private place(handle: ActivityHandle): boolean {
    if (this.isAtOrBelowFloor(handle)) return false;
    this.makeRoom();
    if (this.isAboveNewest(handle)) {
      this.handles[this.end++] = handle;
      this.newestMs = this.table.keyMsOf(handle, this.order);
    } else {
      const index = this.lowerBound(handle);
      this.handles.copyWithin(index + 1, index, this.end);
      this.handles[index] = handle;
      this.end++;
    }
    this.table.hold(handle);
    this.count.entries++;
    if (this.size > this.cap) this.dropOldest(this.size - this.cap);
    return true;
  }

  private removeAt(index: number): void {
    this.table.release(this.handles[index]!);
    this.count.entries--;
    // Close the gap from the nearer side.
    if (index - this.start < this.end - index - 1) {
      this.handles.copyWithin(this.start + 1, this.start, index);
      this.start++;
    } else {
      this.handles.copyWithin(index, index + 1, this.end);
      this.end--;
    }
  }

  /** Drops the oldest entries; the newest of them becomes the floor, keeping its hold. */
  private dropOldest(count: number): void {
    const newestDropped = this.start + count - 1;
    for (let index = this.start; index < newestDropped; index++) this.table.release(this.handles[index]!);
    if (this.floorHandle !== NO_HANDLE) this.table.release(this.floorHandle);
    this.setFloor(this.handles[newestDropped]!);
    this.start += count;
    this.count.entries -= count;
    if (this.start === this.end) this.refreshNewest();
  }

  private raiseFloor(handle: ActivityHandle): void {
    if (this.isAtOrBelowFloor(handle)) return;
    // The new floor is held before anything is released: it may be one of the entries cut.
    this.table.hold(handle);
    const cut = this.upperBound(handle);
    for (let index = this.start; index < cut; index++) this.table.release(this.handles[index]!);
    this.count.entries -= cut - this.start;
    this.start = cut;
    if (this.floorHandle !== NO_HANDLE) this.table.release(this.floorHandle);
    this.setFloor(handle);
    this.refreshNewest();
  }

  /** Makes room for one more handle at the end: compacts or grows, up to the cap's slack. */
  private makeRoom(): void {
    if (this.end < this.handles.length) return;
    const capacity = this.handles.length;
    // A quarter of the room dead at the front is worth a compaction rather than a larger array.
    if (capacity >= this.maxCapacity || (this.start > 0 && this.start >= capacity >> 2)) {
      this.handles.copyWithin(0, this.start, this.end);
    } else {
      const grown = new Int32Array(Math.min(this.maxCapacity, Math.max(INITIAL_CAPACITY, capacity + (capacity >> 1))));
      grown.set(this.handles.subarray(this.start, this.end));
      this.handles = grown;
    }
    this.end -= this.start;
    this.start = 0;
  }

  /** Index of the first live entry whose key is >= the handle's. */
  private lowerBound(handle: ActivityHandle): number {
    let lo = this.start;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.table.compare(this.handles[mid]!, handle, this.order) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first live entry whose key is > the handle's. */
  private upperBound(handle: ActivityHandle): number {
    let lo = this.start;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.table.compare(this.handles[mid]!, handle, this.order) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first live entry whose key is >= `key`. */
  private lowerBoundOfKey(key: SortKey): number {
    const probe = probeOf(key);
    let lo = this.start;
    let hi = this.end;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.table.compareWithKey(this.handles[mid]!, probe, this.order) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/**
 * Many sorted sets of small integers (one per key, keys numbered from 0) in one shared
 * `Int32Array` pool: 4 bytes per member plus room to grow, and no object per set.
 *
 * Each set is a sorted run of the pool with some room after it. A run that fills up moves
 * to the end of the pool with half again its room, leaving its old slots behind; when the
 * pool is full, it is packed (without the slots left behind) if they are a quarter of it or
 * more, and otherwise grows by half.
 */
export class SortedRuns {
  /** Per key: where its run starts in the pool, how many members it has, how many fit. */
  private starts = new Int32Array(256);
  private counts = new Int32Array(256);
  private rooms = new Int32Array(256);
  private keyCount = 0;
  private pool = new Int32Array(4096);
  /** The end of the pool's used part. */
  private used = 0;
  /** Slots of the used part that no run owns any more. */
  private abandoned = 0;

  /** Members of all sets together. */
  size = 0;

  /** Slots the pool holds (4 bytes each), used or not. */
  get slots(): number {
    return this.pool.length;
  }

  /** Makes room for keys up to `key` (their sets empty); keys come in increasing order. */
  addKey(key: number): void {
    if (key < this.keyCount) return;
    this.keyCount = key + 1;
    if (key >= this.starts.length) {
      const length = Math.max(key + 1, this.starts.length + (this.starts.length >> 1));
      this.starts = grown(this.starts, length);
      this.counts = grown(this.counts, length);
      this.rooms = grown(this.rooms, length);
    }
  }

  countOf(key: number): number {
    return key < this.keyCount ? this.counts[key]! : 0;
  }

  /** The members of `key`'s set, in increasing order, mapped through `map`. */
  map<T>(key: number, map: (member: number) => T): T[] {
    const count = this.countOf(key);
    const start = this.starts[key]!;
    const mapped = new Array<T>(count);
    for (let i = 0; i < count; i++) mapped[i] = map(this.pool[start + i]!);
    return mapped;
  }

  has(key: number, member: number): boolean {
    if (key >= this.keyCount) return false;
    const start = this.starts[key]!;
    const end = start + this.counts[key]!;
    const at = lowerBound(this.pool, start, end, member);
    return at < end && this.pool[at] === member;
  }

  /** Adds `member` to `key`'s set (a key added before); false if it was there already. */
  add(key: number, member: number): boolean {
    let start = this.starts[key]!;
    const count = this.counts[key]!;
    let at = lowerBound(this.pool, start, start + count, member);
    if (at < start + count && this.pool[at] === member) return false;
    if (count === this.rooms[key]) {
      this.move(key, Math.max(2, count + (count >> 1)));
      at += this.starts[key]! - start;
      start = this.starts[key]!;
    }
    this.pool.copyWithin(at + 1, at, start + count);
    this.pool[at] = member;
    this.counts[key] = count + 1;
    this.size++;
    return true;
  }

  /** Removes `member` from `key`'s set; false if it was not there. */
  delete(key: number, member: number): boolean {
    if (key >= this.keyCount) return false;
    const start = this.starts[key]!;
    const end = start + this.counts[key]!;
    const at = lowerBound(this.pool, start, end, member);
    if (at === end || this.pool[at] !== member) return false;
    this.pool.copyWithin(at, at + 1, end);
    this.counts[key] = end - start - 1;
    this.size--;
    return true;
  }

  /** Every set's members, for a snapshot: per key its count, and all members in key order. */
  toState(): SortedRunsState {
    const counts = this.counts.slice(0, this.keyCount);
    const members = new Int32Array(this.size);
    let at = 0;
    for (let key = 0; key < this.keyCount; key++) {
      const start = this.starts[key]!;
      members.set(this.pool.subarray(start, start + counts[key]!), at);
      at += counts[key]!;
    }
    return { counts, members };
  }

  /**
   * Replaces every set with a snapshot's ({@link toState}), each run with no room to spare:
   * a run grows by moving, as any full run does. Throws when a run is not sorted.
   */
  restore({ counts, members }: SortedRunsState): void {
    let total = 0;
    for (const count of counts) total += count;
    if (total !== members.length) throw new Error(`runs of ${total} members in all, ${members.length} given`);
    const starts = new Int32Array(Math.max(256, counts.length));
    let at = 0;
    for (let key = 0; key < counts.length; key++) {
      starts[key] = at;
      for (let i = at + 1; i < at + counts[key]!; i++) if (members[i - 1]! >= members[i]!) throw new Error(`the run of key ${key} is not sorted`);
      at += counts[key]!;
    }
    this.starts = starts;
    this.counts = grown(counts, starts.length);
    this.rooms = grown(counts, starts.length);
    this.keyCount = counts.length;
    this.pool = grown(members, Math.max(4096, members.length + (members.length >> 3)));
    this.used = members.length;
    this.abandoned = 0;
    this.size = members.length;
  }

  /** Moves a run to the end of the pool with `room` slots. */
  private move(key: number, room: number): void {
    if (this.used + room > this.pool.length) {
      const live = this.used - this.abandoned;
      const length = Math.max(this.pool.length, Math.ceil((live + room) * 1.5));
      if (this.abandoned * 4 >= this.used) this.pack(length);
      else this.pool = grown(this.pool, Math.max(length, this.pool.length + (this.pool.length >> 1)));
    }
    const start = this.starts[key]!;
    this.pool.copyWithin(this.used, start, start + this.counts[key]!);
    this.abandoned += this.rooms[key]!;
    this.starts[key] = this.used;
    this.rooms[key] = room;
    this.used += room;
  }

  /** Copies every run, with its room, into a new pool of `length` slots without the abandoned ones. */
  private pack(length: number): void {
    const packed = new Int32Array(length);
    let used = 0;
    for (let key = 0; key < this.keyCount; key++) {
      const start = this.starts[key]!;
      packed.set(this.pool.subarray(start, start + this.counts[key]!), used);
      this.starts[key] = used;
      used += this.rooms[key]!;
    }
    this.pool = packed;
    this.used = used;
    this.abandoned = 0;
  }
}

/** What a snapshot keeps of {@link SortedRuns}: per key its member count, and every member in key order. */
export interface SortedRunsState {
  counts: Int32Array;
  members: Int32Array;
}

/** The first index in [from, to) of sorted `values` whose value is not below `value`. */
function lowerBound(values: Int32Array, from: number, to: number, value: number): number {
  let low = from;
  let high = to;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (values[middle]! < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

function grown(values: Int32Array, length: number): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(length);
  larger.set(values);
  return larger;
}

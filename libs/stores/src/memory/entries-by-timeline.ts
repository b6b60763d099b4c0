/**
 * Timeline entries collected in delivery order and handed back grouped by timeline, each
 * timeline's in the order they were added: a counting sort over two integer arrays, reused
 * from one run to the next, so that grouping allocates nothing per entry.
 *
 * Why group: a large run of posts, applied post by post, touches a different reader's
 * timeline at every entry, and each touch is a cache miss (the map entry, the timeline, its
 * handles, the handle it trims). Applied reader by reader, each timeline is touched once per
 * run and its entries are appended while it is warm.
 */
export class EntriesByTimeline<Timeline> {
  private timelines: Timeline[] = [];
  private slotOfEntry = new Int32Array(4096);
  private handleOfEntry = new Int32Array(4096);
  private entries = 0;

  /** How many entries were added since the last {@link clear}. */
  get size(): number {
    return this.entries;
  }

  /**
   * Adds an entry for the timeline that {@link slot} numbered in this run.
   */
  add(slot: number, handle: number): void {
    if (this.entries === this.slotOfEntry.length) {
      this.slotOfEntry = grown(this.slotOfEntry);
      this.handleOfEntry = grown(this.handleOfEntry);
    }
    this.slotOfEntry[this.entries] = slot;
    this.handleOfEntry[this.entries++] = handle;
  }

  /** Numbers a timeline not seen yet in this run; the caller remembers its number. */
  slot(timeline: Timeline): number {
    this.timelines.push(timeline);
    return this.timelines.length - 1;
  }

  /** Calls `apply` for every entry, timeline by timeline in the order they were first seen, each timeline's entries in the order added. */
  forEach(apply: (timeline: Timeline, handle: number) => void): void {
    const slots = this.timelines.length;
    const starts = new Int32Array(slots + 1);
    for (let entry = 0; entry < this.entries; entry++) starts[this.slotOfEntry[entry]! + 1]!++;
    for (let slot = 0; slot < slots; slot++) starts[slot + 1]! += starts[slot]!;
    const next = starts.slice(0, slots);
    const sorted = new Int32Array(this.entries);
    for (let entry = 0; entry < this.entries; entry++) sorted[next[this.slotOfEntry[entry]!]!++] = this.handleOfEntry[entry]!;
    for (let slot = 0; slot < slots; slot++) {
      const timeline = this.timelines[slot]!;
      for (let entry = starts[slot]!; entry < starts[slot + 1]!; entry++) apply(timeline, sorted[entry]!);
    }
  }

  /** Forgets the run (the arrays are kept for the next). */
  clear(): void {
    this.timelines = [];
    this.entries = 0;
  }
}

function grown(values: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(values.length * 2);
  larger.set(values);
  return larger;
}

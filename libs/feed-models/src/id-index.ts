/** No value: what {@link IdIndex.get} answers for a key it does not hold. */
export const NOT_INDEXED = -1;

const EMPTY = -1;
const INITIAL_SLOTS = 1024;

/**
 * Whole numbers (0 or more) by string key, for indexes of millions of ids: open addressing
 * over two typed arrays (value and key hash per slot), with no key stored, since every
 * value names its key (`keyOf`). Against a `Map` of as many strings it takes a third of the
 * memory, none of it in objects the garbage collector traces, and builds in half the time:
 * what a restore from a snapshot spends most of its time on.
 *
 * Linear probing, at most half full; a deletion shifts the entries after it back, so that
 * no tombstone slows lookups down.
 */
export class IdIndex {
  private values = new Int32Array(INITIAL_SLOTS).fill(EMPTY);
  private hashes = new Int32Array(INITIAL_SLOTS);
  private count = 0;

  /** @param keyOf the key of a value the index holds. */
  constructor(private readonly keyOf: (value: number) => string) {}

  get size(): number {
    return this.count;
  }

  /** The value of `key`, or {@link NOT_INDEXED}. */
  get(key: string): number {
    const hash = hashOf(key);
    const mask = this.values.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const value = this.values[slot]!;
      if (value === EMPTY) return NOT_INDEXED;
      if (this.hashes[slot] === hash && this.keyOf(value) === key) return value;
    }
  }

  /** Sets the value of `key` (a whole number, 0 or more), in place of any it had. */
  set(key: string, value: number): void {
    if (!(value >= 0 && value <= 0x7fffffff && Number.isInteger(value))) throw new RangeError(`an index holds whole numbers from 0 to 2^31 - 1, not ${value}`);
    if ((this.count + 1) * 2 > this.values.length) this.resize(this.values.length * 2);
    const hash = hashOf(key);
    const mask = this.values.length - 1;
    let slot = hash & mask;
    for (; this.values[slot] !== EMPTY; slot = (slot + 1) & mask) {
      if (this.hashes[slot] === hash && this.keyOf(this.values[slot]!) === key) {
        this.values[slot] = value;
        return;
      }
    }
    this.values[slot] = value;
    this.hashes[slot] = hash;
    this.count++;
  }

  /** Removes `key`; false if it was not there. */
  delete(key: string): boolean {
    const hash = hashOf(key);
    const mask = this.values.length - 1;
    let slot = hash & mask;
    for (; ; slot = (slot + 1) & mask) {
      const value = this.values[slot]!;
      if (value === EMPTY) return false;
      if (this.hashes[slot] === hash && this.keyOf(value) === key) break;
    }
    // Shift back every entry after the gap that may move into it: one whose home slot is not
    // between the gap and itself (cyclically).
    let gap = slot;
    for (let next = (gap + 1) & mask; this.values[next] !== EMPTY; next = (next + 1) & mask) {
      const home = this.hashes[next]! & mask;
      if (((next - home) & mask) >= ((next - gap) & mask)) {
        this.values[gap] = this.values[next]!;
        this.hashes[gap] = this.hashes[next]!;
        gap = next;
      }
    }
    this.values[gap] = EMPTY;
    this.count--;
    return true;
  }

  private resize(slots: number): void {
    const values = this.values;
    const hashes = this.hashes;
    this.values = new Int32Array(slots).fill(EMPTY);
    this.hashes = new Int32Array(slots);
    const mask = slots - 1;
    for (let from = 0; from < values.length; from++) {
      const value = values[from]!;
      if (value === EMPTY) continue;
      let slot = hashes[from]! & mask;
      while (this.values[slot] !== EMPTY) slot = (slot + 1) & mask;
      this.values[slot] = value;
      this.hashes[slot] = hashes[from]!;
    }
  }
}

/** FNV-1a over the UTF-16 code units, then mixed so that the low bits, which pick the slot, depend on every unit. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) hash = Math.imul(hash ^ key.charCodeAt(i), 0x01000193);
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  return hash ^ (hash >>> 13);
}

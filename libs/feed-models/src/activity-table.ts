import { IdIndex, NOT_INDEXED } from './id-index.js';
import { sameJson } from './same-json.js';
import { referenceTo, sortKeyOf, relevanceKeyOf, type Activity, type FeedId, type SortKey, type TimelineItem } from '@feedmill/contracts';

/** An activity version's place in an {@link ActivityTable}: a small integer, reused once freed. */
export type ActivityHandle = number;

/** The two orders a timeline can have: by time, or by relevance (raised by bumps). */
export type TimelineOrder = 'time' | 'relevance';

/** No handle: an id with no live version, or an empty floor. */
export const NO_HANDLE = -1;

const INITIAL_CAPACITY = 1024;

/**
 * A sort key split for comparing with a table entry: its time in milliseconds, the time
 * text and what follows the `|` (the id, perhaps with the `\u0000` of `justAbove`).
 */
export interface KeyProbe {
  readonly key: SortKey;
  readonly ms: number;
  readonly time: string;
  readonly rest: string;
}

export function probeOf(key: SortKey): KeyProbe {
  const bar = key.indexOf('|');
  const time = bar < 0 ? key : key.slice(0, bar);
  return { key, ms: Date.parse(time), time, rest: bar < 0 ? '' : key.slice(bar + 1) };
}

/**
 * The timeline items of many timelines, each version of an activity stored once, embedded
 * or as a reference, under an integer handle, with its sort keys precomputed as numbers.
 * Timelines hold handles, and the table counts the holds: a version nobody holds is freed
 * (and its handle reused), so the table never outgrows what the timelines keep.
 *
 * Versions: an activity changes (a bump raises it, an update edits it), and not every
 * timeline receives every change at the same moment, so two versions of one id may be held
 * at once. Each version is its own handle and its own item object, never mutated: a reader
 * sees exactly the version it was given. All live versions of an id form a ring, so a timeline can tell
 * from any one of them which (if any) it holds, without looking the id up.
 *
 * Keys compare as numbers (the time in milliseconds) and, on equal milliseconds, as the
 * key text would. That is exactly the text order of {@link sortKeyOf} and
 * {@link relevanceKeyOf} for canonical ISO times (fixed width, UTC milliseconds), the only
 * times the API accepts (`isoTimeSchema`).
 */
export class ActivityTable {
  private items: Array<TimelineItem | undefined> = [];
  private timeMs = new Float64Array(INITIAL_CAPACITY);
  private relevanceMs = new Float64Array(INITIAL_CAPACITY);
  /** Timeline entries and floors that hold each version. */
  private holds = new Int32Array(INITIAL_CAPACITY);
  /** The next version of the same id in its ring: the handle itself when it is the only one. */
  private nextVersion = new Int32Array(INITIAL_CAPACITY);
  /** One live version of each id, the way into its ring. */
  private readonly versionsById = new IdIndex((handle) => this.items[handle]!.id);
  private readonly freed: ActivityHandle[] = [];

  /** Live versions (held, or interned and not yet dropped). */
  get size(): number {
    return this.items.length - this.freed.length;
  }

  /** One more than the highest handle in use: a bound for arrays indexed by handle. */
  get capacity(): number {
    return this.items.length;
  }

  /** The handle of this version of the activity, embedded: an equal one stored, or a new one. */
  intern(activity: Activity): ActivityHandle {
    const first = this.firstVersionOf(activity.id);
    if (first !== NO_HANDLE) {
      let handle = first;
      do {
        const item = this.items[handle]!;
        if (item === activity || (isEmbedded(item) && sameActivity(item, activity))) return handle;
        handle = this.nextVersion[handle]!;
      } while (handle !== first);
    }
    return this.add(activity);
  }

  /** The handle of a reference to this version of the activity, for timelines that link. */
  internReference(activity: Activity): ActivityHandle {
    const first = this.firstVersionOf(activity.id);
    if (first !== NO_HANDLE) {
      let handle = first;
      do {
        const item = this.items[handle]!;
        if (!isEmbedded(item) && item.feed === activity.feed && item.time === activity.time && item.bumpedAt === activity.bumpedAt) return handle;
        handle = this.nextVersion[handle]!;
      } while (handle !== first);
    }
    return this.add(referenceTo(activity));
  }

  /**
   * The versions some timeline of a snapshot holds (`holds`: per handle, how many entries and
   * floors of those timelines hold it), renumbered densely from 0 in handle order, with their
   * keys, version rings (among themselves) and holds, and each handle's new number
   * ({@link NO_HANDLE} for one left out): what a snapshot keeps of the table.
   */
  compacted(holds: Int32Array): CompactedActivityTable & { renumbered: Int32Array } {
    const renumbered = new Int32Array(this.items.length).fill(NO_HANDLE);
    const items: TimelineItem[] = [];
    for (let handle = 0; handle < this.items.length; handle++) {
      const item = this.items[handle];
      if (item !== undefined && holds[handle]! > 0) renumbered[handle] = items.push(item) - 1;
    }
    const timeMs = new Float64Array(items.length);
    const relevanceMs = new Float64Array(items.length);
    const nextVersion = new Int32Array(items.length);
    const keptHolds = new Int32Array(items.length);
    for (let handle = 0; handle < this.items.length; handle++) {
      const at = renumbered[handle]!;
      if (at === NO_HANDLE) continue;
      timeMs[at] = this.timeMs[handle]!;
      relevanceMs[at] = this.relevanceMs[handle]!;
      keptHolds[at] = holds[handle]!;
      let next = this.nextVersion[handle]!;
      while (renumbered[next] === NO_HANDLE) next = this.nextVersion[next]!;
      nextVersion[at] = renumbered[next]!;
    }
    return { items, timeMs, relevanceMs, nextVersion, holds: keptHolds, renumbered };
  }

  /**
   * A table holding what {@link compacted} returned, under the same handles and with the same
   * holds: the timelines restored with it hold their entries already.
   */
  static restore(compacted: CompactedActivityTable): ActivityTable {
    const { items, timeMs, relevanceMs, nextVersion, holds } = compacted;
    const table = new ActivityTable();
    const capacity = Math.max(INITIAL_CAPACITY, items.length);
    table.items = items.slice();
    table.timeMs = grown(timeMs, new Float64Array(capacity));
    table.relevanceMs = grown(relevanceMs, new Float64Array(capacity));
    table.holds = grown(holds, new Int32Array(capacity));
    table.nextVersion = grown(nextVersion, new Int32Array(capacity));
    for (let handle = 0; handle < items.length; handle++) {
      const next = nextVersion[handle]!;
      if (next < 0 || next >= items.length || items[next]!.id !== items[handle]!.id) throw new Error(`version ring of handle ${handle} leads to ${next}, not a version of ${items[handle]!.id}`);
      if (!(holds[handle]! > 0)) throw new Error(`nothing holds ${items[handle]!.id}`);
      if (table.versionsById.get(items[handle]!.id) === NOT_INDEXED) table.versionsById.set(items[handle]!.id, handle);
    }
    return table;
  }

  hold(handle: ActivityHandle): void {
    this.holds[handle]!++;
  }

  /**
   * Gives up one hold; the last one frees the version. A version is interned to be held:
   * one interned and never held stays until an intern of it is held and released.
   */
  release(handle: ActivityHandle): void {
    if (--this.holds[handle]! === 0) this.free(handle);
  }

  itemOf(handle: ActivityHandle): TimelineItem {
    return this.items[handle]!;
  }

  /** A version of the same activity without its content (a reference): the handle itself when it is one; not held. */
  referenceOf(handle: ActivityHandle): ActivityHandle {
    const item = this.items[handle]!;
    return isEmbedded(item) ? this.internReference(item) : handle;
  }

  /** The live versions of `feed`'s activities, marked by handle (1); undefined when the table holds none. */
  markFeed(feed: FeedId): Uint8Array | undefined {
    let marked: Uint8Array | undefined;
    for (let handle = 0; handle < this.items.length; handle++) {
      if (this.items[handle]?.feed === feed) (marked ??= new Uint8Array(this.items.length))[handle] = 1;
    }
    return marked;
  }

  /** One live version of an id (or {@link NO_HANDLE}); {@link nextVersionOf} goes round the others. */
  firstVersionOf(id: string): ActivityHandle {
    // NOT_INDEXED and NO_HANDLE are both -1.
    return this.versionsById.get(id);
  }

  /** The next version of the same id, back to `handle` itself after the last. */
  nextVersionOf(handle: ActivityHandle): ActivityHandle {
    return this.nextVersion[handle]!;
  }

  /** The key's time in milliseconds: keys with different ones compare as these do. */
  keyMsOf(handle: ActivityHandle, order: TimelineOrder): number {
    return order === 'relevance' ? this.relevanceMs[handle]! : this.timeMs[handle]!;
  }

  holdsOf(handle: ActivityHandle): number {
    return this.holds[handle]!;
  }

  keyOf(handle: ActivityHandle, order: TimelineOrder): SortKey {
    const item = this.items[handle]!;
    return order === 'relevance' ? relevanceKeyOf(item) : sortKeyOf(item);
  }

  /** Negative, zero or positive as `a`'s key is below, equal to or above `b`'s in the order. */
  compare(a: ActivityHandle, b: ActivityHandle, order: TimelineOrder): number {
    const ms = order === 'relevance' ? this.relevanceMs : this.timeMs;
    const difference = ms[a]! - ms[b]!;
    if (difference !== 0 && difference === difference) return difference;
    if (a === b) return 0;
    const itemA = this.items[a]!;
    const itemB = this.items[b]!;
    const timeA = order === 'relevance' ? relevanceOf(itemA) : itemA.time;
    const timeB = order === 'relevance' ? relevanceOf(itemB) : itemB.time;
    if (timeA === timeB) return compareText(itemA.id, itemB.id);
    return compareText(this.keyOf(a, order), this.keyOf(b, order));
  }

  /** As {@link compare}, against a key given as text (a cursor, a bound). */
  compareWithKey(handle: ActivityHandle, probe: KeyProbe, order: TimelineOrder): number {
    const ms = order === 'relevance' ? this.relevanceMs : this.timeMs;
    const difference = ms[handle]! - probe.ms;
    if (difference !== 0 && difference === difference) return difference;
    const item = this.items[handle]!;
    const time = order === 'relevance' ? relevanceOf(item) : item.time;
    if (time === probe.time) return compareText(item.id, probe.rest);
    return compareText(this.keyOf(handle, order), probe.key);
  }

  private add(item: TimelineItem): ActivityHandle {
    const handle = this.freed.length > 0 ? this.freed.pop()! : this.items.length;
    if (handle >= this.timeMs.length) this.grow();
    this.items[handle] = item;
    this.timeMs[handle] = Date.parse(item.time);
    this.relevanceMs[handle] = Date.parse(relevanceOf(item));
    this.holds[handle] = 0;
    const other = this.versionsById.get(item.id);
    if (other === NOT_INDEXED) {
      this.nextVersion[handle] = handle;
      this.versionsById.set(item.id, handle);
    } else {
      this.nextVersion[handle] = this.nextVersion[other]!;
      this.nextVersion[other] = handle;
    }
    return handle;
  }

  private free(handle: ActivityHandle): void {
    const id = this.items[handle]!.id;
    const next = this.nextVersion[handle]!;
    if (next === handle) {
      this.versionsById.delete(id);
    } else {
      let previous = next;
      while (this.nextVersion[previous] !== handle) previous = this.nextVersion[previous]!;
      this.nextVersion[previous] = next;
      if (this.versionsById.get(id) === handle) this.versionsById.set(id, next);
    }
    this.items[handle] = undefined;
    this.freed.push(handle);
  }

  private grow(): void {
    const capacity = this.timeMs.length * 2;
    this.timeMs = grown(this.timeMs, new Float64Array(capacity));
    this.relevanceMs = grown(this.relevanceMs, new Float64Array(capacity));
    this.holds = grown(this.holds, new Int32Array(capacity));
    this.nextVersion = grown(this.nextVersion, new Int32Array(capacity));
  }
}

/** What a snapshot keeps of an {@link ActivityTable}: its live versions under dense handles. */
export interface CompactedActivityTable {
  items: TimelineItem[];
  /** Per handle, its key's milliseconds by time and by relevance. */
  timeMs: Float64Array;
  relevanceMs: Float64Array;
  /** Per handle, the next version of the same id in its ring. */
  nextVersion: Int32Array;
  /** Per handle, the timeline entries and floors that hold it (at least one). */
  holds: Int32Array;
}

function grown<T extends Float64Array | Int32Array>(from: ArrayLike<number>, to: T): T {
  to.set(from);
  return to;
}

function isEmbedded(item: TimelineItem): item is Activity {
  return 'verb' in item;
}

/** The time a relevancy-ordered timeline sorts by: the later of the time and the last bump. */
function relevanceOf(item: TimelineItem): string {
  return item.bumpedAt !== undefined && item.bumpedAt > item.time ? item.bumpedAt : item.time;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a === b ? 0 : 1;
}

/** Two copies of one activity version: equal in every field (they come from different decodes). */
function sameActivity(a: Activity, b: Activity): boolean {
  return (
    a.id === b.id &&
    a.feed === b.feed &&
    a.time === b.time &&
    a.bumpedAt === b.bumpedAt &&
    a.updatedAt === b.updatedAt &&
    a.actor === b.actor &&
    a.verb === b.verb &&
    a.object === b.object &&
    a.foreignId === b.foreignId &&
    sameJson(a.extra, b.extra)
  );
}

import { boundsByFeed, isWithinBound, type Activity, type EdgeBound, type FeedEvent, type FeedId, type SortKey } from '@feedmill/contracts';
import { activityIdOf, activityEventTypes, evolveActivity, isActivityEvent, lowerBound, mergeNewestFirst, type DescendingSource } from '@feedmill/feed-models';
import type { ContentStore } from '../ports.js';
import { readItems, writeItems } from '../snapshots/item-columns.js';
import { SnapshotCorruptError, SnapshotMismatchError } from '../snapshots/snapshot-file.js';
import type { SnapshotReader, SnapshotWriter } from '../snapshots/snapshot-sections.js';
import { ROWS_PER_STEP } from '../snapshots/snapshottable.js';
import { MemoryProjection } from './memory-projection.js';
import { ActivitiesById, StoredActivity as Stored } from './stored-activities.js';

/**
 * Changes with the sections below, or with what a state holds after the same events: a
 * snapshot of another layout is not restored (the log is replayed). 3: an erased timeline
 * feed leaves the targets of what was addressed to it, which a snapshot of 2 may still hold.
 */
const LAYOUT = 'content/3';

const keyOfStored = (s: Stored) => s.key;
const relevanceOfStored = (s: Stored) => s.relevance;

/** Activities by id, by feed (oldest first) and by foreign id, rebuilt from the log at start. */
export class MemoryContentStore extends MemoryProjection implements ContentStore {
  readonly name = 'content';
  protected readonly eventTypes = activityEventTypes;
  // Not readonly: a snapshot restore replaces them whole.
  private byId = new ActivitiesById();
  private byFeed = new Map<FeedId, Stored[]>();
  /** The same activities per feed by relevance key: only bumps make it differ from byFeed. */
  private byFeedRelevance = new Map<FeedId, Stored[]>();
  private byForeign = new Map<string, string>();
  /**
   * The activities addressed to each timeline feed (`to`), by time and by relevance: a pull
   * of that reader's timeline reads them with the feeds it follows. Not in snapshots: rebuilt
   * from the activities.
   */
  private byTarget = new Map<FeedId, Stored[]>();
  private byTargetRelevance = new Map<FeedId, Stored[]>();
  /**
   * The activities that refer to each slice key (`refs`), by time: what a slice reads. Not
   * in snapshots as such: rebuilt from the activities, which carry their refs.
   */
  private byRef = new Map<string, Stored[]>();

  /**
   * Every activity once, feed by feed in each feed's time order, as columns; each one's log
   * position; each feed's relevance order as places in its time order; and which activities
   * the foreign ids name. Restoring sorts nothing.
   */
  protected *writeState(writer: SnapshotWriter): Generator<void, void, void> {
    const activities = new Array<Activity>(this.byId.size);
    const positions = new Float64Array(this.byId.size);
    const relevanceOrder = new Int32Array(this.byId.size);
    const feeds: FeedId[] = [];
    const counts: number[] = [];
    // Each activity's place in its feed's time order, by its slot among all activities.
    const placeBySlot = new Int32Array(this.byId.slots);
    let at = 0;
    for (const [feed, stored] of this.byFeed) {
      if (stored.length === 0) continue;
      feeds.push(feed);
      counts.push(stored.length);
      for (let place = 0; place < stored.length; place++) {
        const one = stored[place]!;
        activities[at + place] = one.activity;
        positions[at + place] = one.position;
        placeBySlot[one.slot] = place;
      }
      const byRelevance = this.byFeedRelevance.get(feed)!;
      for (let place = 0; place < byRelevance.length; place++) relevanceOrder[at + place] = placeBySlot[byRelevance[place]!.slot]!;
      at += stored.length;
      if (feeds.length % ROWS_PER_STEP === 0) yield;
    }
    const foreignNamed: number[] = [];
    for (const [index, activity] of activities.entries()) {
      if (activity.foreignId !== undefined && this.byForeign.get(foreignKey(activity.feed, activity.foreignId)) === activity.id) foreignNamed.push(index);
    }
    writer.strings([LAYOUT]);
    yield* writeItems(writer, activities);
    writer.float64s(positions).strings(feeds);
    writer.int32s(Int32Array.from(counts)).int32s(relevanceOrder).int32s(Int32Array.from(foreignNamed));
  }

  protected readState(reader: SnapshotReader): () => void {
    // A snapshot from before layouts were named starts with the items' kinds, not strings.
    const [layout] = reader.nextHoldsStrings() ? reader.strings() : [];
    if (layout !== LAYOUT) throw new SnapshotMismatchError(`its layout is ${layout ?? 'an older one'}, not ${LAYOUT}`);
    const activities = readItems(reader);
    const positions = reader.float64s();
    const feeds = reader.presentStrings() as FeedId[];
    const counts = reader.int32s();
    const relevanceOrder = reader.int32s();
    const foreignNamed = reader.int32s();
    if (activities.length !== positions.length || activities.length !== relevanceOrder.length || feeds.length !== counts.length) {
      throw new SnapshotCorruptError(`${activities.length} activities, ${positions.length} positions, ${relevanceOrder.length} relevance places; ${feeds.length} feeds, ${counts.length} counts`);
    }
    const all = activities.map((item, index): Stored => {
      if (!('verb' in item)) throw new SnapshotCorruptError(`item ${index} is a reference, not an activity`);
      return new Stored(item, positions[index]!);
    });
    const byId = new ActivitiesById();
    for (const stored of all) byId.add(stored);
    const byFeed = new Map<FeedId, Stored[]>();
    const byFeedRelevance = new Map<FeedId, Stored[]>();
    let start = 0;
    for (const [index, feed] of feeds.entries()) {
      const end = start + counts[index]!;
      if (end > all.length) throw new SnapshotCorruptError(`feed ${feed} runs past the activities`);
      const inFeed = all.slice(start, end);
      byFeed.set(feed, inFeed);
      byFeedRelevance.set(
        feed,
        Array.from(relevanceOrder.subarray(start, end), (place) => {
          const stored = inFeed[place];
          if (!stored) throw new SnapshotCorruptError(`feed ${feed} has no activity at place ${place}`);
          return stored;
        }),
      );
      start = end;
    }
    if (start !== all.length || byId.size !== all.length) throw new SnapshotCorruptError('activities outside every feed, or twice');
    const byForeign = new Map<string, string>();
    for (const index of foreignNamed) {
      const activity = all[index]?.activity;
      if (activity?.foreignId === undefined) throw new SnapshotCorruptError(`a foreign id names activity ${index}, which has none`);
      byForeign.set(foreignKey(activity.feed, activity.foreignId), activity.id);
    }
    const [byTarget, byTargetRelevance] = targetIndexesOf(all);
    const byRef = refIndexOf(all);
    return () => {
      this.byId = byId;
      this.byFeed = byFeed;
      this.byFeedRelevance = byFeedRelevance;
      this.byForeign = byForeign;
      this.byTarget = byTarget;
      this.byTargetRelevance = byTargetRelevance;
      this.byRef = byRef;
    };
  }

  /** Indexes the activity as {@link evolveActivity} leaves it. */
  protected evolve(event: FeedEvent, position: number): void {
    if (event.type === 'FeedErased') {
      this.erase(event.data.feed, position);
      return;
    }
    if (!isActivityEvent(event)) return;
    const id = activityIdOf(event);
    const stored = this.byId.get(id);
    const activity = evolveActivity(stored?.activity, event);
    if (!stored && activity) this.index(new Stored(activity, position));
    else if (stored && !activity) this.unindex(stored);
    else if (stored && activity) this.change(stored, activity);
  }

  /**
   * Forgets every activity an erased feed had before the erasure, from every index (those
   * addressed to others and slices included). Only those before it: a replica applies what
   * it appended itself at once, so an import it appended after an erasure it had not read
   * yet is already here when the erasure arrives.
   */
  private erase(feed: FeedId, position: number): void {
    for (const stored of [...(this.byFeed.get(feed) ?? [])]) if (stored.position < position) this.unindex(stored);
    if (this.byFeed.get(feed)?.length === 0) {
      this.byFeed.delete(feed);
      this.byFeedRelevance.delete(feed);
    }
    this.unaddress(feed, position);
  }

  /**
   * Takes an erased timeline feed out of the targets of what was addressed to it before the
   * erasure: its timeline goes, and a new owner of its id must not find it there. Each such
   * activity stays, with its other targets.
   */
  private unaddress(feed: FeedId, position: number): void {
    const addressed = this.byTarget.get(feed);
    if (!addressed?.some((stored) => stored.position < position)) return;
    const after = (stored: Stored) => stored.position >= position;
    const kept = addressed.filter(after);
    if (kept.length > 0) {
      this.byTarget.set(feed, kept);
      this.byTargetRelevance.set(feed, this.byTargetRelevance.get(feed)!.filter(after));
    } else {
      this.byTarget.delete(feed);
      this.byTargetRelevance.delete(feed);
    }
    for (const stored of addressed) if (!after(stored)) stored.replace(withoutTarget(stored.activity, feed));
  }

  private index(stored: Stored): void {
    const { activity } = stored;
    this.byId.add(stored);
    insertOrdered(listOf(this.byFeed, activity.feed), stored, keyOfStored);
    insertOrdered(listOf(this.byFeedRelevance, activity.feed), stored, relevanceOfStored);
    if (activity.foreignId !== undefined) this.byForeign.set(foreignKey(activity.feed, activity.foreignId), activity.id);
    for (const target of activity.to ?? []) {
      insertOrdered(listOf(this.byTarget, target), stored, keyOfStored);
      insertOrdered(listOf(this.byTargetRelevance, target), stored, relevanceOfStored);
    }
    for (const ref of activity.refs ?? []) insertOrdered(listOf(this.byRef, ref), stored, keyOfStored);
  }

  private unindex(stored: Stored): void {
    const { activity } = stored;
    this.byId.delete(stored);
    removeOrdered(this.byFeed.get(activity.feed)!, stored, keyOfStored);
    removeOrdered(this.byFeedRelevance.get(activity.feed)!, stored, relevanceOfStored);
    if (activity.foreignId !== undefined) this.byForeign.delete(foreignKey(activity.feed, activity.foreignId));
    for (const target of activity.to ?? []) {
      removeOrdered(this.byTarget.get(target)!, stored, keyOfStored);
      removeOrdered(this.byTargetRelevance.get(target)!, stored, relevanceOfStored);
    }
    for (const ref of activity.refs ?? []) {
      const list = this.byRef.get(ref)!;
      removeOrdered(list, stored, keyOfStored);
      if (list.length === 0) this.byRef.delete(ref);
    }
  }

  /**
   * A change to a held activity keeps its place by time. A bump moves it by relevance; an
   * update (same bump) keeps that place too.
   */
  private change(stored: Stored, activity: Activity): void {
    if (activity.bumpedAt === stored.activity.bumpedAt) {
      stored.replace(activity);
      return;
    }
    const lists = [this.byFeedRelevance.get(activity.feed)!, ...(activity.to ?? []).map((target) => this.byTargetRelevance.get(target)!)];
    for (const list of lists) removeOrdered(list, stored, relevanceOfStored);
    stored.replace(activity);
    for (const list of lists) insertOrdered(list, stored, relevanceOfStored);
  }

  async get(ids: readonly string[]): Promise<Activity[]> {
    const out: Activity[] = [];
    for (const id of ids) {
      const stored = this.byId.get(id);
      if (stored) out.push(stored.activity);
    }
    return out;
  }

  async positionsOf(ids: readonly string[]): Promise<Array<number | null>> {
    return ids.map((id) => this.byId.get(id)?.position ?? null);
  }

  async byForeignId(feed: FeedId, foreignId: string): Promise<Activity | undefined> {
    const id = this.byForeign.get(foreignKey(feed, foreignId));
    return id === undefined ? undefined : this.byId.get(id)?.activity;
  }

  async slice(ref: string, before: SortKey | undefined, limit: number): Promise<Activity[]> {
    const items = this.byRef.get(ref);
    if (!items) return [];
    const out: Activity[] = [];
    for (let at = (before === undefined ? items.length : lowerBound(items, before, keyOfStored)) - 1; at >= 0 && out.length < limit; at--) out.push(items[at]!.activity);
    return out;
  }

  /**
   * The newest activities of the feeds, and of those addressed to them: a timeline feed
   * among `feeds` brings what was addressed to it. An activity both posted to one of the
   * feeds and addressed to another is taken once. A bounded feed's source passes over what
   * its bound leaves out (by time key and log position, whatever the order).
   */
  async recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number, order: 'time' | 'relevance' = 'time', bounds?: readonly EdgeBound[]): Promise<Activity[]> {
    const [index, targets, keyOf] = order === 'relevance' ? [this.byFeedRelevance, this.byTargetRelevance, relevanceOfStored] : [this.byFeed, this.byTarget, keyOfStored];
    const sources: DescendingSource<Stored>[] = [];
    const addSource = (items: Stored[] | undefined, bound?: EdgeBound) => {
      if (!items || items.length === 0) return;
      const end = before === undefined ? items.length : lowerBound(items, before, keyOf);
      if (end > 0) sources.push(bound ? { items, next: end - 1, accept: (s) => isWithinBound(bound, s.key, s.position) } : { items, next: end - 1 });
    };
    const bounded = boundsByFeed(bounds);
    for (const feed of feeds) addSource(index.get(feed), bounded?.get(feed));
    const fromFeeds = sources.length;
    if (targets.size > 0) for (const feed of feeds) addSource(targets.get(feed));
    const addedBy = atMost === undefined ? undefined : (s: Stored) => s.position <= atMost;
    if (sources.length === fromFeeds) return mergeNewestFirst(sources, keyOf, limit, addedBy).map((s) => s.activity);
    // Two sources may give the same activity; the merge gives its copies one after the other (same key).
    let last: Stored | undefined;
    const once = (s: Stored): boolean => {
      if (s === last || (addedBy !== undefined && !addedBy(s))) return false;
      last = s;
      return true;
    };
    return mergeNewestFirst(sources, keyOf, limit, once).map((s) => s.activity);
  }
}

/** The target indexes, by time and by relevance, of activities restored in any order. */
function targetIndexesOf(all: readonly Stored[]): [Map<FeedId, Stored[]>, Map<FeedId, Stored[]>] {
  const byTarget = new Map<FeedId, Stored[]>();
  for (const stored of all) for (const target of stored.activity.to ?? []) listOf(byTarget, target).push(stored);
  const byTargetRelevance = new Map<FeedId, Stored[]>();
  const ascending = (keyOf: (s: Stored) => SortKey) => (a: Stored, b: Stored) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0);
  for (const [target, list] of byTarget) {
    list.sort(ascending(keyOfStored));
    byTargetRelevance.set(target, list.slice().sort(ascending(relevanceOfStored)));
  }
  return [byTarget, byTargetRelevance];
}

/** The slice index of activities restored in any order. */
function refIndexOf(all: readonly Stored[]): Map<string, Stored[]> {
  const byRef = new Map<string, Stored[]>();
  for (const stored of all) for (const ref of stored.activity.refs ?? []) listOf(byRef, ref).push(stored);
  for (const list of byRef.values()) list.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return byRef;
}

function foreignKey(feed: FeedId, foreignId: string): string {
  return `${feed}\n${foreignId}`;
}

function listOf<K>(index: Map<K, Stored[]>, feed: K): Stored[] {
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

/** The activity without `feed` among its targets, its fields in their order; without `to` once none is left. */
function withoutTarget(activity: Activity, feed: FeedId): Activity {
  const targets = (activity.to ?? []).filter((target) => target !== feed);
  return Object.fromEntries(Object.entries(activity).flatMap(([field, value]) => (field !== 'to' ? [[field, value]] : targets.length > 0 ? [[field, targets]] : []))) as Activity;
}

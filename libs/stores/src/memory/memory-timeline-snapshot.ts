import type { FeedId, SortKey } from '@feedmill/contracts';
import { ActivityTable, DecayedCount, HiddenActivities, NO_HANDLE, NotificationMarks, ProducerPosts, PULLED_WHOLE, type CompactTimeline, type MarkState, type PulledEdges } from '@feedmill/feed-models';
import { readItems, writeItems } from '../snapshots/item-columns.js';
import { SnapshotCorruptError, SnapshotMismatchError } from '../snapshots/snapshot-file.js';
import { SnapshotReader, SnapshotWriter } from '../snapshots/snapshot-sections.js';

/** What a `hybrid` timeline keeps beside its entries: its edges' sides and its reader's reads. */
export interface HybridState {
  readonly pulledEdges: PulledEdges | undefined;
  readonly reads: DecayedCount | undefined;
}

export interface TimelinesToSnapshot {
  /** Names the feed config the timelines were shaped by. */
  policies: string;
  delivered: number;
  written: number;
  table: ActivityTable;
  timelines: Array<{ reader: FeedId; timeline: CompactTimeline & HybridState; lastReadAt: number }>;
  /** Producers' post counts of the `hybrid` timelines, one set per rate window. */
  producerPosts: readonly ProducerPosts[];
  /** Notification feeds' seen and read marks, per reader. */
  marks: ReadonlyMap<FeedId, NotificationMarks>;
  /** What readers hid from their timelines, per reader. */
  hidden: ReadonlyMap<FeedId, HiddenActivities>;
}

/** Changes with the sections below: a snapshot of another layout is not restored (the log is replayed). */
const LAYOUT = 'timelines/9';

/**
 * The memory timeline store's snapshot: the activity versions its timelines hold, as columns
 * under dense handles (with their keys' milliseconds and version rings, so that nothing is
 * parsed or searched again), then per reader its entry count, floor and last read, and every
 * entry's handle in one array.
 *
 * In steps: the first gathers what reads can change (which timelines there are and what
 * they hold, a hybrid reader's reads and edges) into arrays of its own; the steps after it
 * write columns from those, and from the marks and hidings, which only deliveries change
 * (the store holds them until the last step).
 */
export function* timelineSnapshotSteps({ policies, delivered, written, table, timelines, producerPosts, marks, hidden }: TimelinesToSnapshot): Generator<void, Uint8Array, void> {
  const { compacted, handles, counts, floors, lastReads } = entriesOf(table, timelines);
  const readers = timelines.map((t) => t.reader);
  const writeHybrid = hybridColumns(timelines.map((t) => t.timeline), producerPosts);
  yield;
  const writer = new SnapshotWriter().strings([policies, LAYOUT]).number(delivered).number(written);
  yield* writeItems(writer, compacted.items);
  writer.float64s(compacted.timeMs).float64s(compacted.relevanceMs).int32s(compacted.nextVersion).int32s(compacted.holds);
  writer.strings(readers);
  yield;
  writer.int32s(counts).int32s(floors).float64s(lastReads).int32s(handles);
  writeHybrid(writer);
  writeMarks(writer, marks);
  writeHidden(writer, hidden);
  yield;
  return writer.finish();
}

/**
 * The activity versions the timelines hold, compacted, and each timeline's entries as
 * handles into them. A function of its own, with indexed loops: it goes over every entry
 * twice, and a generator's loops run several times slower.
 */
function entriesOf(table: ActivityTable, timelines: TimelinesToSnapshot['timelines']) {
  // The holds of the timelines kept: a cache being built is left out, with what it holds.
  const holds = new Int32Array(table.capacity);
  let entries = 0;
  for (let index = 0; index < timelines.length; index++) {
    const { timeline } = timelines[index]!;
    const held = timeline.entryHandles;
    for (let at = 0; at < held.length; at++) holds[held[at]!]!++;
    if (timeline.floorEntry !== NO_HANDLE) holds[timeline.floorEntry]!++;
    entries += held.length;
  }
  const compacted = table.compacted(holds);
  const { renumbered } = compacted;
  const handles = new Int32Array(entries);
  const counts = new Int32Array(timelines.length);
  const floors = new Int32Array(timelines.length);
  const lastReads = new Float64Array(timelines.length);
  let at = 0;
  for (let index = 0; index < timelines.length; index++) {
    const { timeline, lastReadAt } = timelines[index]!;
    const held = timeline.entryHandles;
    for (let entry = 0; entry < held.length; entry++) handles[at++] = renumbered[held[entry]!]!;
    counts[index] = held.length;
    floors[index] = timeline.floorEntry === NO_HANDLE ? NO_HANDLE : renumbered[timeline.floorEntry]!;
    lastReads[index] = lastReadAt;
  }
  return { compacted, handles, counts, floors, lastReads };
}

/**
 * Per timeline its reads' count and time and its number of edges not simply pushed; the
 * edges' feeds and bounds (absent: pulled whole); then each rate window's post counts.
 */
function hybridColumns(timelines: ReadonlyArray<HybridState>, producerPosts: readonly ProducerPosts[]): (writer: SnapshotWriter) => void {
  const readCounts = new Float64Array(timelines.length);
  const readAts = new Float64Array(timelines.length).fill(-Infinity);
  const edgeCounts = new Int32Array(timelines.length);
  const edgeFeeds: FeedId[] = [];
  const edgeFroms: Array<SortKey | undefined> = [];
  for (const [index, { pulledEdges: edges, reads }] of timelines.entries()) {
    if (reads) ({ count: readCounts[index], at: readAts[index] } = reads.state);
    for (const [feed, from] of edges ?? []) {
      edgeFeeds.push(feed);
      edgeFroms.push(from === PULLED_WHOLE ? undefined : from);
    }
    edgeCounts[index] = edges?.size ?? 0;
  }
  const posted = producerPosts.map((counts) => [...counts.entries()]);
  return (writer) => {
    writer.float64s(readCounts).float64s(readAts).int32s(edgeCounts).strings(edgeFeeds).strings(edgeFroms);
    writer.float64s(Float64Array.from(producerPosts, (counts) => counts.windowMs)).int32s(Int32Array.from(posted, (entries) => entries.length));
    const all = posted.flat();
    writer.strings(all.map((e) => e.feed)).float64s(Float64Array.from(all, (e) => e.count)).float64s(Float64Array.from(all, (e) => e.at)).strings(all.map((e) => e.lastId));
    writer.strings(all.map((e) => e.newestByTime)).strings(all.map((e) => e.newestByRelevance));
  };
}

/**
 * Per reader with marks, of seen then read: the mark of all groups (absent: none) and the
 * number of single groups' marks; then those groups' ids and keys, in the same order. Then
 * the same by log position (an absent mark of all is NaN).
 */
function writeMarks(writer: SnapshotWriter, marks: ReadonlyMap<FeedId, NotificationMarks>): void {
  const readers = [...marks.keys()];
  const states = [...marks.values()].flatMap((reader) => [reader.seen, reader.read]);
  const groups = states.flatMap((state) => [...state.groups]);
  writer.strings(readers).strings(states.map((state) => state.all)).int32s(Int32Array.from(states, (state) => state.groups.size));
  writer.strings(groups.map(([id]) => id)).strings(groups.map(([, upTo]) => upTo));
  const groupsAt = states.flatMap((state) => [...state.groupsAt]);
  writer.float64s(Float64Array.from(states, (state) => state.allAt ?? NaN)).int32s(Int32Array.from(states, (state) => state.groupsAt.size));
  writer.strings(groupsAt.map(([id]) => id)).float64s(Float64Array.from(groupsAt, ([, at]) => at));
}

function readMarks(reader: SnapshotReader): Map<FeedId, NotificationMarks> {
  const readers = reader.presentStrings() as FeedId[];
  const alls = reader.strings();
  const counts = reader.transientInt32s();
  const ids = reader.presentStrings();
  const upTos = reader.presentStrings();
  const allAts = reader.float64s();
  const countsAt = reader.transientInt32s();
  const idsAt = reader.presentStrings();
  const ats = reader.float64s();
  if (alls.length !== readers.length * 2 || counts.length !== readers.length * 2 || ids.length !== upTos.length) throw new SnapshotCorruptError('the marks’ columns differ in length');
  if (allAts.length !== readers.length * 2 || countsAt.length !== readers.length * 2 || idsAt.length !== ats.length) throw new SnapshotCorruptError('the position marks’ columns differ in length');
  const marks = new Map<FeedId, NotificationMarks>();
  let at = 0;
  let atAt = 0;
  const fill = (state: MarkState, index: number) => {
    state.all = alls[index];
    for (const end = at + counts[index]!; at < end; at++) state.groups.set(ids[at]!, upTos[at]!);
    state.allAt = Number.isNaN(allAts[index]!) ? undefined : allAts[index];
    for (const end = atAt + countsAt[index]!; atAt < end; atAt++) state.groupsAt.set(idsAt[atAt]!, ats[atAt]!);
  };
  for (const [index, feed] of readers.entries()) {
    const readerMarks = new NotificationMarks();
    fill(readerMarks.seen, index * 2);
    fill(readerMarks.read, index * 2 + 1);
    marks.set(feed, readerMarks);
  }
  if (at !== ids.length || atAt !== idsAt.length) throw new SnapshotCorruptError(`${ids.length - at + idsAt.length - atAt} marks belong to no reader`);
  return marks;
}

/** Per reader who hid something, how many; then every hidden id, its time and its hiding's log position, oldest hiding first. */
function writeHidden(writer: SnapshotWriter, hidden: ReadonlyMap<FeedId, HiddenActivities>): void {
  const entries = [...hidden.values()].flatMap((activities) => [...activities.entries()]);
  writer.strings([...hidden.keys()]).int32s(Int32Array.from(hidden.values(), (activities) => activities.size));
  writer.strings(entries.map(([id]) => id)).strings(entries.map(([, mark]) => mark.time)).float64s(Float64Array.from(entries, ([, mark]) => mark.position));
}

function readHidden(reader: SnapshotReader): Map<FeedId, HiddenActivities> {
  const readers = reader.presentStrings() as FeedId[];
  const counts = reader.transientInt32s();
  const ids = reader.presentStrings();
  const times = reader.presentStrings();
  const positions = reader.float64s();
  if (counts.length !== readers.length || times.length !== ids.length || positions.length !== ids.length) throw new SnapshotCorruptError('the hidden activities’ columns differ in length');
  const hidden = new Map<FeedId, HiddenActivities>();
  let at = 0;
  for (const [index, feed] of readers.entries()) {
    const activities = new HiddenActivities();
    for (const end = at + counts[index]!; at < end; at++) activities.hide(ids[at]!, times[at]!, positions[at]!);
    if (activities.size === 0) throw new SnapshotCorruptError(`${feed} is kept as hiding nothing`);
    hidden.set(feed, activities);
  }
  if (at !== ids.length) throw new SnapshotCorruptError(`${ids.length - at} hidden activities belong to no reader`);
  return hidden;
}

/**
 * Reads what {@link timelineSnapshotSteps} wrote into a new table and timelines that
 * `timelineOf` makes for each reader. Throws {@link SnapshotMismatchError} for a snapshot
 * taken under another feed config, and {@link SnapshotCorruptError} for one that does not
 * hold together.
 */
export function readTimelineSnapshot<T extends CompactTimeline & HybridState>(
  payload: Uint8Array,
  policies: string,
  timelineOf: (reader: FeedId, table: ActivityTable, lastReadAt: number) => T,
): { table: ActivityTable; timelines: Map<FeedId, T>; delivered: number; written: number; producerPosts: ProducerPosts[]; marks: Map<FeedId, NotificationMarks>; hidden: Map<FeedId, HiddenActivities> } {
  const reader = new SnapshotReader(payload);
  const [takenUnder, layout] = reader.strings();
  if (takenUnder !== policies) throw new SnapshotMismatchError('it was taken under another feed config');
  if (layout !== LAYOUT) throw new SnapshotMismatchError(`its layout is ${layout ?? 'an older one'}, not ${LAYOUT}`);
  const delivered = reader.number();
  const written = reader.number();
  const items = readItems(reader);
  const timeMs = reader.float64s();
  const relevanceMs = reader.float64s();
  const nextVersion = reader.int32s();
  const holds = reader.int32s();
  const readers = reader.presentStrings() as FeedId[];
  // Read in place: each timeline copies its own entries out.
  const counts = reader.transientInt32s();
  const floors = reader.transientInt32s();
  const lastReads = reader.float64s();
  const handles = reader.transientInt32s();
  const readCounts = reader.float64s();
  const readAts = reader.float64s();
  const edgeCounts = reader.transientInt32s();
  const edgeFeeds = reader.presentStrings() as FeedId[];
  const edgeFroms = reader.strings();
  const windows = reader.float64s();
  const postedPerWindow = reader.transientInt32s();
  const postedFeeds = reader.presentStrings() as FeedId[];
  const postedCounts = reader.float64s();
  const postedAts = reader.float64s();
  const postedLastIds = reader.presentStrings();
  const postedNewestByTime = reader.presentStrings();
  const postedNewestByRelevance = reader.presentStrings();
  const marks = readMarks(reader);
  const hidden = readHidden(reader);
  reader.end();
  if (readCounts.length !== readers.length || readAts.length !== readers.length || edgeCounts.length !== readers.length) throw new SnapshotCorruptError('the hybrid columns differ in length');
  if (edgeFroms.length !== edgeFeeds.length || postedPerWindow.length !== windows.length) throw new SnapshotCorruptError('the hybrid edges or windows differ in length');
  if ([postedCounts, postedAts, postedLastIds, postedNewestByTime, postedNewestByRelevance].some((column) => column.length !== postedFeeds.length)) throw new SnapshotCorruptError('the producers’ columns differ in length');
  if (timeMs.length !== items.length || relevanceMs.length !== items.length || nextVersion.length !== items.length || holds.length !== items.length) throw new SnapshotCorruptError('the activity columns differ in length');
  if (counts.length !== readers.length || floors.length !== readers.length || lastReads.length !== readers.length) throw new SnapshotCorruptError('the timeline columns differ in length');
  try {
    const table = ActivityTable.restore({ items, timeMs, relevanceMs, nextVersion, holds });
    const timelines = new Map<FeedId, T>();
    let edgeAt = 0;
    // Every entry and floor is one hold: the holds must add up to them.
    let held = 0;
    for (const count of holds) held += count;
    let at = 0;
    for (const [index, feed] of readers.entries()) {
      const count = counts[index]!;
      const floor = floors[index]!;
      const entries = handles.subarray(at, at + count);
      at += count;
      if (entries.length !== count) throw new Error(`the entries of ${feed} run past the handles`);
      for (const handle of entries) if (handle < 0 || handle >= items.length) throw new Error(`handle ${handle} of ${items.length}`);
      if (floor < NO_HANDLE || floor >= items.length) throw new Error(`floor ${floor} of ${items.length}`);
      const timeline = timelineOf(feed, table, lastReads[index]!);
      timeline.restore(entries, floor);
      const edges = edgeCounts[index]!;
      if (edges > 0 && !timeline.pulledEdges) throw new Error(`${feed} has pulled edges, but its group is not hybrid`);
      for (const end = edgeAt + edges; edgeAt < end; edgeAt++) timeline.pulledEdges!.set(edgeFeeds[edgeAt]!, edgeFroms[edgeAt] ?? PULLED_WHOLE);
      timeline.reads?.set(readCounts[index]!, readAts[index]!);
      timelines.set(feed, timeline);
      held -= count + (floor === NO_HANDLE ? 0 : 1);
    }
    if (at !== handles.length) throw new Error(`${handles.length - at} handles belong to no timeline`);
    if (edgeAt !== edgeFeeds.length) throw new Error(`${edgeFeeds.length - edgeAt} edges belong to no timeline`);
    const producerPosts: ProducerPosts[] = [];
    let postedAt = 0;
    for (const [index, windowMs] of windows.entries()) {
      const counts = new ProducerPosts(windowMs);
      for (const end = postedAt + postedPerWindow[index]!; postedAt < end; postedAt++) counts.restore(postedFeeds[postedAt]!, postedCounts[postedAt]!, postedAts[postedAt]!, postedLastIds[postedAt]!, postedNewestByTime[postedAt]!, postedNewestByRelevance[postedAt]!);
      producerPosts.push(counts);
    }
    if (postedAt !== postedFeeds.length) throw new Error(`${postedFeeds.length - postedAt} post counts belong to no window`);
    if (held !== 0) throw new Error(`the holds differ from the entries and floors by ${held}`);
    return { table, timelines, delivered, written, producerPosts, marks, hidden };
  } catch (error) {
    if (error instanceof SnapshotCorruptError || error instanceof SnapshotMismatchError) throw error;
    throw new SnapshotCorruptError(`the timelines do not hold together: ${(error as Error).message}`);
  }
}

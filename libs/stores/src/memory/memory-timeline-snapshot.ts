import type { FeedId } from '@feedmill/contracts';
import { ActivityTable, NO_HANDLE, type CompactTimeline } from '@feedmill/feed-models';
import { readItems, writeItems } from '../snapshots/item-columns.js';
import { SnapshotCorruptError, SnapshotMismatchError } from '../snapshots/snapshot-file.js';
import { SnapshotReader, SnapshotWriter } from '../snapshots/snapshot-sections.js';

export interface TimelinesToSnapshot {
  /** Names the feed config the timelines were shaped by. */
  policies: string;
  delivered: number;
  table: ActivityTable;
  timelines: Array<{ reader: FeedId; timeline: CompactTimeline; lastReadAt: number }>;
}

/**
 * The memory timeline store's snapshot: the activity versions its timelines hold, as columns
 * under dense handles (with their keys' milliseconds and version rings, so that nothing is
 * parsed or searched again), then per reader its entry count, floor and last read, and every
 * entry's handle in one array.
 */
export function writeTimelineSnapshot({ policies, delivered, table, timelines }: TimelinesToSnapshot): Uint8Array {
  // The holds of the timelines kept: a cache being built is left out, with what it holds.
  const holds = new Int32Array(table.capacity);
  let entries = 0;
  for (const { timeline } of timelines) {
    for (const handle of timeline.entryHandles) holds[handle]!++;
    if (timeline.floorEntry !== NO_HANDLE) holds[timeline.floorEntry]!++;
    entries += timeline.size;
  }
  const compacted = table.compacted(holds);
  const handles = new Int32Array(entries);
  const counts = new Int32Array(timelines.length);
  const floors = new Int32Array(timelines.length);
  const lastReads = new Float64Array(timelines.length);
  let at = 0;
  for (const [index, { timeline, lastReadAt }] of timelines.entries()) {
    for (const handle of timeline.entryHandles) handles[at++] = compacted.renumbered[handle]!;
    counts[index] = timeline.size;
    floors[index] = timeline.floorEntry === NO_HANDLE ? NO_HANDLE : compacted.renumbered[timeline.floorEntry]!;
    lastReads[index] = lastReadAt;
  }
  const writer = new SnapshotWriter().strings([policies]).number(delivered);
  writeItems(writer, compacted.items);
  writer.float64s(compacted.timeMs).float64s(compacted.relevanceMs).int32s(compacted.nextVersion).int32s(compacted.holds);
  writer.strings(timelines.map((t) => t.reader));
  writer.int32s(counts).int32s(floors).float64s(lastReads).int32s(handles);
  return writer.finish();
}

/**
 * Reads what {@link writeTimelineSnapshot} wrote into a new table and timelines that
 * `timelineOf` makes for each reader. Throws {@link SnapshotMismatchError} for a snapshot
 * taken under another feed config, and {@link SnapshotCorruptError} for one that does not
 * hold together.
 */
export function readTimelineSnapshot<T extends CompactTimeline>(
  payload: Uint8Array,
  policies: string,
  timelineOf: (reader: FeedId, table: ActivityTable, lastReadAt: number) => T,
): { table: ActivityTable; timelines: Map<FeedId, T>; delivered: number } {
  const reader = new SnapshotReader(payload);
  const [takenUnder] = reader.strings();
  if (takenUnder !== policies) throw new SnapshotMismatchError('it was taken under another feed config');
  const delivered = reader.number();
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
  reader.end();
  if (timeMs.length !== items.length || relevanceMs.length !== items.length || nextVersion.length !== items.length || holds.length !== items.length) throw new SnapshotCorruptError('the activity columns differ in length');
  if (counts.length !== readers.length || floors.length !== readers.length || lastReads.length !== readers.length) throw new SnapshotCorruptError('the timeline columns differ in length');
  try {
    const table = ActivityTable.restore({ items, timeMs, relevanceMs, nextVersion, holds });
    const timelines = new Map<FeedId, T>();
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
      timelines.set(feed, timeline);
      held -= count + (floor === NO_HANDLE ? 0 : 1);
    }
    if (at !== handles.length) throw new Error(`${handles.length - at} handles belong to no timeline`);
    if (held !== 0) throw new Error(`the holds differ from the entries and floors by ${held}`);
    return { table, timelines, delivered };
  } catch (error) {
    if (error instanceof SnapshotCorruptError || error instanceof SnapshotMismatchError) throw error;
    throw new SnapshotCorruptError(`the timelines do not hold together: ${(error as Error).message}`);
  }
}

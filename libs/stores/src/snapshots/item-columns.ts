import type { Activity, ActivityReference, FeedId, TimelineItem } from '@feedmill/contracts';
import { SnapshotCorruptError } from './snapshot-file.js';
import type { SnapshotReader, SnapshotWriter, StringCursor } from './snapshot-sections.js';

const ACTIVITY = 0;
const REFERENCE = 1;

/**
 * Writes activities and references as columns: one strings section per field, the fields
 * few values repeat in (feed, actor, verb) as a table of distinct strings and an index per
 * item, `extra` as JSON text, then `updatedAt`, `to` and `refs`. Yields after each column.
 */
export function* writeItems(writer: SnapshotWriter, items: readonly TimelineItem[]): Generator<void, void, void> {
  const kinds = new Uint8Array(items.length);
  const activity = (item: TimelineItem): Activity | undefined => ('verb' in item ? item : undefined);
  for (let i = 0; i < items.length; i++) kinds[i] = 'verb' in items[i]! ? ACTIVITY : REFERENCE;
  writer.uint8s(kinds);
  writer.strings(yield* column(items, (item) => item.id));
  writeTable(writer, yield* column(items, (item) => item.feed));
  writer.strings(yield* column(items, (item) => item.time));
  writer.strings(yield* column(items, (item) => item.bumpedAt));
  writeTable(writer, yield* column(items, (item) => activity(item)?.actor));
  writeTable(writer, yield* column(items, (item) => activity(item)?.verb));
  writer.strings(yield* column(items, (item) => activity(item)?.object));
  writer.strings(yield* column(items, (item) => activity(item)?.foreignId));
  writer.strings(yield* column(items, (item) => mapDefined(activity(item)?.extra, (extra) => JSON.stringify(extra))));
  // Last, so that a snapshot written before updates existed fails on the next section's kind
  // (a number section where these strings were expected) rather than being read askew.
  writer.strings(yield* column(items, (item) => activity(item)?.updatedAt));
  // Targets, of copies and references alike, as their feeds joined by spaces (no feed id holds one).
  writer.strings(yield* column(items, (item) => item.to?.join(' ')));
  // Refs likewise (a ref is written like a feed id): only whole activities carry them.
  writer.strings(yield* column(items, (item) => activity(item)?.refs?.join(' ')));
}

/** Items a column takes between two steps: a few milliseconds for the costliest (`extra`, as JSON). */
const ITEMS_PER_STEP = 5_000;

/** `items.map(value)`, yielding after each {@link ITEMS_PER_STEP} items and once the column is whole. */
function* column<T>(items: readonly TimelineItem[], value: (item: TimelineItem) => T): Generator<void, T[], void> {
  const values = new Array<T>(items.length);
  for (let start = 0; start < items.length; start += ITEMS_PER_STEP) {
    fillColumn(values, items, value, start, Math.min(items.length, start + ITEMS_PER_STEP));
    yield;
  }
  return values;
}

/** The loop of {@link column}, in a plain function: a generator's loops run slower. */
function fillColumn<T>(values: T[], items: readonly TimelineItem[], value: (item: TimelineItem) => T, start: number, end: number): void {
  for (let index = start; index < end; index++) values[index] = value(items[index]!);
}

/**
 * Reads what {@link writeItems} wrote: objects with their fields in the order the log's own
 * decode gives them, so that they serialize the same. Each column is read as the items are
 * made, with no array of it in between.
 */
export function readItems(reader: SnapshotReader): TimelineItem[] {
  const kinds = reader.uint8s();
  const count = kinds.length;
  const ids = cursorOf(reader, count, 'id');
  const feeds = tableOf(reader, count, 'feed');
  const times = cursorOf(reader, count, 'time');
  const bumps = cursorOf(reader, count, 'bumpedAt');
  const actors = tableOf(reader, count, 'actor');
  const verbs = tableOf(reader, count, 'verb');
  const objects = cursorOf(reader, count, 'object');
  const foreignIds = cursorOf(reader, count, 'foreignId');
  const extras = cursorOf(reader, count, 'extra');
  const updates = cursorOf(reader, count, 'updatedAt');
  const targets = cursorOf(reader, count, 'to');
  const refLists = cursorOf(reader, count, 'refs');
  const items = new Array<TimelineItem>(count);
  for (let i = 0; i < count; i++) {
    const id = ids.next();
    const feed = feeds(i) as FeedId | undefined;
    const time = times.next();
    const bumpedAt = bumps.next();
    const actor = actors(i);
    const verb = verbs(i);
    const object = objects.next();
    const foreignId = foreignIds.next();
    const extra = extras.next();
    const updatedAt = updates.next();
    const to = targets.next()?.split(' ') as FeedId[] | undefined;
    const refs = refLists.next()?.split(' ');
    if (id === undefined || feed === undefined || time === undefined) throw new SnapshotCorruptError(`item ${i} has no id, feed or time`);
    if (kinds[i] === REFERENCE) {
      const reference: ActivityReference = { id, feed, time };
      if (bumpedAt !== undefined) reference.bumpedAt = bumpedAt;
      if (to !== undefined) reference.to = to;
      items[i] = reference;
      continue;
    }
    if (kinds[i] !== ACTIVITY || actor === undefined || verb === undefined || object === undefined) throw new SnapshotCorruptError(`item ${i} is neither a whole activity nor a reference`);
    const activity: Activity = { id, feed, actor, verb, object, time };
    if (foreignId !== undefined) activity.foreignId = foreignId;
    if (extra !== undefined) activity.extra = JSON.parse(extra) as Record<string, unknown>;
    if (bumpedAt !== undefined) activity.bumpedAt = bumpedAt;
    if (updatedAt !== undefined) activity.updatedAt = updatedAt;
    if (to !== undefined) activity.to = to;
    if (refs !== undefined) activity.refs = refs;
    items[i] = activity;
  }
  for (const cursor of [ids, times, bumps, objects, foreignIds, extras, updates, targets, refLists]) cursor.end();
  return items;
}

/** Strings few distinct values repeat in: the distinct ones once, and each value's index among them (-1 for none). */
export function writeTable(writer: SnapshotWriter, values: ReadonlyArray<string | undefined>): void {
  const numbers = new Map<string, number>();
  const indexes = new Int32Array(values.length);
  // Equal values come in runs (a feed's activities are written together): no lookup for those.
  let previous: string | undefined;
  let previousNumber = -1;
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === undefined) {
      indexes[i] = -1;
      continue;
    }
    if (value !== previous) {
      let number = numbers.get(value);
      if (number === undefined) numbers.set(value, (number = numbers.size));
      previous = value;
      previousNumber = number;
    }
    indexes[i] = previousNumber;
  }
  writer.strings([...numbers.keys()]);
  writer.int32s(indexes);
}

/** Reads what {@link writeTable} wrote, as the value at each index; equal values come back as the same string. */
function tableOf(reader: SnapshotReader, count: number, what: string): (index: number) => string | undefined {
  const distinct = reader.presentStrings();
  const indexes = reader.int32s();
  if (indexes.length !== count) throw new SnapshotCorruptError(`${indexes.length} values of ${what} for ${count} items`);
  for (const index of indexes) if (index < -1 || index >= distinct.length) throw new SnapshotCorruptError(`${what} ${index} of ${distinct.length}`);
  return (index) => distinct[indexes[index]!];
}

function cursorOf(reader: SnapshotReader, count: number, what: string): StringCursor {
  const cursor = reader.stringCursor();
  if (cursor.count !== count) throw new SnapshotCorruptError(`${cursor.count} values of ${what} for ${count} items`);
  return cursor;
}

function mapDefined<T, U>(value: T | undefined, map: (value: T) => U): U | undefined {
  return value === undefined ? undefined : map(value);
}

import type { Activity, ActivityReference, FeedId, TimelineItem } from '@feedmill/contracts';
import { SnapshotCorruptError } from './snapshot-file.js';
import type { SnapshotReader, SnapshotWriter } from './snapshot-sections.js';

const ACTIVITY = 0;
const REFERENCE = 1;

/**
 * Writes activities and references as columns: one strings section per field, the fields
 * few values repeat in (feed, actor, verb) as a table of distinct strings and an index per
 * item, and `extra` as JSON text.
 */
export function writeItems(writer: SnapshotWriter, items: readonly TimelineItem[]): void {
  const kinds = new Uint8Array(items.length);
  const activity = (item: TimelineItem): Activity | undefined => ('verb' in item ? item : undefined);
  for (let i = 0; i < items.length; i++) kinds[i] = 'verb' in items[i]! ? ACTIVITY : REFERENCE;
  writer.uint8s(kinds);
  writer.strings(items.map((item) => item.id));
  writeTable(writer, items.map((item) => item.feed));
  writer.strings(items.map((item) => item.time));
  writer.strings(items.map((item) => item.bumpedAt));
  writeTable(writer, items.map((item) => activity(item)?.actor));
  writeTable(writer, items.map((item) => activity(item)?.verb));
  writer.strings(items.map((item) => activity(item)?.object));
  writer.strings(items.map((item) => activity(item)?.foreignId));
  writer.strings(items.map((item) => mapDefined(activity(item)?.extra, (extra) => JSON.stringify(extra))));
}

/**
 * Reads what {@link writeItems} wrote: objects with their fields in the order the log's own
 * decode gives them, so that they serialize the same.
 */
export function readItems(reader: SnapshotReader): TimelineItem[] {
  const kinds = reader.uint8s();
  const count = kinds.length;
  const ids = column(reader.strings(), count, 'id');
  const feeds = readTable(reader, count, 'feed');
  const times = column(reader.strings(), count, 'time');
  const bumps = column(reader.strings(), count, 'bumpedAt');
  const actors = readTable(reader, count, 'actor');
  const verbs = readTable(reader, count, 'verb');
  const objects = column(reader.strings(), count, 'object');
  const foreignIds = column(reader.strings(), count, 'foreignId');
  const extras = column(reader.strings(), count, 'extra');
  const items = new Array<TimelineItem>(count);
  for (let i = 0; i < count; i++) {
    const id = ids[i];
    const feed = feeds[i] as FeedId | undefined;
    const time = times[i];
    if (id === undefined || feed === undefined || time === undefined) throw new SnapshotCorruptError(`item ${i} has no id, feed or time`);
    const bumpedAt = bumps[i];
    if (kinds[i] === REFERENCE) {
      const reference: ActivityReference = { id, feed, time };
      if (bumpedAt !== undefined) reference.bumpedAt = bumpedAt;
      items[i] = reference;
      continue;
    }
    const actor = actors[i];
    const verb = verbs[i];
    const object = objects[i];
    if (kinds[i] !== ACTIVITY || actor === undefined || verb === undefined || object === undefined) throw new SnapshotCorruptError(`item ${i} is neither a whole activity nor a reference`);
    const activity: Activity = { id, feed, actor, verb, object, time };
    const foreignId = foreignIds[i];
    if (foreignId !== undefined) activity.foreignId = foreignId;
    const extra = extras[i];
    if (extra !== undefined) activity.extra = JSON.parse(extra) as Record<string, unknown>;
    if (bumpedAt !== undefined) activity.bumpedAt = bumpedAt;
    items[i] = activity;
  }
  return items;
}

/** Strings few distinct values repeat in: the distinct ones once, and each value's index among them (-1 for none). */
export function writeTable(writer: SnapshotWriter, values: ReadonlyArray<string | undefined>): void {
  const numbers = new Map<string, number>();
  const indexes = new Int32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const value = values[i];
    if (value === undefined) {
      indexes[i] = -1;
      continue;
    }
    let number = numbers.get(value);
    if (number === undefined) numbers.set(value, (number = numbers.size));
    indexes[i] = number;
  }
  writer.strings([...numbers.keys()]);
  writer.int32s(indexes);
}

/** Reads what {@link writeTable} wrote; equal values come back as the same string. */
export function readTable(reader: SnapshotReader, count: number, what: string): Array<string | undefined> {
  const distinct = reader.presentStrings();
  const indexes = reader.int32s();
  if (indexes.length !== count) throw new SnapshotCorruptError(`${indexes.length} values of ${what} for ${count} items`);
  const values = new Array<string | undefined>(count);
  for (let i = 0; i < count; i++) {
    const index = indexes[i]!;
    if (index < -1 || index >= distinct.length) throw new SnapshotCorruptError(`${what} ${index} of ${distinct.length}`);
    if (index >= 0) values[i] = distinct[index];
  }
  return values;
}

function column(values: Array<string | undefined>, count: number, what: string): Array<string | undefined> {
  if (values.length !== count) throw new SnapshotCorruptError(`${values.length} values of ${what} for ${count} items`);
  return values;
}

function mapDefined<T, U>(value: T | undefined, map: (value: T) => U): U | undefined {
  return value === undefined ? undefined : map(value);
}

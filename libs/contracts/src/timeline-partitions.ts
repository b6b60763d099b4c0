import type { FeedId } from './feeds.js';
import type { DeliverRequest, TimelineDelivery } from './messages.js';
import { subjects } from './wire.js';

/** The most partitions timelines may be split into. */
export const MAX_TIMELINE_PARTITIONS = 1024;

const FNV_OFFSET_BASIS = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * The partition of a reader's timeline among `partitions`: FNV-1a (32 bits) of the feed id,
 * modulo the count. Feed ids are ASCII (`feedIdSchema`), so hashing their character codes
 * hashes their bytes. Every process computes it alike (the gateway to route a read, fan-out
 * to split a delivery, timeline to know what it holds), so it must never change: a changed
 * function would send readers to partitions that do not hold them.
 */
export function timelinePartitionOf(feed: FeedId | string, partitions: number): number {
  if (partitions <= 1) return 0;
  let hash = FNV_OFFSET_BASIS;
  for (let index = 0; index < feed.length; index++) {
    hash ^= feed.charCodeAt(index);
    hash = Math.imul(hash, FNV_PRIME);
  }
  return (hash >>> 0) % partitions;
}

/** The timeline subjects a partition answers on a subject of its own. */
export type PartitionedSubject =
  | typeof subjects.timeline.read
  | typeof subjects.timeline.readWritten
  | typeof subjects.timeline.readGroups
  | typeof subjects.timeline.mark
  | typeof subjects.timeline.hide
  | typeof subjects.timeline.hidden
  | typeof subjects.timeline.deliver
  | typeof subjects.timeline.reach
  | typeof subjects.timeline.status
  | typeof subjects.timeline.rebuild
  | typeof subjects.timeline.rebuildStatus
  | typeof subjects.timeline.watch
  | typeof subjects.timeline.renewWatches
  | typeof subjects.timeline.unwatch;

export const partitionedSubjects: readonly PartitionedSubject[] = [
  subjects.timeline.read,
  subjects.timeline.readWritten,
  subjects.timeline.readGroups,
  subjects.timeline.mark,
  subjects.timeline.hide,
  subjects.timeline.hidden,
  subjects.timeline.deliver,
  subjects.timeline.reach,
  subjects.timeline.status,
  subjects.timeline.rebuild,
  subjects.timeline.rebuildStatus,
  subjects.timeline.watch,
  subjects.timeline.renewWatches,
  subjects.timeline.unwatch,
];

/** The NATS subject of `subject` for one partition: `feed.timeline.read` of partition 3 is `feed.timeline.p3.read`. */
export function partitionSubject(subject: PartitionedSubject, partition: number): string {
  const cut = subject.lastIndexOf('.');
  return `${subject.slice(0, cut)}.p${partition}${subject.slice(cut)}`;
}

/** The reader a delivery is for (the first, for a delivery to many), if any. */
function readerOf(delivery: TimelineDelivery): FeedId | undefined {
  return 'readers' in delivery ? delivery.readers[0] : delivery.reader;
}

/**
 * The partition a delivery request goes to, from its first reader: fan-out only sends a
 * partition requests whose readers are all its own. A request with no reader (one that only
 * moves the position) says nothing of its partition: `undefined`.
 */
export function partitionOfDeliveries(request: DeliverRequest, partitions: number): number | undefined {
  for (const delivery of request.deliveries) {
    const reader = readerOf(delivery);
    if (reader !== undefined) return timelinePartitionOf(reader, partitions);
  }
  return undefined;
}

/**
 * Deliveries shared out by the partition of their readers: a delivery to many readers is cut
 * into one per partition that has any; one to a single reader goes to that reader's. Each
 * partition's list keeps the order of `deliveries`.
 */
export function splitDeliveriesByPartition(deliveries: readonly TimelineDelivery[], partitions: number): Map<number, TimelineDelivery[]> {
  const parts = new Map<number, TimelineDelivery[]>();
  const partOf = (partition: number) => {
    let part = parts.get(partition);
    if (!part) parts.set(partition, (part = []));
    return part;
  };
  for (const delivery of deliveries) {
    if (delivery.kind === 'erase') {
      // An erasure reaches every timeline, whatever its partition.
      for (let partition = 0; partition < partitions; partition++) partOf(partition).push(delivery);
      continue;
    }
    if (!('readers' in delivery)) {
      partOf(timelinePartitionOf(delivery.reader, partitions)).push(delivery);
      continue;
    }
    const readers = new Map<number, FeedId[]>();
    for (const reader of delivery.readers) {
      const partition = timelinePartitionOf(reader, partitions);
      const some = readers.get(partition);
      if (some) some.push(reader);
      else readers.set(partition, [reader]);
    }
    for (const [partition, some] of readers) partOf(partition).push({ ...delivery, readers: some });
  }
  return parts;
}

/**
 * How timelines are split into partitions: how many, and where a reader's timeline is.
 * With one partition (the default) nothing is routed: every timeline subject is the plain one.
 */
export class TimelinePartitioning {
  /** Every partition's number, in order. */
  readonly all: readonly number[];

  /** @param count - how many partitions; 1 (the default) for none. */
  constructor(readonly count = 1) {
    if (!Number.isInteger(count) || count < 1 || count > MAX_TIMELINE_PARTITIONS) throw new RangeError(`timeline partitions must be a whole number from 1 to ${MAX_TIMELINE_PARTITIONS}, not ${count}`);
    this.all = Array.from({ length: count }, (_, partition) => partition);
  }

  /** Whether timelines are partitioned at all (more than one partition). */
  get partitioned(): boolean {
    return this.count > 1;
  }

  partitionOf(reader: FeedId): number {
    return timelinePartitionOf(reader, this.count);
  }

  /** Where a request about `reader` goes: its partition's subject, or the plain one when there is a single partition. */
  routeOf(reader: FeedId): { partition: number } | undefined {
    return this.partitioned ? { partition: this.partitionOf(reader) } : undefined;
  }

  /** Where a request to `partition` goes (nothing to route with a single partition). */
  routeTo(partition: number): { partition: number } | undefined {
    return this.partitioned ? { partition } : undefined;
  }
}

/**
 * The partitions a timeline process owns when each of `replicas` processes is given a fixed
 * index: those whose number modulo `replicas` is `index`.
 */
export function staticPartitionsOf(partitions: number, replicas: number, index: number): number[] {
  const owned: number[] = [];
  for (let partition = index; partition < partitions; partition += replicas) owned.push(partition);
  return owned;
}

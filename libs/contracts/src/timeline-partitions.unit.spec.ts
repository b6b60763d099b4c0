import type { FeedId } from './feeds.js';
import type { Activity } from './activity.js';
import type { TimelineDelivery } from './messages.js';
import { subjects } from './wire.js';
import {
  partitionOfDeliveries,
  partitionSubject,
  splitDeliveriesByPartition,
  staticPartitionsOf,
  timelinePartitionOf,
  TimelinePartitioning,
} from './timeline-partitions.js';

const readers = (count: number): FeedId[] => Array.from({ length: count }, (_, index) => `timeline:reader-${index}` as FeedId);
const activity: Activity = { id: 'a-1', feed: 'user:bob', actor: 'bob', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' };

describe('timeline partition of a reader', () => {
  it('is FNV-1a of the feed id modulo the count, the same in every process and release', () => {
    // FNV-1a 32 of "a" is 0xe40c292c, of "foobar" 0xbf9cf968 (the published test vectors).
    expect(timelinePartitionOf('a', 2 ** 31)).toBe(0xe40c292c % 2 ** 31);
    expect(timelinePartitionOf('a', 1000)).toBe(0xe40c292c % 1000);
    expect(timelinePartitionOf('foobar', 7)).toBe(0xbf9cf968 % 7);
    expect(readers(50).map((reader) => timelinePartitionOf(reader, 4))).toEqual(readers(50).map((reader) => timelinePartitionOf(reader, 4)));
  });

  it('is 0 for everyone with a single partition', () => {
    expect(new Set(readers(100).map((reader) => timelinePartitionOf(reader, 1)))).toEqual(new Set([0]));
  });

  it('spreads readers evenly: every partition within 10% of its share', () => {
    for (const partitions of [2, 4, 7, 16]) {
      const counts = new Array<number>(partitions).fill(0);
      const all = readers(40_000);
      for (const reader of all) counts[timelinePartitionOf(reader, partitions)]!++;
      const share = all.length / partitions;
      for (const count of counts) expect(Math.abs(count - share) / share).toBeLessThan(0.1);
    }
  });
});

describe('partition subjects', () => {
  it('put the partition before the last token', () => {
    expect(partitionSubject(subjects.timeline.deliver, 3)).toBe('feed.timeline.p3.deliver');
    expect(partitionSubject(subjects.timeline.read, 0)).toBe('feed.timeline.p0.read');
  });

  it('route nothing with a single partition, and by the reader otherwise', () => {
    expect(new TimelinePartitioning().routeOf('timeline:alice')).toBeUndefined();
    expect(new TimelinePartitioning(1).routeTo(0)).toBeUndefined();
    expect(new TimelinePartitioning(7).routeOf('user:foobar')).toEqual({ partition: timelinePartitionOf('user:foobar', 7) });
    expect(() => new TimelinePartitioning(0)).toThrow(RangeError);
  });
});

describe('deliveries split by partition', () => {
  it('send an erasure to every partition: the erased feed is in readers of all of them', () => {
    const parts = splitDeliveriesByPartition([{ kind: 'erase', reader: 'user:bob' }], 3);
    expect([...parts.entries()].sort(([a], [b]) => a - b)).toEqual([0, 1, 2].map((partition) => [partition, [{ kind: 'erase', reader: 'user:bob' }]]));
  });

  it('cut a delivery to many readers into one per partition, each with only its readers, in order', () => {
    const many = readers(200);
    const deliveries: TimelineDelivery[] = [
      { kind: 'insert', readers: many, activity },
      { kind: 'unfollow', reader: many[5]!, target: 'user:bob' },
      { kind: 'remove', readers: many.slice(0, 3), id: 'a-0' },
    ];
    const parts = splitDeliveriesByPartition(deliveries, 4);
    expect([...parts.keys()].sort()).toEqual([0, 1, 2, 3]);
    const inserted: FeedId[] = [];
    for (const [partition, part] of parts) {
      for (const delivery of part) {
        const own = 'readers' in delivery ? delivery.readers : [delivery.reader];
        for (const reader of own) expect(timelinePartitionOf(reader, 4)).toBe(partition);
        if (delivery.kind === 'insert') inserted.push(...delivery.readers);
      }
      expect(partitionOfDeliveries({ after: 0, position: 1, deliveries: part }, 4)).toBe(partition);
    }
    expect(inserted.sort()).toEqual([...many].sort());
    const withUnfollow = parts.get(timelinePartitionOf(many[5]!, 4))!;
    expect(withUnfollow.map((delivery) => delivery.kind)).toEqual(expect.arrayContaining(['insert', 'unfollow']));
    expect(withUnfollow.findIndex((d) => d.kind === 'insert')).toBeLessThan(withUnfollow.findIndex((d) => d.kind === 'unfollow'));
  });

  it('say nothing of a request with no reader', () => {
    expect(partitionOfDeliveries({ after: 0, position: 1, deliveries: [] }, 4)).toBeUndefined();
  });
});

describe('static partitions of a replica', () => {
  it('give each partition to exactly one of the replicas', () => {
    const owned = [0, 1, 2].map((index) => staticPartitionsOf(8, 3, index));
    expect(owned).toEqual([
      [0, 3, 6],
      [1, 4, 7],
      [2, 5],
    ]);
  });
});

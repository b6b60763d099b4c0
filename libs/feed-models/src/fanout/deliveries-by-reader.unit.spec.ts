import type { Activity, FeedId, TimelineDelivery } from '@feedmill/contracts';
import { deliveriesByReader } from './deliveries-by-reader.js';

const activity = (id: string): Activity => ({ id, feed: 'user:a', actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' });
const r = 'timeline:r' as FeedId;
const s = 'timeline:s' as FeedId;
const t = 'timeline:t' as FeedId;

describe('deliveriesByReader', () => {
  it('gives each reader its own deliveries in the request’s order, readers in the order they first appear', () => {
    const deliveries: TimelineDelivery[] = [
      { kind: 'insert', readers: [s, r], activity: activity('a1'), eventPosition: 4 },
      { kind: 'follow', reader: t, target: 'user:a', recent: [activity('a1')], exhausted: true, eventPosition: 5 },
      { kind: 'remove', readers: [r], id: 'a0', eventPosition: 6 },
      { kind: 'unfollow', reader: s, target: 'user:b', eventPosition: 7 },
      { kind: 'bump', readers: [t, s], activity: activity('a1'), eventPosition: 8 },
      { kind: 'update', readers: [r], activity: activity('a1') },
    ];
    const byReader = deliveriesByReader(deliveries);
    expect([...byReader.keys()]).toEqual([s, r, t]);
    expect(byReader.get(s)).toEqual([
      { kind: 'insert', readers: [s], activity: activity('a1'), eventPosition: 4 },
      { kind: 'unfollow', reader: s, target: 'user:b', eventPosition: 7 },
      { kind: 'bump', readers: [s], activity: activity('a1'), eventPosition: 8 },
    ]);
    expect(byReader.get(r)).toEqual([
      { kind: 'insert', readers: [r], activity: activity('a1'), eventPosition: 4 },
      { kind: 'remove', readers: [r], id: 'a0', eventPosition: 6 },
      { kind: 'update', readers: [r], activity: activity('a1') },
    ]);
    expect(byReader.get(t)!.map((d) => `${d.kind} ${d.eventPosition}`)).toEqual(['follow 5', 'bump 8']);
  });

  it('leaves the request’s deliveries as they were', () => {
    const insert: TimelineDelivery = { kind: 'insert', readers: [r, s], activity: activity('a1') };
    deliveriesByReader([insert]);
    expect(insert.readers).toEqual([r, s]);
  });

  it('has no reader for a request that delivers nothing (one that only moves the position)', () => {
    expect(deliveriesByReader([]).size).toBe(0);
    expect(deliveriesByReader([{ kind: 'insert', readers: [], activity: activity('a1') }]).size).toBe(0);
  });
});

import type { Activity, FeedEvent, PositionedEvent } from '@feedmill/contracts';
import { postsInTimelineOrder } from './warm-posts.js';

const added = (position: number, id: string, time: string, producer: string, object: string): PositionedEvent => ({
  position,
  event: { type: 'ActivityAdded', data: { activity: { id, feed: `user:${producer}`, actor: producer, verb: 'post', object, time } satisfies Activity } } as FeedEvent,
});
const followed = (position: number): PositionedEvent => ({
  position,
  event: { type: 'FeedFollowed', data: { follower: 'timeline:r1', target: 'user:p1', time: '2026-05-01T00:00:00.000Z' } } as FeedEvent,
});

describe('postsInTimelineOrder', () => {
  it('takes the posts of a span of the log, in the order timelines show them: time, then id', () => {
    const events = [
      followed(1),
      followed(2),
      added(3, 'b', '2026-05-01T00:00:00.002Z', 'p1', 'object:1'),
      added(4, 'c', '2026-05-01T00:00:00.001Z', 'p2', 'object:2'),
      added(5, 'a', '2026-05-01T00:00:00.002Z', 'p3', 'object:3'),
      added(6, 'd', '2026-05-01T00:00:00.003Z', 'p4', 'object:4'),
    ];
    expect(postsInTimelineOrder(events, 2, 5)).toEqual([
      { producer: 'p2', actor: 'p2', verb: 'post', object: 'object:2' },
      { producer: 'p3', actor: 'p3', verb: 'post', object: 'object:3' },
      { producer: 'p1', actor: 'p1', verb: 'post', object: 'object:1' },
    ]);
  });

  it('finds nothing in a span without posts', () => {
    expect(postsInTimelineOrder([followed(1), added(2, 'a', '2026-05-01T00:00:00.000Z', 'p1', 'object:1')], 0, 1)).toEqual([]);
  });
});

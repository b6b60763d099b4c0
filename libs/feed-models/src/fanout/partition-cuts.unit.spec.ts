import type { FeedEvent, FeedId, PositionedEvent } from '@feedmill/contracts';
import { cutAtPartitionPositions } from './partition-cuts.js';

const follow = (follower: string): FeedEvent => ({ type: 'FeedFollowed', data: { follower: follower as FeedId, target: 'user:a', time: 't' } });
const at = (...positions: number[]): PositionedEvent[] => positions.map((position) => ({ position, event: follow(`timeline:r${position}`) }));
const shape = (segments: ReturnType<typeof cutAtPartitionPositions>) => segments.map((segment) => ({ at: segment.events.map((e) => e.position), to: segment.to }));

describe('cutAtPartitionPositions', () => {
  it('leaves a batch whole when every partition stands at its start or past its end', () => {
    expect(shape(cutAtPartitionPositions(at(11, 12, 13), 10, 13, [10, 10, 13, 40]))).toEqual([{ at: [11, 12, 13], to: 13 }]);
  });

  it('cuts where a partition stands inside the batch, once per position, in order', () => {
    expect(shape(cutAtPartitionPositions(at(11, 12, 13, 15), 10, 16, [10, 13, 12, 13]))).toEqual([
      { at: [11, 12], to: 12 },
      { at: [13], to: 13 },
      { at: [15], to: 16 },
    ]);
  });

  it('keeps a segment with no events when a partition stands between two of them, so that it still moves', () => {
    expect(shape(cutAtPartitionPositions(at(11, 15), 10, 15, [10, 13]))).toEqual([
      { at: [11], to: 13 },
      { at: [15], to: 15 },
    ]);
  });
});

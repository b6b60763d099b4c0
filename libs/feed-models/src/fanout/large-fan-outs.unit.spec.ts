import type { Activity, FeedEvent, FeedId, PositionedEvent, TimelineDelivery } from '@feedmill/contracts';
import { chunkDeliveries, DELIVERY_BUDGET_BYTES, MAX_READERS_PER_DELIVERY } from './delivery-chunks.js';
import { planDeliveries, type PlanLookups } from './delivery-plan.js';
import { FollowerIndex } from './follower-index.js';
import { deliveryJobs, isLargeDelivery, segmentAroundLargeFanOuts } from './large-fan-outs.js';
import { seededRandom } from '../testing.js';

const activity = (id: string, feed: string): Activity => ({ id, feed: feed as FeedId, actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' });
const follow = (follower: string, target: string): FeedEvent => ({ type: 'FeedFollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't' } });
const unfollow = (follower: string, target: string): FeedEvent => ({ type: 'FeedUnfollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't' } });
const add = (id: string, feed: string): FeedEvent => ({ type: 'ActivityAdded', data: { activity: activity(id, feed) } });
const remove = (id: string, feed: string): FeedEvent => ({ type: 'ActivityRemoved', data: { id, feed: feed as FeedId, time: 't' } });
const bump = (id: string, feed: string): FeedEvent => ({ type: 'ActivityBumped', data: { id, feed: feed as FeedId, time: 't' } });
const update = (id: string, feed: string): FeedEvent => ({ type: 'ActivityUpdated', data: { id, feed: feed as FeedId, time: 't', object: 'edited' } });
const readers = (n: number) => Array.from({ length: n }, (_, i) => `timeline:r${i}` as FeedId);

function positioned(events: FeedEvent[], from: number): PositionedEvent[] {
  return events.map((event, i) => ({ position: from + i, event }));
}

/** user:big has 10 followers, user:small 1: a threshold of 5 makes only user:big's events large. */
const counts: Record<string, number> = { 'user:big': 10, 'user:small': 1 };
const followerCount = (feed: FeedId) => counts[feed] ?? 0;
const withSortedReaders = (delivery: TimelineDelivery) => ('readers' in delivery ? { ...delivery, readers: [...delivery.readers].sort() } : delivery);
const positionsOf = (segments: ReturnType<typeof segmentAroundLargeFanOuts>) => segments.map((s) => ({ at: s.events.map((e) => e.position), to: s.to }));

describe('segmentAroundLargeFanOuts', () => {
  it('cuts a large post out of its batch, the events before it ending just before it', () => {
    const events = positioned([follow('timeline:x', 'user:small'), add('s1', 'user:small'), add('b1', 'user:big'), unfollow('timeline:x', 'user:big'), add('s2', 'user:small')], 11);
    expect(positionsOf(segmentAroundLargeFanOuts(events, 15, followerCount, 5))).toEqual([
      { at: [11, 12], to: 12 },
      { at: [13], to: 13 },
      { at: [14, 15], to: 15 },
    ]);
  });

  it('cuts removals and adjacent large events apart, and ends at the batch’s end past its last feed event', () => {
    const events = positioned([add('b1', 'user:big'), remove('b0', 'user:big')], 20);
    // Positions 22 and 23 held events that are not feed events: the target must still reach 23.
    expect(positionsOf(segmentAroundLargeFanOuts(events, 23, followerCount, 5))).toEqual([
      { at: [20], to: 20 },
      { at: [21], to: 21 },
      { at: [], to: 23 },
    ]);
  });

  it('leaves a batch without large events whole, and gives an empty batch one empty segment', () => {
    const events = positioned([add('s1', 'user:small'), follow('timeline:x', 'user:big')], 5);
    expect(positionsOf(segmentAroundLargeFanOuts(events, 6, followerCount, 5))).toEqual([{ at: [5, 6], to: 6 }]);
    expect(positionsOf(segmentAroundLargeFanOuts([], 9, followerCount, 5))).toEqual([{ at: [], to: 9 }]);
    // At the threshold a feed is not large yet: it takes more readers than minReaders.
    expect(positionsOf(segmentAroundLargeFanOuts(events, 6, followerCount, 10))).toEqual([{ at: [5, 6], to: 6 }]);
  });

  it('keeps the items of an import together, at their one position, whichever feeds they are of', () => {
    // An import at 41 holds posts of user:big and user:small, as ActivitiesAdded decodes to.
    const events = [
      ...positioned([add('s0', 'user:small')], 40),
      { position: 41, event: add('b1', 'user:big') },
      { position: 41, event: add('s1', 'user:small') },
      { position: 41, event: add('b2', 'user:big') },
      ...positioned([add('b3', 'user:big')], 42),
    ];
    expect(positionsOf(segmentAroundLargeFanOuts(events, 42, followerCount, 5))).toEqual([
      { at: [40, 41, 41, 41], to: 41 },
      { at: [42], to: 42 },
    ]);
  });

  it('cuts bumps and updates out as it does posts', () => {
    const events = positioned([bump('b0', 'user:big'), update('b0', 'user:big'), bump('s0', 'user:small')], 30);
    expect(positionsOf(segmentAroundLargeFanOuts(events, 32, followerCount, 5))).toEqual([
      { at: [30], to: 30 },
      { at: [31], to: 31 },
      { at: [32], to: 32 },
    ]);
  });

  it('plans, segment after segment, the deliveries that planning the whole batch would, imports included', async () => {
    const random = seededRandom(7);
    const feeds = ['user:a', 'user:b', 'user:c'];
    const lookups: PlanLookups = {
      recent: async (feed) => [activity(`old-${feed}`, feed)],
      isTimeline: (feed) => feed.startsWith('timeline:'),
      capOf: () => 10,
      orderOf: () => 'time',
      follows: async () => true,
      positions: async (ids) => ids.map(() => null),
      activities: async (ids) => ids.map((id) => ({ ...activity(id, 'user:a'), object: 'as content holds it' })),
    };
    for (let round = 0; round < 20; round++) {
      // A graph and a batch of follows, unfollows, posts and removals drawn at random.
      const history: FeedEvent[] = [];
      for (let i = 0; i < 30; i++) history.push(follow(`timeline:r${Math.floor(random() * 12)}`, feeds[Math.floor(random() * 3)]!));
      const batch: FeedEvent[] = [];
      for (let i = 0; i < 25; i++) {
        const feed = feeds[Math.floor(random() * 3)]!;
        const reader = `timeline:r${Math.floor(random() * 12)}`;
        const pick = random();
        const earlier = `p${round}-${i - 1}`;
        batch.push(
          pick < 0.25 ? follow(reader, feed)
          : pick < 0.4 ? unfollow(reader, feed)
          : pick < 0.7 ? add(`p${round}-${i}`, feed)
          : pick < 0.8 ? remove(earlier, feed)
          : pick < 0.9 ? bump(earlier, feed)
          : update(earlier, feed),
        );
      }
      const indexAt = () => {
        const index = new FollowerIndex();
        index.advance(positioned(history, 1), history.length);
        return index;
      };
      // Some posts come in imports: a post right after a post may share its position.
      let position = history.length;
      const events = batch.map((event, i) => {
        const joinsImport = i > 0 && event.type === 'ActivityAdded' && batch[i - 1]!.type === 'ActivityAdded' && random() < 0.5;
        if (!joinsImport) position++;
        return { position, event };
      });
      const to = position;
      const whole = await planDeliveries(events, indexAt(), lookups);

      const index = indexAt();
      const threshold = Math.floor(random() * 6);
      const bySegment: TimelineDelivery[] = [];
      for (const segment of segmentAroundLargeFanOuts(events, to, (feed) => index.followerCount(feed), threshold)) {
        // Each segment moves the target on: one ending where it stands would not be delivered.
        expect(segment.to).toBeGreaterThan(index.position);
        bySegment.push(...(await planDeliveries(segment.events, index, lookups)));
        index.advance(segment.events, segment.to);
      }
      // Readers may come in another order (a follow within a batch is listed last): a delivery's readers are a set.
      expect(bySegment.map(withSortedReaders)).toEqual(whole.map(withSortedReaders));
      expect(index.position).toBe(to);
    }
  });
});

describe('deliveryJobs', () => {
  const post = activity('p', 'user:big');

  it('splits a large delivery into fenced requests as fan-out sends them, which hold every reader once', () => {
    const all = readers(MAX_READERS_PER_DELIVERY * 7 + 1);
    const jobs = deliveryJobs({ kind: 'insert', readers: all, activity: post }, 41);
    expect(jobs.length).toBeGreaterThan(1);
    expect(jobs.every((job) => job.after === 41 && job.position === 41)).toBe(true);
    // As large as the requests fan-out sends itself, each under the byte budget.
    expect(jobs.map((job) => job.deliveries)).toEqual(chunkDeliveries([{ kind: 'insert', readers: all, activity: post }]));
    for (const job of jobs) expect(JSON.stringify(job).length).toBeLessThan(DELIVERY_BUDGET_BYTES);
    const pieces = jobs.flatMap((job) => job.deliveries) as Array<Extract<TimelineDelivery, { kind: 'insert' }>>;
    expect(Math.max(...pieces.map((piece) => piece.readers.length))).toBeLessThanOrEqual(MAX_READERS_PER_DELIVERY);
    expect(pieces.flatMap((piece) => piece.readers)).toEqual(all);
    expect(pieces.every((piece) => piece.activity === post)).toBe(true);
  });

  it('keeps a removal’s, a bump’s and an update’s kind', () => {
    const [removal] = deliveryJobs({ kind: 'remove', readers: readers(3), id: 'p' }, 7);
    expect(removal).toEqual({ after: 7, position: 7, deliveries: [{ kind: 'remove', readers: readers(3), id: 'p' }] });
    const [bump] = deliveryJobs({ kind: 'bump', readers: readers(2), activity: post }, 7);
    expect(bump!.deliveries).toEqual([{ kind: 'bump', readers: readers(2), activity: post }]);
    const [update] = deliveryJobs({ kind: 'update', readers: readers(2), activity: post }, 7);
    expect(update!.deliveries).toEqual([{ kind: 'update', readers: readers(2), activity: post }]);
  });
});

describe('isLargeDelivery', () => {
  it('counts readers, and never calls a follow or an unfollow large', () => {
    const post = activity('p', 'user:big');
    expect(isLargeDelivery({ kind: 'insert', readers: readers(6), activity: post }, 5)).toBe(true);
    expect(isLargeDelivery({ kind: 'insert', readers: readers(5), activity: post }, 5)).toBe(false);
    expect(isLargeDelivery({ kind: 'follow', reader: 'timeline:r', target: 'user:big', recent: [], exhausted: true }, 0)).toBe(false);
    expect(isLargeDelivery({ kind: 'unfollow', reader: 'timeline:r', target: 'user:big' }, 0)).toBe(false);
  });
});

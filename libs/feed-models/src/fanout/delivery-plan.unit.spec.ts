import type { Activity, DeliverRequest, FeedEvent, FeedId, PositionedEvent, TimelineDelivery } from '@feedmill/contracts';
import { planDeliveries, replanAsOfNow, type PlanLookups } from './delivery-plan.js';
import { fanOutBatch } from './fan-out-batch.js';
import { FollowerIndex } from './follower-index.js';

const activity = (id: string, feed: FeedId): Activity => ({ id, feed, actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' });

function recorded(events: FeedEvent[], from = 1): PositionedEvent[] {
  return events.map((event, i) => ({ position: from + i, event }));
}

const follow = (follower: string, target: string): FeedEvent => ({ type: 'FeedFollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't' } });
const unfollow = (follower: string, target: string): FeedEvent => ({ type: 'FeedUnfollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't' } });
const add = (id: string, feed: string): FeedEvent => ({ type: 'ActivityAdded', data: { activity: activity(id, feed as FeedId) } });

/** An index that stands at `position` with timeline:r and timeline:s following user:a, and user:b having posted. */
function followersOfA(position = 9): FollowerIndex {
  const index = new FollowerIndex((follower) => follower.startsWith('timeline:'));
  index.advance(recorded([follow('timeline:r', 'user:a'), follow('timeline:s', 'user:a'), add('b0', 'user:b')]), position);
  return index;
}

/** Lookups with nothing to find: timelines hold 10, by time, and every follow stands. */
const quietLookups: PlanLookups = {
  recent: async () => [],
  isTimeline: (feed) => feed.startsWith('timeline:'),
  capOf: () => 10,
  orderOf: () => 'time',
  follows: async () => true,
  positions: async (ids) => ids.map(() => null),
  activities: async () => [],
};

describe('planDeliveries', () => {
  const calls: string[] = [];
  const lookups: PlanLookups = {
    recent: async (feed, limit, atLeast, atMost, order) => {
      calls.push(`recent ${feed} ${limit} >=${atLeast} <=${atMost} by ${order}`);
      return [activity('old2', feed), activity('old1', feed)];
    },
    isTimeline: (feed) => feed.startsWith('timeline:'),
    capOf: () => 1,
    orderOf: (reader) => (reader.startsWith('hot:') ? 'relevance' : 'time'),
    follows: async () => true,
    positions: async (ids) => ids.map(() => null),
    activities: async (ids) => ids.map((id) => ({ ...activity(id, 'user:a'), bumpedAt: '2026-02-01T00:00:00.000Z' })),
  };

  beforeEach(() => calls.splice(0));

  it('plans an erasure as one delivery to every timeline, and a post to the feed after it reaches none of its former followers', async () => {
    const erased: FeedEvent = { type: 'FeedErased', data: { feed: 'user:a', time: 't' } };
    const deliveries = await planDeliveries(recorded([erased, add('a9', 'user:a')], 10), followersOfA(), lookups);
    expect(deliveries).toEqual([{ kind: 'erase', reader: 'user:a', eventPosition: 10 }]);
  });

  it('plans deliveries in log order, with followers from the index and a backfill for each follow', async () => {
    const events = recorded([
      { type: 'ActivityAdded', data: { activity: activity('a1', 'user:a') } },
      { type: 'FeedFollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
      { type: 'ActivityAdded', data: { activity: activity('a2', 'user:a') } },
      { type: 'ActivityAdded', data: { activity: activity('c1', 'user:c') } },
      { type: 'ActivityRemoved', data: { id: 'a1', feed: 'user:a', time: 't' } },
      { type: 'FeedUnfollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
    ], 10);
    const deliveries = await planDeliveries(events, followersOfA(), lookups);
    expect(deliveries).toEqual([
      { kind: 'insert', readers: ['timeline:r', 'timeline:s'], activity: activity('a1', 'user:a'), eventPosition: 10 },
      { kind: 'follow', reader: 'timeline:t', target: 'user:b', recent: [activity('old2', 'user:b'), activity('old1', 'user:b')], exhausted: false, eventPosition: 11 },
      { kind: 'insert', readers: ['timeline:r', 'timeline:s'], activity: activity('a2', 'user:a'), eventPosition: 12 },
      { kind: 'remove', readers: ['timeline:r', 'timeline:s'], id: 'a1', eventPosition: 14 },
      { kind: 'unfollow', reader: 'timeline:t', target: 'user:b', eventPosition: 15 },
    ]);
    expect(calls).toEqual(['recent user:b 2 >=15 <=11 by time']);
  });

  it('backfills a follow in the reader’s order, not the followed feed’s', async () => {
    const events = recorded([
      { type: 'FeedFollowed', data: { follower: 'hot:t', target: 'user:b', time: 't' } },
      { type: 'FeedFollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
    ]);
    await planDeliveries(events, followersOfA(), { ...lookups, isTimeline: () => true });
    expect(calls.filter((c) => c.startsWith('recent')).sort()).toEqual(['recent user:b 2 >=2 <=1 by relevance', 'recent user:b 2 >=2 <=2 by time']);
  });

  it('fails the batch only once every lookup it started has settled', async () => {
    let activitiesSettled = false;
    const failing: PlanLookups = {
      ...lookups,
      activities: () => new Promise((done) => setTimeout(() => ((activitiesSettled = true), done([])), 50)),
      recent: async () => {
        throw new Error('content is down');
      },
    };
    const events = recorded([
      { type: 'FeedFollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
      { type: 'ActivityBumped', data: { id: 'a1', feed: 'user:a', time: 't' } },
    ]);
    await expect(planDeliveries(events, followersOfA(), failing)).rejects.toThrow('content is down');
    expect({ activitiesSettled }).toEqual({ activitiesSettled: true });
  });

  it('skips follows by feeds that are not timelines', async () => {
    const events = recorded([{ type: 'FeedFollowed', data: { follower: 'user:x', target: 'user:b', time: 't' } }]);
    expect(await planDeliveries(events, followersOfA(), lookups)).toEqual([]);
  });

  it('asks content for no backfill of a feed that never had an activity, as of the follow', async () => {
    const events = recorded([
      follow('timeline:t', 'user:new'),
      add('n1', 'user:new'),
      follow('timeline:u', 'user:new'),
      { type: 'ActivityRemoved', data: { id: 'n1', feed: 'user:new', time: 't' } },
      follow('timeline:v', 'user:new'),
    ], 10);
    const deliveries = await planDeliveries(events, followersOfA(), lookups);
    expect(deliveries.filter((d) => d.kind === 'follow')).toEqual([
      { kind: 'follow', reader: 'timeline:t', target: 'user:new', recent: [], exhausted: true, eventPosition: 10 },
      { kind: 'follow', reader: 'timeline:u', target: 'user:new', recent: [activity('old2', 'user:new'), activity('old1', 'user:new')], exhausted: false, eventPosition: 12 },
      { kind: 'follow', reader: 'timeline:v', target: 'user:new', recent: [activity('old2', 'user:new'), activity('old1', 'user:new')], exhausted: false, eventPosition: 14 },
    ]);
    // Once it has had one, it is asked for (whatever was removed since): here after n1, at 12 and 14.
    expect(calls).toEqual(['recent user:new 2 >=14 <=12 by time', 'recent user:new 2 >=14 <=14 by time']);
  });

  it('reaches the followers as of each event: a follow or unfollow just before a post counts', async () => {
    const index = followersOfA(9);
    const events = recorded([
      add('a1', 'user:a'),
      follow('timeline:t', 'user:a'),
      add('a2', 'user:a'),
      unfollow('timeline:r', 'user:a'),
      { type: 'ActivityRemoved', data: { id: 'a1', feed: 'user:a', time: 't' } },
      unfollow('timeline:s', 'user:a'),
      follow('timeline:r', 'user:a'),
      { type: 'ActivityBumped', data: { id: 'a2', feed: 'user:a', time: 't' } },
    ], 10);
    const readers = (await planDeliveries(events, index, lookups)).flatMap((d) => ('readers' in d ? [`${d.kind} ${d.readers.join(' ')}`] : []));
    expect(readers).toEqual(['insert timeline:r timeline:s', 'insert timeline:r timeline:s timeline:t', 'remove timeline:s timeline:t', 'bump timeline:r timeline:t']);
    // Planning leaves the index as it was: the batch is planned the same if it is retried.
    expect({ position: index.position, followers: index.followersOf('user:a' as FeedId) }).toEqual({ position: 9, followers: ['timeline:r', 'timeline:s'] });
    expect(await planDeliveries(events, index, lookups)).toEqual(await planDeliveries(events, index, lookups));
  });

  it('plans an update for the followers as of the event, with the activity as content holds it now, and none once it is gone', async () => {
    const asked: string[][] = [];
    const now = (id: string): Activity => ({ ...activity(id, 'user:a'), object: 'edited', updatedAt: '2026-02-01T00:00:00.000Z' });
    const content: PlanLookups = { ...lookups, activities: async (ids) => (asked.push([...ids]), ids.filter((id) => id !== 'gone').map(now)) };
    const update = (id: string): FeedEvent => ({ type: 'ActivityUpdated', data: { id, feed: 'user:a', time: 't', object: 'edited' } });
    const events = recorded([update('a1'), follow('timeline:t', 'user:a'), update('a2'), { type: 'ActivityBumped', data: { id: 'a3', feed: 'user:a', time: 't' } }, update('gone')], 10);
    const deliveries = (await planDeliveries(events, followersOfA(), content)).filter((d) => d.kind !== 'follow');
    expect(deliveries).toEqual([
      { kind: 'update', readers: ['timeline:r', 'timeline:s'], activity: now('a1'), eventPosition: 10 },
      { kind: 'update', readers: ['timeline:r', 'timeline:s', 'timeline:t'], activity: now('a2'), eventPosition: 12 },
      { kind: 'bump', readers: ['timeline:r', 'timeline:s', 'timeline:t'], activity: now('a3'), eventPosition: 13 },
    ]);
    // One lookup for every changed activity of the batch.
    expect(asked).toEqual([['a1', 'a2', 'a3', 'gone']]);
  });

  it('plans the same deliveries however the log is cut into batches', async () => {
    let seed = 3;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const log = recorded(
      Array.from({ length: 400 }, (_, i) => {
        const reader = `timeline:r${Math.floor(random() * 6)}`;
        const author = `user:p${Math.floor(random() * 3)}`;
        const dice = random();
        return dice < 0.3 ? follow(reader, author) : dice < 0.45 ? unfollow(reader, author) : add(`x${i}`, author);
      }),
    );
    const planAll = async (batch: number) => {
      const index = new FollowerIndex();
      const deliveries: TimelineDelivery[] = [];
      for (let i = 0; i < log.length; i += batch) {
        const events = log.slice(i, i + batch);
        deliveries.push(...(await planDeliveries(events, index, lookups)));
        index.advance(events, events[events.length - 1]!.position);
      }
      return deliveries.map((d) => ('readers' in d ? { ...d, readers: [...d.readers].sort() } : d));
    };
    const one = await planAll(1);
    expect(one.filter((d) => d.kind === 'insert').length).toBeGreaterThan(100);
    for (const batch of [2, 7, 64, 400]) expect(await planAll(batch)).toEqual(one);
  });
});

describe('bounded and kept edges', () => {
  // The activity's time key is below the bound: only its log position can let it in.
  const since = '2026-06-01T00:00:00.000Z|z';
  const index = new FollowerIndex();
  index.advance(
    recorded([
      { type: 'FeedFollowed', data: { follower: 'hot:r', target: 'user:a', time: 't', since } },
      { type: 'FeedFollowed', data: { follower: 'timeline:t', target: 'user:a', time: 't', since } },
      follow('hot:k', 'user:a'),
      { type: 'FeedUnfollowed', data: { follower: 'hot:k', target: 'user:a', time: 't', keepHistory: true } },
      follow('hot:w', 'user:a'),
    ]),
    5,
  );
  const lookupsAddedAt = (position: number): PlanLookups => ({
    recent: async (feed, _limit, _atLeast, _atMost, _order, bound) => [activity(`${feed} since ${bound ?? '-'}`, feed)],
    isTimeline: () => true,
    capOf: () => 10,
    orderOf: (reader) => (reader.startsWith('hot:') ? 'relevance' : 'time'),
    follows: async () => true,
    positions: async (ids) => ids.map(() => position),
    activities: async (ids) => ids.map((id) => ({ ...activity(id, 'user:a'), bumpedAt: '2026-02-01T00:00:00.000Z' })),
  });
  const readersOf = async (event: FeedEvent, addedAt: number) => (await planDeliveries(recorded([event], 6), index, lookupsAddedAt(addedAt))).map((d) => ('readers' in d ? [...d.readers].sort() : []));

  it('takes a bump to a relevancy reader only where its edge’s bound lets the activity in, by log position', async () => {
    const bump: FeedEvent = { type: 'ActivityBumped', data: { id: 'x', feed: 'user:a', time: 't' } };
    // Added before every follow: out of the bounded follow, in the kept history.
    expect(await readersOf(bump, 0)).toEqual([['hot:k', 'hot:w', 'timeline:t']]);
    // Added after the follows and the unfollow: in the bounded follow, out of the kept history.
    expect(await readersOf(bump, 5)).toEqual([['hot:r', 'hot:w', 'timeline:t']]);
  });

  it('takes removals and updates to the readers keeping the history, posts to followers only, and a bounded follow’s backfill within its bound', async () => {
    expect(await readersOf({ type: 'ActivityRemoved', data: { id: 'x', feed: 'user:a', time: 't' } }, 0)).toEqual([['hot:k', 'hot:r', 'hot:w', 'timeline:t']]);
    expect(await readersOf({ type: 'ActivityUpdated', data: { id: 'x', feed: 'user:a', time: 't', object: 'o2' } }, 0)).toEqual([['hot:k', 'hot:r', 'hot:w', 'timeline:t']]);
    expect(await readersOf(add('y', 'user:a'), 6)).toEqual([['hot:r', 'hot:w', 'timeline:t']]);
    const deliveries = await planDeliveries(recorded([add('y', 'user:b'), { type: 'FeedFollowed', data: { follower: 'hot:n', target: 'user:b', time: 't', since } }], 6), index, lookupsAddedAt(0));
    expect(deliveries).toHaveLength(1);
    expect(deliveries[0]).toMatchObject({ kind: 'follow', reader: 'hot:n', target: 'user:b', since, recent: [{ id: `user:b since ${since}` }] });
  });
});

describe('replanAsOfNow', () => {
  it('plans as the log stands at the head, and names the event’s own position in every delivery', async () => {
    const asOf: number[] = [];
    const lookups: PlanLookups = {
      ...quietLookups,
      activities: async (ids, atLeast) => (asOf.push(atLeast), ids.map((id) => ({ ...activity(id, 'user:a'), object: 'now' }))),
    };
    const [posted] = recorded([add('a1', 'user:a')], 7);
    const deliveries = await replanAsOfNow(posted!, 40, followersOfA(), lookups, async () => undefined);
    expect(deliveries).toEqual([{ kind: 'insert', readers: ['timeline:r', 'timeline:s'], activity: { ...activity('a1', 'user:a'), object: 'now' }, eventPosition: 7 }]);
    expect(asOf).toEqual([40]);
  });
});

describe('replanAsOfNow, a hiding', () => {
  const lookups = quietLookups;
  const hidden = { type: 'ActivityHidden', data: { feed: 'timeline:r', id: 'a1', time: 't1' } } as const;
  const shown = { type: 'ActivityShown', data: { feed: 'timeline:r', id: 'a1', time: 't2' } } as const;

  it('replays a hide shown since as the show, and a show hidden since as the hide', async () => {
    const asked: string[] = [];
    const hideReplayed = await replanAsOfNow({ position: 7, event: hidden }, 40, followersOfA(), lookups, async (reader, id) => (asked.push(`${reader} ${id}`), shown));
    expect(hideReplayed).toEqual([{ kind: 'show', reader: 'timeline:r', id: 'a1', eventPosition: 7 }]);
    expect(asked).toEqual(['timeline:r a1']);
    const showReplayed = await replanAsOfNow({ position: 8, event: shown }, 40, followersOfA(), lookups, async () => hidden);
    expect(showReplayed).toEqual([{ kind: 'hide', reader: 'timeline:r', id: 'a1', time: 't1', eventPosition: 8 }]);
  });

  it('replays a hide still the last as the hide', async () => {
    expect(await replanAsOfNow({ position: 7, event: hidden }, 40, followersOfA(), lookups, async () => hidden)).toEqual([{ kind: 'hide', reader: 'timeline:r', id: 'a1', time: 't1', eventPosition: 7 }]);
  });
});

describe('fanOutBatch', () => {
  const lookups = quietLookups;
  const events = recorded([follow('timeline:t', 'user:a'), add('a1', 'user:a')], 10);

  it('moves the follower index past the batch once the target has applied it', async () => {
    const index = followersOfA(9);
    const requests: DeliverRequest[] = [];
    const reply = await fanOutBatch(events, index, lookups, { deliver: async (request) => (requests.push(request), { applied: true, position: request.position }) }, 9, 12);
    expect(reply).toEqual({ applied: true, position: 12 });
    expect(requests.flatMap((r) => r.deliveries).map((d) => d.kind)).toEqual(['follow', 'insert']);
    expect({ position: index.position, followers: index.followersOf('user:a' as FeedId) }).toEqual({ position: 12, followers: ['timeline:r', 'timeline:s', 'timeline:t'] });
  });

  it('leaves the follower index where it stood when the target refuses the batch', async () => {
    const index = followersOfA(9);
    const reply = await fanOutBatch(events, index, lookups, { deliver: async () => ({ applied: false, position: 3 }) }, 9, 12);
    expect(reply).toEqual({ applied: false, position: 3 });
    expect({ position: index.position, followers: index.followersOf('user:a' as FeedId) }).toEqual({ position: 9, followers: ['timeline:r', 'timeline:s'] });
  });
});


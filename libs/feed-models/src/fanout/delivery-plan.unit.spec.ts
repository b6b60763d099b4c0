import type { Activity, FeedEvent, FeedId, PositionedEvent } from '@feedmill/contracts';
import { planDeliveries, type PlanLookups } from './delivery-plan.js';

const activity = (id: string, feed: FeedId): Activity => ({ id, feed, actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' });

function recorded(events: FeedEvent[], from = 1): PositionedEvent[] {
  return events.map((event, i) => ({ position: from + i, event }));
}

describe('planDeliveries', () => {
  const calls: string[] = [];
  const lookups: PlanLookups = {
    followers: async (feed, atLeast) => {
      calls.push(`followers ${feed} >=${atLeast}`);
      return feed === 'user:a' ? ['timeline:r', 'timeline:s'] : [];
    },
    recent: async (feed, limit, atLeast, atMost, order) => {
      calls.push(`recent ${feed} ${limit} >=${atLeast} <=${atMost} by ${order}`);
      return [activity('old2', feed), activity('old1', feed)];
    },
    isTimeline: (feed) => feed.startsWith('timeline:'),
    capOf: () => 1,
    orderOf: (reader) => (reader.startsWith('hot:') ? 'relevance' : 'time'),
    follows: async () => true,
    activities: async (ids) => ids.map((id) => ({ ...activity(id, 'user:a'), bumpedAt: '2026-02-01T00:00:00.000Z' })),
  };

  beforeEach(() => calls.splice(0));

  it('plans deliveries in log order, looking followers up once per author as of the batch end', async () => {
    const events = recorded([
      { type: 'ActivityAdded', data: { activity: activity('a1', 'user:a') } },
      { type: 'FeedFollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
      { type: 'ActivityAdded', data: { activity: activity('a2', 'user:a') } },
      { type: 'ActivityAdded', data: { activity: activity('c1', 'user:c') } },
      { type: 'ActivityRemoved', data: { id: 'a1', feed: 'user:a', time: 't' } },
      { type: 'FeedUnfollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
    ], 10);
    const deliveries = await planDeliveries(events, lookups);
    expect(deliveries).toEqual([
      { kind: 'insert', readers: ['timeline:r', 'timeline:s'], activity: activity('a1', 'user:a') },
      { kind: 'follow', reader: 'timeline:t', target: 'user:b', recent: [activity('old2', 'user:b'), activity('old1', 'user:b')], exhausted: false },
      { kind: 'insert', readers: ['timeline:r', 'timeline:s'], activity: activity('a2', 'user:a') },
      { kind: 'remove', readers: ['timeline:r', 'timeline:s'], id: 'a1' },
      { kind: 'unfollow', reader: 'timeline:t', target: 'user:b' },
    ]);
    expect(calls.filter((c) => c.startsWith('followers')).sort()).toEqual(['followers user:a >=15', 'followers user:c >=15']);
    expect(calls).toContain('recent user:b 2 >=15 <=11 by time');
  });

  it('backfills a follow in the reader’s order, not the followed feed’s', async () => {
    const events = recorded([
      { type: 'FeedFollowed', data: { follower: 'hot:t', target: 'user:b', time: 't' } },
      { type: 'FeedFollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
    ]);
    await planDeliveries(events, { ...lookups, isTimeline: () => true });
    expect(calls.filter((c) => c.startsWith('recent')).sort()).toEqual(['recent user:b 2 >=2 <=1 by relevance', 'recent user:b 2 >=2 <=2 by time']);
  });

  it('fails the batch only once every lookup it started has settled', async () => {
    let followersSettled = false;
    const failing: PlanLookups = {
      ...lookups,
      followers: () => new Promise((done) => setTimeout(() => ((followersSettled = true), done([])), 50)),
      recent: async () => {
        throw new Error('content is down');
      },
    };
    const events = recorded([
      { type: 'FeedFollowed', data: { follower: 'timeline:t', target: 'user:b', time: 't' } },
      { type: 'ActivityAdded', data: { activity: activity('a1', 'user:a') } },
    ]);
    await expect(planDeliveries(events, failing)).rejects.toThrow('content is down');
    expect({ followersSettled }).toEqual({ followersSettled: true });
  });

  it('skips follows by feeds that are not timelines', async () => {
    const events = recorded([{ type: 'FeedFollowed', data: { follower: 'user:x', target: 'user:b', time: 't' } }]);
    expect(await planDeliveries(events, lookups)).toEqual([]);
  });
});


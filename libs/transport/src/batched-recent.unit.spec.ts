import type { Activity, ActivityPage, FeedId, RecentActivitiesRequest, RecentEachRequest } from '@feedmill/contracts';
import { stubServiceClient } from '@feedmill/harness';
import { batchedRecent } from './batched-recent.js';

const activity = (feed: FeedId, n: number): Activity => ({ id: `${feed}-${n}`, feed, actor: 'a', verb: 'v', object: 'o', time: new Date(Date.UTC(2026, 0, 1, 0, 0, 60 - n)).toISOString() });
/** Each feed's history, newest first; `user:many` more than one page holds. */
const history: Record<string, Activity[]> = {
  'user:a': [activity('user:a', 0), activity('user:a', 1)],
  'user:many': Array.from({ length: 5 }, (_, n) => activity('user:many', n)),
  'user:late': [activity('user:late', 0)],
};
const key = (a: Activity) => `${a.time}|${a.id}`;

function contentStub() {
  const asked = { each: [] as RecentEachRequest[], recent: [] as RecentActivitiesRequest[] };
  const client = stubServiceClient({
    'feed.content.recent-each': (request) => {
      asked.each.push(request);
      // The byte budget runs out after two feeds; `user:many` answers two of its five.
      return {
        pages: request.feeds.map((feed, index): ActivityPage | null => {
          if (index >= 2) return null;
          const items = (history[feed] ?? []).slice(0, feed === 'user:many' ? 2 : request.limit);
          return { items, next: feed === 'user:many' ? key(items[1]!) : null };
        }),
      };
    },
    'feed.content.recent': (request) => {
      asked.recent.push(request);
      const below = (history[request.feeds[0]!] ?? []).filter((a) => request.before === undefined || key(a) < request.before);
      return { items: below.slice(0, request.limit), next: null };
    },
  });
  return { client, asked };
}

describe('batched recent lookups', () => {
  it('asks content once for the lookups of one turn, each feed once, and reads on alone what the batch could not answer', async () => {
    const { client, asked } = contentStub();
    const recent = batchedRecent(client);
    const [a, many, again, late, empty] = await Promise.all([
      recent('user:a', 4, 7, 9, 'time'),
      recent('user:many', 4, 7, 9, 'time'),
      recent('user:a', 4, 7, 9, 'time'),
      recent('user:late', 4, 7, 9, 'time'),
      recent('user:none', 4, 7, 9, 'time'),
    ]);
    expect(asked.each).toEqual([{ feeds: ['user:a', 'user:many', 'user:late', 'user:none'], limit: 4, atLeast: 7, atMost: 9, order: 'time', maxBytes: 256 * 1024 }]);
    expect(a).toEqual(history['user:a']);
    expect(again).toEqual(a);
    expect(again).not.toBe(a);
    expect(many).toEqual(history['user:many']!.slice(0, 4));
    expect(late).toEqual(history['user:late']);
    expect(empty).toEqual([]);
    // user:many goes on after its page; user:late and user:none, left past the budget, are asked alone.
    expect(asked.recent.map((r) => [r.feeds[0], r.limit, r.before !== undefined])).toEqual([
      ['user:many', 2, true],
      ['user:late', 4, false],
      ['user:none', 4, false],
    ]);
  });

  it('keeps lookups of other positions or orders apart, and a thousand feeds to a request', async () => {
    const { client, asked } = contentStub();
    const recent = batchedRecent(client);
    const feeds = Array.from({ length: 2_500 }, (_, i) => `user:f${i}` as FeedId);
    await Promise.all([...feeds.map((feed) => recent(feed, 2, 1, 5, 'time')), recent('user:a', 2, 1, 6, 'time'), recent('user:a', 2, 1, 5, 'relevance')]);
    expect(asked.each.map((r) => [r.feeds.length, r.atMost, r.order])).toEqual([
      [1_000, 5, 'time'],
      [1_000, 5, 'time'],
      [500, 5, 'time'],
      [1, 6, 'time'],
      [1, 5, 'relevance'],
    ]);
  });

  it('fails every lookup of a request that fails', async () => {
    const recent = batchedRecent(stubServiceClient({}));
    await expect(Promise.all([recent('user:a', 1, 0, 1, 'time'), recent('user:b', 1, 0, 1, 'time')])).rejects.toThrow(/no answer for feed.content.recent-each/);
  });
});

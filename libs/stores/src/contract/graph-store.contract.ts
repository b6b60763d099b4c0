import { activityStream, followsImportStream, followStream, settingsStream, type FeedLogEvent } from '@feedmill/contracts';
import type { GraphStore } from '../ports.js';
import { activityAt, decidedOf, recordEvents } from './recorded.js';

const events = recordEvents([
  [followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target: 'user:a', time: 't' } }],
  [followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target: 'user:b', time: 't' } }],
  [followStream('timeline:s'), { type: 'FeedFollowed', data: { follower: 'timeline:s', target: 'user:a', time: 't' } }],
  [followStream('timeline:q'), { type: 'FeedFollowed', data: { follower: 'timeline:q', target: 'user:a', time: 't' } }],
  [followStream('timeline:r'), { type: 'FeedUnfollowed', data: { follower: 'timeline:r', target: 'user:b', time: 't' } }],
]);

/** The behaviour every graph store must have. `create` gives an empty store. */
export function describeGraphStoreContract(name: string, create: () => Promise<GraphStore>): void {
  describe(`GraphStore contract: ${name}`, () => {
    let store: GraphStore;
    beforeEach(async () => {
      store = await create();
    });

    it('keeps edges both ways, pages them in order, counts them, and ignores repeats', async () => {
      await store.apply(events);
      await store.apply(events);
      expect(await store.followers('user:a', undefined, 10)).toEqual(['timeline:q', 'timeline:r', 'timeline:s']);
      expect(await store.followers('user:a', undefined, 2)).toEqual(['timeline:q', 'timeline:r']);
      expect(await store.followers('user:a', 'timeline:r', 10)).toEqual(['timeline:s']);
      expect(await store.following('timeline:r', undefined, 10)).toEqual(['user:a']);
      expect(await store.counts('user:a')).toEqual({ followers: 3, following: 0 });
      expect(await store.counts('timeline:r')).toEqual({ followers: 0, following: 1 });
      expect(await store.isFollowing('timeline:r', 'user:b')).toBe(false);
      expect(await store.isFollowing('timeline:s', 'user:a')).toBe(true);
      expect(await store.followingEach([['timeline:r', 'user:b'], ['timeline:s', 'user:a'], ['timeline:x', 'user:a'], ['timeline:r', 'user:a'], ['timeline:s', 'user:a']])).toEqual([false, true, false, true, true]);
      expect(await store.followingEach([])).toEqual([]);
      expect(await store.streamRevision(followStream('timeline:r'))).toBe(2);
      expect(await store.position()).toBe(5);
    });

    it('forgets an erased feed: its edges both ways, its requests both ways, its kept histories and its settings', async () => {
      const erased = recordEvents(
        [
          [followStream('timeline:x'), { type: 'FeedFollowed', data: { follower: 'timeline:x', target: 'user:a', time: 't' } }],
          [followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target: 'user:x', time: 't', since: 's' } }],
          [followStream('timeline:s'), { type: 'FeedFollowed', data: { follower: 'timeline:s', target: 'user:x', time: 't' } }],
          [followStream('timeline:s'), { type: 'FeedUnfollowed', data: { follower: 'timeline:s', target: 'user:x', time: 't', keepHistory: true } }],
          [settingsStream('user:x'), { type: 'FeedSettingsChanged', data: { feed: 'user:x', private: true, time: 't' } }],
          [followStream('timeline:q'), { type: 'FollowRequested', data: { follower: 'timeline:q', target: 'user:x', time: 't' } }],
          [followStream('timeline:x'), { type: 'FollowRequested', data: { follower: 'timeline:x', target: 'user:p', time: 't' } }],
          // Graph reads nothing else of a feed's activity stream: the erasure is its third event.
          [activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activityAt('x1', 'user:x', 1) } }],
          [activityStream('user:x'), { type: 'ActivityRemoved', data: { id: 'x1', feed: 'user:x', time: 't' } }],
          [activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't' } }],
          [activityStream('timeline:x'), { type: 'FeedErased', data: { feed: 'timeline:x', time: 't' } }],
        ],
        6,
      );
      await store.apply(events);
      await store.apply(erased);
      await store.apply(erased);
      expect(await store.followers('user:x', undefined, 10)).toEqual([]);
      expect(await store.following('timeline:x', undefined, 10)).toEqual([]);
      expect(await store.followers('user:a', undefined, 10)).toEqual(['timeline:q', 'timeline:r', 'timeline:s']);
      expect(await store.counts('user:x')).toEqual({ followers: 0, following: 0 });
      expect(await store.requests('user:x', undefined, 10)).toEqual([]);
      expect(await store.requests('user:p', undefined, 10)).toEqual([]);
      expect(await store.isPrivate('user:x')).toBe(false);
      expect(await store.boundsOf('timeline:r')).toEqual([]);
      expect(await store.boundsOf('timeline:s')).toEqual([]);
      expect(await store.keptBy('user:x')).toEqual([]);
      expect(await store.edgeState('timeline:q', 'user:x')).toBe('none');
      // Delivered again after a later follow, the erasure is not applied again.
      const refollowed = recordEvents([[followStream('timeline:n'), { type: 'FeedFollowed', data: { follower: 'timeline:n', target: 'user:x', time: 't' } }]], 17);
      await store.apply(refollowed);
      await store.apply(erased);
      expect(await store.followers('user:x', undefined, 10)).toEqual(['timeline:n']);
      expect(await store.streamRevision(activityStream('user:x'))).toBe(2);
      expect(await store.position()).toBe(17);
    });

    it('keeps what its writer appended after an erasure and applied before reading the erasure: follows, requests and settings of the feed id used again', async () => {
      const log = recordEvents(
        [
          [followStream('timeline:m'), { type: 'FeedFollowed', data: { follower: 'timeline:m', target: 'user:x', time: 't' } }],
          [activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't' } }],
          [followStream('timeline:n'), { type: 'FeedFollowed', data: { follower: 'timeline:n', target: 'user:x', time: 't' } }],
          [settingsStream('user:x'), { type: 'FeedSettingsChanged', data: { feed: 'user:x', private: true, time: 't' } }],
          [followStream('timeline:o'), { type: 'FollowRequested', data: { follower: 'timeline:o', target: 'user:x', time: 't' } }],
          [followsImportStream('bx'), { type: 'FeedsFollowed', data: { id: 'bx', time: 't', follows: [['user:x', 'user:a']] } }],
        ],
        6,
      );
      await store.apply(events);
      await store.apply(log.slice(0, 1));
      for (const own of log.slice(2)) await store.applyOwn(own, decidedOf(own));
      await store.apply(log.slice(1));
      expect(await store.followers('user:x', undefined, 10)).toEqual(['timeline:n']);
      expect(await store.isPrivate('user:x')).toBe(true);
      expect(await store.requests('user:x', undefined, 10)).toEqual(['timeline:o']);
      expect(await store.following('user:x', undefined, 10)).toEqual(['user:a']);
      expect(await store.following('timeline:m', undefined, 10)).toEqual([]);
    });

    it('keeps an own follow applied in the same turn as the reader applies an earlier erasure', async () => {
      const [erasure, refollow] = recordEvents(
        [
          [activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't' } }],
          [followStream('timeline:n'), { type: 'FeedFollowed', data: { follower: 'timeline:n', target: 'user:x', time: 't' } }],
        ],
        6,
      );
      await store.apply(events);
      await Promise.all([store.applyOwn(refollow!, decidedOf(refollow!)), store.apply([erasure!])]);
      await store.apply([refollow!]);
      expect(await store.followers('user:x', undefined, 10)).toEqual(['timeline:n']);
    });

    it('applies again only the erased feed\'s follows of an own import applied ahead of the erasure, not those unfollowed since', async () => {
      const log = recordEvents(
        [
          [activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't' } }],
          [followsImportStream('bx'), { type: 'FeedsFollowed', data: { id: 'bx', time: 't', follows: [['timeline:n', 'user:x'], ['timeline:k', 'user:b']] } }],
          [followStream('timeline:k'), { type: 'FeedUnfollowed', data: { follower: 'timeline:k', target: 'user:b', time: 't' } }],
        ],
        6,
      );
      await store.apply(events);
      for (const own of log.slice(1)) await store.applyOwn(own, decidedOf(own));
      await store.apply(log);
      expect(await store.followers('user:x', undefined, 10)).toEqual(['timeline:n']);
      expect(await store.followers('user:b', undefined, 10)).toEqual([]);
    });

    it('leaves no kept history of an edge an erasure removed, when its own unfollow that keeps history was applied ahead of the erasure', async () => {
      const log = recordEvents(
        [
          [followStream('timeline:n'), { type: 'FeedFollowed', data: { follower: 'timeline:n', target: 'user:x', time: 't', since: 's' } }],
          [activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't' } }],
          [followStream('timeline:n'), { type: 'FeedUnfollowed', data: { follower: 'timeline:n', target: 'user:x', time: 't', keepHistory: true } }],
        ],
        6,
      );
      await store.apply(events);
      await store.apply(log.slice(0, 1));
      await store.applyOwn(log[2]!, decidedOf(log[2]!));
      await store.apply(log.slice(1));
      expect(await store.keptBy('user:x')).toEqual([]);
      expect(await store.boundsOf('timeline:n')).toEqual([]);
      expect(await store.followers('user:x', undefined, 10)).toEqual([]);
    });

    it('applies an erasure recorded in a stream of its own, as logs written before erasures moved into the feed\'s stream hold it', async () => {
      const erased = recordEvents(
        [
          [followStream('timeline:x'), { type: 'FeedFollowed', data: { follower: 'timeline:x', target: 'user:x', time: 't' } }],
          ['erased-user:x', { type: 'FeedErased', data: { feed: 'user:x', time: 't' } }],
        ],
        6,
      );
      await store.apply(events);
      await store.apply(erased);
      expect(await store.followers('user:x', undefined, 10)).toEqual([]);
      expect(await store.following('timeline:x', undefined, 10)).toEqual([]);
    });

    it('applies a batch of follows as its items, once, an edge that exists included', async () => {
      await store.apply(events);
      const follows: Array<['timeline:r' | 'timeline:s', 'user:a' | 'user:c']> = [['timeline:r', 'user:c'], ['timeline:s', 'user:c'], ['timeline:r', 'user:a']];
      const batch = recordEvents([[followsImportStream('b1'), { type: 'FeedsFollowed', data: { id: 'b1', time: 't', follows } }]], 6);
      await store.applyOwn(batch[0]!, decidedOf(batch[0]!));
      await store.apply(batch);
      await store.apply(batch);
      expect(await store.followers('user:c', undefined, 10)).toEqual(['timeline:r', 'timeline:s']);
      expect(await store.following('timeline:r', undefined, 10)).toEqual(['user:a', 'user:c']);
      expect(await store.counts('user:a')).toEqual({ followers: 3, following: 0 });
      expect(await store.isFollowing('timeline:s', 'user:c')).toBe(true);
      expect(await store.streamRevision(followsImportStream('b1'))).toBe(0);
      expect(await store.position()).toBe(6);
    });

    it('keeps follow requests apart from follows until approved, rejected or answered by an import, and each feed’s privacy', async () => {
      const edge = (type: 'FollowRequested' | 'FollowRequestRejected' | 'FeedFollowed' | 'FeedUnfollowed', follower: 'timeline:r' | 'timeline:s' | 'timeline:q'): [string, FeedLogEvent] => [
        followStream(follower),
        { type, data: { follower, target: 'user:p', time: 't' } },
      ];
      const settings = (isPrivate: boolean): [string, FeedLogEvent] => [settingsStream('user:p'), { type: 'FeedSettingsChanged', data: { feed: 'user:p', private: isPrivate, time: 't' } }];
      const imported: [string, FeedLogEvent] = [followsImportStream('b2'), { type: 'FeedsFollowed', data: { id: 'b2', time: 't', follows: [['timeline:q', 'user:p']] } }];
      const log = recordEvents([
        settings(true),
        edge('FollowRequested', 'timeline:r'),
        edge('FollowRequested', 'timeline:s'),
        edge('FollowRequested', 'timeline:q'),
        // Approved (a follow), rejected, and imported as approved.
        edge('FeedFollowed', 'timeline:r'),
        edge('FollowRequestRejected', 'timeline:s'),
        imported,
        settings(false),
      ]);
      expect(await store.isPrivate('user:p')).toBe(false);
      await store.apply(log.slice(0, 4));
      expect(await store.isPrivate('user:p')).toBe(true);
      expect(await store.requests('user:p', undefined, 10)).toEqual(['timeline:q', 'timeline:r', 'timeline:s']);
      expect(await store.requests('user:p', 'timeline:q', 1)).toEqual(['timeline:r']);
      expect(await store.edgeState('timeline:r', 'user:p')).toBe('requested');
      expect(await store.followers('user:p', undefined, 10)).toEqual([]);
      await store.apply(log.slice(4, 7));
      expect(await store.edgeState('timeline:r', 'user:p')).toBe('following');
      expect(await store.edgeState('timeline:s', 'user:p')).toBe('none');
      expect(await store.edgeState('timeline:q', 'user:p')).toBe('following');
      expect(await store.requests('user:p', undefined, 10)).toEqual([]);
      expect(await store.followers('user:p', undefined, 10)).toEqual(['timeline:q', 'timeline:r']);
      await store.apply(log.slice(7));
      expect(await store.isPrivate('user:p')).toBe(false);
      expect(await store.position()).toBe(8);
    });

    it('keeps a follow’s since bound and a kept edge with its positions, lists and counts no kept edge, and lets a follow replace it', async () => {
      const follow = (target: 'user:a' | 'user:b' | 'user:c', since?: string): [string, FeedLogEvent] => [followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target, time: 't', ...(since && { since }) } }];
      const unfollow = (target: 'user:a' | 'user:b' | 'user:c', keepHistory?: true): [string, FeedLogEvent] => [followStream('timeline:r'), { type: 'FeedUnfollowed', data: { follower: 'timeline:r', target, time: 't', ...(keepHistory && { keepHistory }) } }];
      const log = recordEvents([
        follow('user:a', '2026-01-01T00:00:05.000Z|a5'),
        follow('user:b'),
        follow('user:c', '2026-01-01T00:00:01.000Z|c1'),
        // A bounded edge kept, a whole one kept, and one dropped.
        unfollow('user:a', true),
        unfollow('user:b', true),
        unfollow('user:c'),
        // A kept edge followed again (whole), and a follow that is plain replaces its bound.
        follow('user:b'),
        follow('user:c', '2026-01-01T00:00:02.000Z|c2'),
        follow('user:c'),
      ]);
      const byFeed = (bounds: Array<{ feed: string }>) => [...bounds].sort((x, y) => (x.feed < y.feed ? -1 : 1));
      await store.apply(log.slice(0, 3));
      expect(byFeed(await store.boundsOf('timeline:r'))).toEqual([
        { feed: 'user:a', since: '2026-01-01T00:00:05.000Z|a5', followedAt: 1 },
        { feed: 'user:c', since: '2026-01-01T00:00:01.000Z|c1', followedAt: 3 },
      ]);
      await store.apply(log.slice(3, 6));
      await store.apply(log.slice(3, 6));
      expect(byFeed(await store.boundsOf('timeline:r'))).toEqual([
        { feed: 'user:a', since: '2026-01-01T00:00:05.000Z|a5', followedAt: 1, unfollowedAt: 4 },
        { feed: 'user:b', unfollowedAt: 5 },
      ]);
      expect(await store.following('timeline:r', undefined, 10)).toEqual([]);
      expect(await store.followers('user:a', undefined, 10)).toEqual([]);
      expect(await store.counts('timeline:r')).toEqual({ followers: 0, following: 0 });
      expect(await store.edgeState('timeline:r', 'user:a')).toBe('none');
      expect(await store.boundsOf('timeline:s')).toEqual([]);
      expect(await store.keptBy('user:a')).toEqual(['timeline:r']);
      expect(await store.keptBy('user:c')).toEqual([]);
      expect(await store.keptEdges()).toEqual([
        { follower: 'timeline:r', target: 'user:a' },
        { follower: 'timeline:r', target: 'user:b' },
      ]);
      await store.apply(log.slice(6));
      expect(byFeed(await store.boundsOf('timeline:r'))).toEqual([{ feed: 'user:a', since: '2026-01-01T00:00:05.000Z|a5', followedAt: 1, unfollowedAt: 4 }]);
      expect(await store.following('timeline:r', undefined, 10)).toEqual(['user:b', 'user:c']);
      expect(await store.keptBy('user:b')).toEqual([]);
      expect(await store.keptEdges()).toEqual([{ follower: 'timeline:r', target: 'user:a' }]);
      // A plain unfollow of a kept edge (its feed turned private, say) ends it.
      await store.apply(recordEvents([unfollow('user:a')], 10).map((e) => ({ ...e, revision: 9 })));
      expect(await store.keptBy('user:a')).toEqual([]);
      expect(await store.keptEdges()).toEqual([]);
      expect(byFeed(await store.boundsOf('timeline:r'))).toEqual([]);
      // An import's follow replaces a kept edge too.
      await store.apply(recordEvents([follow('user:a'), unfollow('user:a', true)], 11).map((e, i) => ({ ...e, revision: 10 + i })));
      expect(await store.keptBy('user:a')).toEqual(['timeline:r']);
      const batch = recordEvents([[followsImportStream('b3'), { type: 'FeedsFollowed', data: { id: 'b3', time: 't', follows: [['timeline:r', 'user:a']] } }]], 13);
      await store.apply(batch);
      expect(await store.boundsOf('timeline:r')).toEqual([]);
      expect(await store.following('timeline:r', undefined, 10)).toEqual(['user:a', 'user:b', 'user:c']);
    });

    it('follows again after an unfollow', async () => {
      await store.apply(events);
      await store.apply(
        recordEvents([[followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target: 'user:b', time: 't' } }]], 6).map((e) => ({ ...e, revision: 3 })),
      );
      expect(await store.following('timeline:r', undefined, 10)).toEqual(['user:a', 'user:b']);
    });
  });
}

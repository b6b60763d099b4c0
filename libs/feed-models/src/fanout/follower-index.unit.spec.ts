import type { FeedEvent, FeedId, PositionedEvent } from '@feedmill/contracts';
import { FollowerIndex } from './follower-index.js';

const follow = (follower: string, target: string): FeedEvent => ({ type: 'FeedFollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't' } });
const unfollow = (follower: string, target: string): FeedEvent => ({ type: 'FeedUnfollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't' } });
const post = (feed: string): FeedEvent => ({ type: 'ActivityAdded', data: { activity: { id: 'a', feed: feed as FeedId, actor: 'x', verb: 'post', object: 'o', time: 't' } } });

function at(events: FeedEvent[], from = 1): PositionedEvent[] {
  return events.map((event, i) => ({ position: from + i, event }));
}

function indexOf(events: FeedEvent[]): FollowerIndex {
  const index = new FollowerIndex();
  index.advance(at(events), events.length);
  return index;
}

const erase = (feed: string): FeedEvent => ({ type: 'FeedErased', data: { feed: feed as FeedId, time: 't' } });

describe('FollowerIndex', () => {
  it('lists a feed’s followers as one unchanging list until one follows, unfollows or is erased', () => {
    const index = indexOf([follow('timeline:r', 'user:a'), follow('timeline:s', 'user:a'), follow('timeline:r', 'user:b')]);
    const listed = index.followersOf('user:a' as FeedId);
    expect(listed).toEqual(['timeline:r', 'timeline:s']);
    expect(Object.isFrozen(listed)).toBe(true);
    // Another feed's follows leave the list as it is: every post of user:a reaches the same one.
    index.advance(at([follow('timeline:t', 'user:b')], 4), 4);
    expect(index.followersOf('user:a' as FeedId)).toBe(listed);

    index.advance(at([follow('timeline:t', 'user:a')], 5), 5);
    const followed = index.followersOf('user:a' as FeedId);
    expect(followed).toEqual(['timeline:r', 'timeline:s', 'timeline:t']);
    index.advance(at([unfollow('timeline:r', 'user:a')], 6), 6);
    const unfollowed = index.followersOf('user:a' as FeedId);
    expect(unfollowed).toEqual(['timeline:s', 'timeline:t']);
    index.advance(at([erase('timeline:s')], 7), 7);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:t']);
    expect(listed).toEqual(['timeline:r', 'timeline:s']);
  });

  it('forgets an erased feed: its followers, what it followed, its kept edges and that it had activities; in a batch too', () => {
    const history = [
      post('user:x'),
      follow('timeline:r', 'user:x'),
      follow('timeline:x', 'user:a'),
      follow('timeline:s', 'user:a'),
      { type: 'FeedUnfollowed', data: { follower: 'timeline:s', target: 'user:x', time: 't', keepHistory: true } } as FeedEvent,
    ];
    const beforeErasure = indexOf(history);
    const batch = beforeErasure.inBatch();
    batch.apply(erase('user:x'), 6);
    expect(batch.followersOf('user:x' as FeedId)).toEqual([]);
    expect(batch.keptBy('user:x' as FeedId)).toEqual([]);
    const index = indexOf([...history, erase('user:x'), erase('timeline:x')]);
    expect(index.followersOf('user:x' as FeedId)).toEqual([]);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:s']);
    expect(index.follows('timeline:x' as FeedId, 'user:a' as FeedId)).toBe(false);
    expect(index.boundsOf('user:x' as FeedId)).toBeUndefined();
    expect(index.hasHadActivities('user:x' as FeedId)).toBe(false);
    expect(index.edges).toBe(1);
    // Used again after its erasure, the feed starts with no follower.
    index.advance(at([follow('timeline:q', 'user:x')], 8), 8);
    expect(index.followersOf('user:x' as FeedId)).toEqual(['timeline:q']);
  });

  it('in a batch, drops an erased feed as a follower too, as a batch cut after the erasure would', () => {
    const history = [
      follow('timeline:x', 'user:a'),
      follow('timeline:y', 'user:a'),
      post('user:b'),
      { type: 'FeedUnfollowed', data: { follower: 'timeline:x', target: 'user:b', time: 't', keepHistory: true } } as FeedEvent,
    ];
    const index = indexOf(history);
    const batch = index.inBatch();
    batch.apply(follow('timeline:x', 'user:c'), 5);
    expect(batch.followersOf('user:a' as FeedId)).toEqual(['timeline:x', 'timeline:y']);
    batch.apply(erase('timeline:x'), 6);
    // What the same events give when the batch is cut right after the erasure.
    const cut = indexOf([...history, follow('timeline:x', 'user:c'), erase('timeline:x')]).inBatch();
    for (const planned of [batch, cut]) {
      expect(planned.followersOf('user:a' as FeedId)).toEqual(['timeline:y']);
      expect(planned.followersOf('user:c' as FeedId)).toEqual([]);
      expect(planned.keptBy('user:b' as FeedId)).toEqual([]);
      expect(planned.hasHadActivities('timeline:x' as FeedId)).toBe(false);
    }
    // Used again after its erasure, the id follows afresh.
    batch.apply(follow('timeline:x', 'user:a'), 7);
    expect([...batch.followersOf('user:a' as FeedId)].sort()).toEqual(['timeline:x', 'timeline:y']);
  });

  it('follows, unfollows and follows again', () => {
    const index = indexOf([follow('timeline:r', 'user:a'), follow('timeline:s', 'user:a'), unfollow('timeline:r', 'user:a')]);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:s']);
    expect(index.follows('timeline:r' as FeedId, 'user:a' as FeedId)).toBe(false);
    index.advance(at([follow('timeline:r', 'user:a')], 4), 4);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:r', 'timeline:s']);
    expect(index.follows('timeline:r' as FeedId, 'user:a' as FeedId)).toBe(true);
    expect(index.edges).toBe(2);
    expect(index.followerCount('user:a' as FeedId)).toBe(2);
    expect(index.followerCount('user:nobody' as FeedId)).toBe(0);
  });

  it('knows nothing of feeds it never saw, and ignores unfollows of edges it does not hold', () => {
    const index = indexOf([unfollow('timeline:r', 'user:a'), follow('timeline:r', 'user:b'), unfollow('timeline:s', 'user:b')]);
    expect(index.followersOf('user:a' as FeedId)).toEqual([]);
    expect(index.followersOf('user:zzz' as FeedId)).toEqual([]);
    expect(index.follows('timeline:nobody' as FeedId, 'user:b' as FeedId)).toBe(false);
    expect(index.followersOf('user:b' as FeedId)).toEqual(['timeline:r']);
    expect(index.edges).toBe(1);
  });

  it('keeps a follow that comes twice once', () => {
    const index = indexOf([follow('timeline:r', 'user:a'), follow('timeline:r', 'user:a')]);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:r']);
    expect(index.edges).toBe(1);
  });

  it('lists followers in the order it first saw the feeds, whatever the order of the follows', () => {
    // r, s, t are numbered by their follows of user:x; their follows of user:a come in reverse.
    const index = indexOf([
      follow('timeline:r', 'user:x'),
      follow('timeline:s', 'user:x'),
      follow('timeline:t', 'user:x'),
      follow('timeline:t', 'user:a'),
      follow('timeline:s', 'user:a'),
      follow('timeline:r', 'user:a'),
    ]);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:r', 'timeline:s', 'timeline:t']);
  });

  it('holds only the followers it keeps', () => {
    const index = new FollowerIndex((follower) => follower.startsWith('timeline:'));
    index.advance(at([follow('timeline:r', 'user:a'), follow('user:b', 'user:a'), unfollow('user:b', 'user:a')]), 3);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:r']);
    expect(index.edges).toBe(1);
  });

  it('stands at the position it was advanced to, and takes no event twice', () => {
    const index = new FollowerIndex();
    const events = at([follow('timeline:r', 'user:a'), post('user:a'), unfollow('timeline:r', 'user:a'), follow('timeline:s', 'user:a')]);
    index.advance(events, 2);
    expect({ position: index.position, followers: index.followersOf('user:a' as FeedId) }).toEqual({ position: 2, followers: ['timeline:r'] });
    // A batch that ends past its last feed event moves the index past it too.
    index.advance(events, 9);
    expect({ position: index.position, followers: index.followersOf('user:a' as FeedId) }).toEqual({ position: 9, followers: ['timeline:s'] });
    // Applying the whole log again, or a batch behind the index, changes nothing.
    index.advance(events, 9);
    index.advance(at([follow('timeline:t', 'user:a')], 5), 5);
    expect({ position: index.position, followers: index.followersOf('user:a' as FeedId) }).toEqual({ position: 9, followers: ['timeline:s'] });
  });

  it('agrees with a plain model of sets through many follows and unfollows of many feeds', () => {
    // A seeded generator: the same sequence on every run.
    let seed = 7;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const model = new Map<string, Set<string>>();
    const index = new FollowerIndex();
    let position = 0;
    for (let i = 0; i < 60_000; i++) {
      // A few very popular feeds and many small ones, so that runs both grow large and move often.
      const target = `user:p${random() < 0.3 ? Math.floor(random() * 3) : Math.floor(random() * 2_000)}`;
      const follower = `timeline:r${Math.floor(random() * 5_000)}`;
      const following = model.get(target) ?? new Set<string>();
      model.set(target, following);
      const event = random() < 0.75 ? follow(follower, target) : unfollow(follower, target);
      if (event.type === 'FeedFollowed') following.add(follower);
      else following.delete(follower);
      position++;
      index.advance([{ position, event }], position);
    }
    let edges = 0;
    for (const [target, following] of model) {
      edges += following.size;
      expect(new Set(index.followersOf(target as FeedId))).toEqual(following);
      expect(index.followersOf(target as FeedId)).toHaveLength(following.size);
    }
    expect(index.edges).toBe(edges);
    expect(index.follows('timeline:r1' as FeedId, 'user:p0' as FeedId)).toBe(model.get('user:p0')!.has('timeline:r1'));
  });

  it('holds a feed with a hundred thousand followers, and unfollows among them', () => {
    const index = new FollowerIndex();
    const followers = Array.from({ length: 100_000 }, (_, i) => `timeline:r${i}`);
    index.advance(at(followers.map((reader) => follow(reader, 'user:star'))), followers.length);
    index.advance(at([unfollow('timeline:r0', 'user:star'), unfollow('timeline:r50000', 'user:star'), unfollow('timeline:r99999', 'user:star')], followers.length + 1), followers.length + 3);
    const expected = followers.filter((reader) => !['timeline:r0', 'timeline:r50000', 'timeline:r99999'].includes(reader));
    expect(index.followersOf('user:star' as FeedId)).toEqual(expected);
    expect(index.edges).toBe(99_997);
  });

  it('knows the feeds that have had an activity, removed since or not', () => {
    const index = indexOf([post('user:a'), follow('timeline:r', 'user:b'), { type: 'ActivityRemoved', data: { id: 'a', feed: 'user:a' as FeedId, time: 't' } }]);
    expect([index.hasHadActivities('user:a' as FeedId), index.hasHadActivities('user:b' as FeedId), index.hasHadActivities('user:c' as FeedId)]).toEqual([true, false, false]);
    const batch = index.inBatch();
    batch.apply(post('user:b'), 4);
    expect([batch.hasHadActivities('user:b' as FeedId), index.hasHadActivities('user:b' as FeedId)]).toEqual([true, false]);
  });
});

describe('bounded and kept edges', () => {
  const since = '2026-01-01T00:00:00.000Z|x';
  const boundedFollow = (follower: string, target: string): FeedEvent => ({ type: 'FeedFollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't', since } });
  const keepingUnfollow = (follower: string, target: string): FeedEvent => ({ type: 'FeedUnfollowed', data: { follower: follower as FeedId, target: target as FeedId, time: 't', keepHistory: true } });
  const events = [boundedFollow('timeline:r', 'user:a'), follow('timeline:s', 'user:a'), keepingUnfollow('timeline:r', 'user:a'), keepingUnfollow('timeline:s', 'user:a'), keepingUnfollow('timeline:t', 'user:a'), follow('timeline:q', 'user:a')];
  const expected = new Map([
    ['timeline:r', { feed: 'user:a', since, followedAt: 1, unfollowedAt: 3 }],
    ['timeline:s', { feed: 'user:a', unfollowedAt: 4 }],
  ]);

  it('keeps a follow’s bound, ends it at a keeping unfollow, forgets it at a follow, and keeps it through a snapshot', () => {
    const index = indexOf(events);
    expect(index.boundsOf('user:a' as FeedId)).toEqual(expected);
    expect(index.followersOf('user:a' as FeedId)).toEqual(['timeline:q']);
    const restored = FollowerIndex.fromState(index.toState());
    expect(restored.boundsOf('user:a' as FeedId)).toEqual(expected);
    index.advance(at([follow('timeline:r', 'user:a'), unfollow('timeline:s', 'user:a')], 7), 8);
    expect(index.boundsOf('user:a' as FeedId)).toBeUndefined();
  });

  it('gives the readers keeping a feed’s history as of each event of a batch', () => {
    const index = indexOf(events.slice(0, 2));
    const batch = index.inBatch();
    expect(batch.keptBy('user:a' as FeedId)).toEqual([]);
    expect(batch.boundOf('user:a' as FeedId, 'timeline:r' as FeedId)).toEqual({ feed: 'user:a', since, followedAt: 1 });
    events.slice(2).forEach((event, i) => batch.apply(event, 3 + i));
    expect(batch.keptBy('user:a' as FeedId).sort()).toEqual(['timeline:r', 'timeline:s']);
    expect(batch.boundOf('user:a' as FeedId, 'timeline:r' as FeedId)).toEqual(expected.get('timeline:r'));
    batch.apply(follow('timeline:r', 'user:a'), 7);
    expect(batch.keptBy('user:a' as FeedId)).toEqual(['timeline:s']);
    expect(index.boundsOf('user:a' as FeedId)).toEqual(new Map([['timeline:r', { feed: 'user:a', since, followedAt: 1 }]]));
  });
});

describe('FollowersInBatch', () => {
  const before = () => indexOf([follow('timeline:r', 'user:a'), follow('timeline:s', 'user:a')]);

  it('gives the followers as of each event of the batch, and leaves the index as it was', () => {
    const index = before();
    const batch = index.inBatch();
    let position = 2;
    const asOf = (event: FeedEvent) => (batch.apply(event, ++position), [...batch.followersOf('user:a' as FeedId)]);
    expect([
      asOf(post('user:a')),
      asOf(follow('timeline:t', 'user:a')),
      asOf(unfollow('timeline:r', 'user:a')),
      asOf(post('user:a')),
      asOf(follow('timeline:r', 'user:a')),
      asOf(unfollow('timeline:t', 'user:a')),
    ]).toEqual([
      ['timeline:r', 'timeline:s'],
      ['timeline:r', 'timeline:s', 'timeline:t'],
      ['timeline:s', 'timeline:t'],
      ['timeline:s', 'timeline:t'],
      ['timeline:r', 'timeline:s', 'timeline:t'],
      ['timeline:r', 'timeline:s'],
    ]);
    expect({ position: index.position, followers: index.followersOf('user:a' as FeedId) }).toEqual({ position: 2, followers: ['timeline:r', 'timeline:s'] });
  });

  it('sees only the followers the index keeps', () => {
    const index = new FollowerIndex((follower) => follower.startsWith('timeline:'));
    const batch = index.inBatch();
    batch.apply(follow('user:b', 'user:a'), 1);
    batch.apply(follow('timeline:r', 'user:a'), 2);
    expect(batch.followersOf('user:a' as FeedId)).toEqual(['timeline:r']);
  });
});

import { activitySchema, eventItems, MAX_BATCH_BYTES, type Activity, type FeedId } from '@feedmill/contracts';
import { activityIdOf, decideActivity, decideAddActivities, evolveActivity, foreignIdKey, isActivityEvent, type ActivityCommand, type AddActivitiesCommand } from './activity.js';
import { decideFeedSettings, decideFollowEdge, decideFollowMany, evolveFollowEdge, isFollowEdgeEvent, type FollowEdgeEvent, type FollowManyCommand } from './follow-edge.js';
import { streamOf } from './streams.js';
import { seededRandom } from '../testing.js';

const add = {
  type: 'AddActivity',
  data: { feed: 'user:bob', activity: { actor: 'bob', verb: 'post', object: 'o', foreignId: 'f1' }, id: 'id-1', receivedAt: '2026-01-01T00:00:00.000Z' },
} satisfies ActivityCommand;

/** The state after deciding on `state` and evolving it by every decided event. */
function run(command: ActivityCommand, state: Activity | undefined): Activity | undefined {
  return decideActivity(command, state).reduce(evolveActivity, state);
}

describe('activity', () => {
  it('adds an activity stamped with the command’s id and time, in its feed’s stream', () => {
    const [event] = decideActivity(add, undefined);
    expect(event).toEqual({
      type: 'ActivityAdded',
      data: { activity: { id: 'id-1', feed: 'user:bob', actor: 'bob', verb: 'post', object: 'o', time: add.data.receivedAt, foreignId: 'f1' } },
    });
    expect(streamOf(event!)).toBe('feed-user:bob');
  });

  it('keeps a time given by the client', () => {
    const command = { ...add, data: { ...add.data, activity: { ...add.data.activity, time: '2025-05-05T00:00:00.000Z' } } };
    expect(run(command, undefined)?.time).toBe('2025-05-05T00:00:00.000Z');
  });

  it('decides nothing for a repeated foreignId and leaves the first activity as it was', () => {
    const first = run(add, undefined)!;
    const again = { ...add, data: { ...add.data, id: 'id-2' } };
    expect(decideActivity(again, first)).toEqual([]);
    expect(run(again, first)).toBe(first);
  });

  it('removes only an activity of the same feed', () => {
    const activity = run(add, undefined)!;
    expect(decideActivity({ type: 'RemoveActivity', data: { feed: 'user:bob', id: 'id-1', time: 't' } }, activity)).toEqual([
      { type: 'ActivityRemoved', data: { feed: 'user:bob', id: 'id-1', time: 't' } },
    ]);
    expect(run({ type: 'RemoveActivity', data: { feed: 'user:bob', id: 'id-1', time: 't' } }, activity)).toBeUndefined();
    expect(() => decideActivity({ type: 'RemoveActivity', data: { feed: 'user:dan', id: 'id-1', time: 't' } }, activity)).toThrow(
      expect.objectContaining({ code: 'activity_not_found' }),
    );
    expect(() => decideActivity({ type: 'RemoveActivity', data: { feed: 'user:bob', id: 'id-9', time: 't' } }, undefined)).toThrow(
      expect.objectContaining({ code: 'activity_not_found' }),
    );
  });

  it('bumps an activity forward only, recording nothing for a bump no later than its relevance', () => {
    const activity = run(add, undefined)!;
    const bump = (time: string) => ({ type: 'BumpActivity', data: { feed: 'user:bob', id: 'id-1', time } }) satisfies ActivityCommand;
    expect(decideActivity(bump('2026-03-01T00:00:00.000Z'), activity)).toEqual([
      { type: 'ActivityBumped', data: { id: 'id-1', feed: 'user:bob', time: '2026-03-01T00:00:00.000Z' } },
    ]);
    const bumped = run(bump('2026-03-01T00:00:00.000Z'), activity)!;
    expect(bumped.bumpedAt).toBe('2026-03-01T00:00:00.000Z');
    expect(decideActivity(bump('2026-02-01T00:00:00.000Z'), bumped)).toEqual([]);
    expect(decideActivity(bump('2025-01-01T00:00:00.000Z'), activity)).toEqual([]);
    expect(() => decideActivity({ type: 'BumpActivity', data: { feed: 'user:bob', id: 'nope', time: 't' } }, undefined)).toThrow(
      expect.objectContaining({ code: 'activity_not_found' }),
    );
  });

  it('evolves a bump of an activity it does not hold to nothing', () => {
    expect(evolveActivity(undefined, { type: 'ActivityBumped', data: { id: 'x', feed: 'user:bob', time: 't' } })).toBeUndefined();
  });

  describe('an update in place', () => {
    const update = (changes: { object?: string; extra?: Record<string, unknown> }, feed: FeedId = 'user:bob', id = 'id-1') =>
      ({ type: 'UpdateActivity', data: { feed, id, time: '2026-04-01T00:00:00.000Z', ...changes } }) satisfies ActivityCommand;
    const posted = () => run({ ...add, data: { ...add.data, activity: { ...add.data.activity, extra: { caption: 'a', tags: ['x'] } } } }, undefined)!;

    it('records only the fields that change, in the feed’s stream', () => {
      const [event] = decideActivity(update({ object: 'o2', extra: { caption: 'a', tags: ['x'] } }), posted());
      expect(event).toEqual({ type: 'ActivityUpdated', data: { id: 'id-1', feed: 'user:bob', time: '2026-04-01T00:00:00.000Z', object: 'o2' } });
      expect(streamOf(event!)).toBe('feed-user:bob');
      expect(decideActivity(update({ extra: { caption: 'b' } }), posted())).toEqual([
        { type: 'ActivityUpdated', data: { id: 'id-1', feed: 'user:bob', time: '2026-04-01T00:00:00.000Z', extra: { caption: 'b' } } },
      ]);
    });

    it('records nothing for an update that changes nothing, whatever the order of extra’s keys', () => {
      expect(decideActivity(update({ object: 'o' }), posted())).toEqual([]);
      expect(decideActivity(update({ object: 'o', extra: { tags: ['x'], caption: 'a' } }), posted())).toEqual([]);
      // Emptying extra is a change, and so is giving one to an activity that had none.
      expect(decideActivity(update({ extra: {} }), posted())).toHaveLength(1);
      expect(decideActivity(update({ extra: {} }), run(add, undefined))).toHaveLength(1);
    });

    it('replaces object and extra whole and stamps updatedAt, keeping what places the activity', () => {
      const bumped = run({ type: 'BumpActivity', data: { feed: 'user:bob', id: 'id-1', time: '2026-03-01T00:00:00.000Z' } }, posted())!;
      const updated = run(update({ object: 'o2', extra: { tags: [] } }), bumped)!;
      expect(updated).toEqual({ ...bumped, object: 'o2', extra: { tags: [] }, updatedAt: '2026-04-01T00:00:00.000Z' });
      expect(updated).not.toBe(bumped);
      // Its fields in the schema's order, as a decode of the log gives them, whatever came first.
      expect(Object.keys(updated)).toEqual(['id', 'feed', 'actor', 'verb', 'object', 'time', 'foreignId', 'extra', 'bumpedAt', 'updatedAt']);
      const addedBare = run(add, undefined)!;
      const extraLater = run({ type: 'BumpActivity', data: { feed: 'user:bob', id: 'id-1', time: '2026-03-01T00:00:00.000Z' } }, run(update({ extra: { n: 1 } }), addedBare))!;
      expect(Object.keys(extraLater)).toEqual(['id', 'feed', 'actor', 'verb', 'object', 'time', 'foreignId', 'extra', 'bumpedAt', 'updatedAt']);
      expect(JSON.stringify(extraLater)).toBe(JSON.stringify(activitySchema.parse(JSON.parse(JSON.stringify(extraLater)))));
    });

    it('refuses an activity of another feed or none, and evolves an update of one not held to nothing', () => {
      expect(() => decideActivity(update({ object: 'x' }, 'user:dan'), posted())).toThrow(expect.objectContaining({ code: 'activity_not_found', field: 'activityId' }));
      expect(() => decideActivity(update({ object: 'x' }, 'user:bob', 'nope'), undefined)).toThrow(expect.objectContaining({ code: 'activity_not_found' }));
      expect(evolveActivity(undefined, { type: 'ActivityUpdated', data: { id: 'x', feed: 'user:bob', time: 't', object: 'o' } })).toBeUndefined();
    });

    it('is an activity event, and the same event evolved twice leaves the same activity', () => {
      const [event] = decideActivity(update({ object: 'o2' }), posted());
      expect(isActivityEvent(event!)).toBe(true);
      expect(activityIdOf(event!)).toBe('id-1');
      const once = evolveActivity(posted(), event!);
      expect(evolveActivity(once, event!)).toEqual(once);
    });
  });
});

describe('follow edge', () => {
  const follow = { follower: 'timeline:a' as const, target: 'user:b' as const, time: 't' };

  it('follows and unfollows idempotently, in the follower’s stream', () => {
    const [followed] = decideFollowEdge({ type: 'Follow', data: follow }, 'none');
    expect(followed).toEqual({ type: 'FeedFollowed', data: follow });
    expect(streamOf(followed!)).toBe('follows-timeline:a');
    expect(evolveFollowEdge(false, followed as FollowEdgeEvent)).toBe(true);
    expect(decideFollowEdge({ type: 'Follow', data: follow }, 'following')).toEqual([]);
    const [unfollowed] = decideFollowEdge({ type: 'Unfollow', data: follow }, 'following');
    expect(unfollowed?.type).toBe('FeedUnfollowed');
    expect(evolveFollowEdge(true, unfollowed as FollowEdgeEvent)).toBe(false);
    expect(decideFollowEdge({ type: 'Unfollow', data: follow }, 'none')).toEqual([]);
  });

  it('records a follow’s since bound and an unfollow that keeps the history, and nothing of them where they do not apply', () => {
    const since = '2026-01-01T00:00:00.000Z|x';
    expect(decideFollowEdge({ type: 'Follow', data: { ...follow, since } }, 'none')).toEqual([{ type: 'FeedFollowed', data: { ...follow, since } }]);
    expect(decideFollowEdge({ type: 'Follow', data: { ...follow, since } }, 'following')).toEqual([]);
    // A follow of a private feed waits: the request keeps no bound, and its approval brings the whole history.
    expect(decideFollowEdge({ type: 'Follow', data: { ...follow, since }, targetPrivate: true }, 'none')).toEqual([{ type: 'FollowRequested', data: follow }]);
    expect(decideFollowEdge({ type: 'Unfollow', data: { ...follow, keepHistory: true } }, 'following')).toEqual([{ type: 'FeedUnfollowed', data: { ...follow, keepHistory: true } }]);
    expect(decideFollowEdge({ type: 'Unfollow', data: { ...follow, keepHistory: false } }, 'following')).toEqual([{ type: 'FeedUnfollowed', data: follow }]);
    expect(decideFollowEdge({ type: 'Unfollow', data: { ...follow, keepHistory: true } }, 'requested')).toEqual([{ type: 'FollowRequestRejected', data: follow }]);
    expect(decideFollowEdge({ type: 'Unfollow', data: { ...follow, keepHistory: true } }, 'none')).toEqual([]);
    // A private feed's history is for its approved followers only: not kept.
    expect(decideFollowEdge({ type: 'Unfollow', data: { ...follow, keepHistory: true }, targetPrivate: true }, 'following')).toEqual([{ type: 'FeedUnfollowed', data: follow }]);
    // A kept history ends as a plain unfollow; a live follow or a request is left alone.
    expect(decideFollowEdge({ type: 'EndKeptHistory', data: follow }, 'none')).toEqual([{ type: 'FeedUnfollowed', data: follow }]);
    expect(decideFollowEdge({ type: 'EndKeptHistory', data: follow }, 'following')).toEqual([]);
    expect(decideFollowEdge({ type: 'EndKeptHistory', data: follow }, 'requested')).toEqual([]);
  });

  it('refuses following oneself', () => {
    expect(() => decideFollowEdge({ type: 'Follow', data: { ...follow, target: 'timeline:a' } }, 'none')).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it('asks a private feed’s owner, who approves (a follow), rejects, or removes; the follower may withdraw', () => {
    expect(decideFollowEdge({ type: 'Follow', data: follow, targetPrivate: true }, 'none')).toEqual([{ type: 'FollowRequested', data: follow }]);
    expect(streamOf({ type: 'FollowRequested', data: follow })).toBe('follows-timeline:a');
    // Asking again, or following when already followed (a feed that turned private keeps its followers), records nothing.
    expect(decideFollowEdge({ type: 'Follow', data: follow, targetPrivate: true }, 'requested')).toEqual([]);
    expect(decideFollowEdge({ type: 'Follow', data: follow, targetPrivate: true }, 'following')).toEqual([]);
    // Asking again once the feed is public follows it.
    expect(decideFollowEdge({ type: 'Follow', data: follow }, 'requested')).toEqual([{ type: 'FeedFollowed', data: follow }]);
    expect(decideFollowEdge({ type: 'Approve', data: follow }, 'requested')).toEqual([{ type: 'FeedFollowed', data: follow }]);
    expect(decideFollowEdge({ type: 'Approve', data: follow }, 'following')).toEqual([]);
    expect(decideFollowEdge({ type: 'Reject', data: follow }, 'requested')).toEqual([{ type: 'FollowRequestRejected', data: follow }]);
    expect(decideFollowEdge({ type: 'Unfollow', data: follow }, 'requested')).toEqual([{ type: 'FollowRequestRejected', data: follow }]);
    expect(decideFollowEdge({ type: 'RemoveFollower', data: follow }, 'following')).toEqual([{ type: 'FeedUnfollowed', data: follow }]);
    expect(decideFollowEdge({ type: 'RemoveFollower', data: follow }, 'none')).toEqual([]);
    for (const type of ['Approve', 'Reject'] as const) expect(() => decideFollowEdge({ type, data: follow }, 'none')).toThrow(expect.objectContaining({ code: 'not_found', field: 'followerId' }));
  });

  it('changes a feed’s privacy only when it differs, in the feed’s settings stream', () => {
    const settings = { feed: 'user:b' as const, private: true, time: 't' };
    const [changed] = decideFeedSettings(settings, false);
    expect(changed).toEqual({ type: 'FeedSettingsChanged', data: settings });
    expect(streamOf(changed!)).toBe('settings-user:b');
    expect(decideFeedSettings(settings, true)).toEqual([]);
  });
});

describe('a batch of adds', () => {
  const receivedAt = '2026-01-01T00:00:00.000Z';
  const item = (feed: FeedId, id: string, extra: { foreignId?: string; time?: string } = {}) => ({ feed, id, activity: { actor: 'a', verb: 'post', object: id, ...extra } });
  const batch = (...activities: AddActivitiesCommand['data']['activities']): AddActivitiesCommand => ({ type: 'AddActivities', data: { id: 'batch-1', receivedAt, activities } });

  /** The activities every projection holds after the batch's events, evolved item by item. */
  function evolved(events: ReturnType<typeof decideAddActivities>['events'], before: Activity[] = []): Map<string, Activity> {
    const byId = new Map(before.map((a) => [a.id, a]));
    for (const item of events.flatMap(eventItems)) {
      if (!isActivityEvent(item)) throw new Error(`unexpected ${item.type}`);
      const after = evolveActivity(byId.get(activityIdOf(item)), item);
      if (after) byId.set(activityIdOf(item), after);
    }
    return byId;
  }

  it('records the new activities in one event, in order, each as a single add would record it', () => {
    const command = batch(item('user:b', 'i1'), item('user:c', 'i2', { time: '2025-05-05T00:00:00.000Z', foreignId: 'f' }));
    const { events, activities } = decideAddActivities(command, () => undefined);
    const alone = command.data.activities.map((a) => run({ type: 'AddActivity', data: { ...a, receivedAt } }, undefined)!);
    expect(activities).toEqual(alone);
    expect(events).toEqual([{ type: 'ActivitiesAdded', data: { id: 'batch-1', activities: alone } }]);
    expect(streamOf(events[0]!)).toBe('import-activities-batch-1');
    expect([...evolved(events).values()]).toEqual(alone);
  });

  it('answers the first activity for a foreignId the feed holds or the batch repeats, and records it once', () => {
    const held = run(add, undefined)!; // user:bob, foreignId f1
    const command = batch(item('user:bob', 'i1', { foreignId: 'f1' }), item('user:bob', 'i2', { foreignId: 'f2' }), item('user:bob', 'i3', { foreignId: 'f2' }), item('user:ann', 'i4', { foreignId: 'f1' }));
    const { events, activities } = decideAddActivities(command, (feed, foreignId) => (foreignIdKey(feed, foreignId) === foreignIdKey('user:bob', 'f1') ? held : undefined));
    expect(activities.map((a) => a.id)).toEqual(['id-1', 'i2', 'i2', 'i4']);
    expect(events[0]!.data.activities.map((a) => a.id)).toEqual(['i2', 'i4']);
    expect([...evolved(events, [held]).keys()].sort()).toEqual(['i2', 'i4', 'id-1']);
  });

  it('records nothing when every item repeats a held foreignId', () => {
    const held = run(add, undefined)!;
    expect(decideAddActivities(batch(item('user:bob', 'i1', { foreignId: 'f1' })), () => held)).toEqual({ events: [], activities: [held] });
    expect(decideAddActivities(batch(), () => undefined)).toEqual({ events: [], activities: [] });
  });

  it('refuses a batch whose event would not fit the log, naming the field', () => {
    const big = { text: 'x'.repeat(MAX_BATCH_BYTES / 4) };
    const command = batch(...Array.from({ length: 5 }, (_, i) => ({ ...item('user:b', `i${i}`), activity: { ...item('user:b', `i${i}`).activity, extra: big } })));
    expect(() => decideAddActivities(command, () => undefined)).toThrow(expect.objectContaining({ code: 'payload_too_large', field: 'activities' }));
  });
});

describe('a batch of follows', () => {
  const command = (...follows: Array<[FeedId, FeedId]>): FollowManyCommand => ({ type: 'FollowMany', data: { id: 'batch-2', time: 't', follows } });

  it('records each new edge once, in one event whose items are the single follows', () => {
    const events = decideFollowMany(command(['timeline:a', 'user:b'], ['timeline:a', 'user:x'], ['timeline:c', 'user:b'], ['timeline:a', 'user:b']), [false, true, false, false]);
    expect(events).toEqual([{ type: 'FeedsFollowed', data: { id: 'batch-2', time: 't', follows: [['timeline:a', 'user:b'], ['timeline:c', 'user:b']] } }]);
    expect(streamOf(events[0]!)).toBe('import-follows-batch-2');
    const items = events.flatMap(eventItems);
    expect(items).toEqual([
      { type: 'FeedFollowed', data: { follower: 'timeline:a', target: 'user:b', time: 't' } },
      { type: 'FeedFollowed', data: { follower: 'timeline:c', target: 'user:b', time: 't' } },
    ]);
    for (const event of items) expect(isFollowEdgeEvent(event) && evolveFollowEdge(false, event)).toBe(true);
  });

  it('records what a set of edge keys says is new, first occurrences in order, for random batches', () => {
    const random = seededRandom(9);
    const feed = (group: string, count: number) => `${group}:${Math.floor(random() * count)}` as FeedId;
    for (let round = 0; round < 200; round++) {
      // Up to 20 targets per follower: past the few a follower's list holds before it becomes a set.
      const follows = Array.from({ length: 1 + Math.floor(random() * 120) }, () => [feed('timeline', 5), feed('user', 20)] as [FeedId, FeedId]);
      const following = follows.map(() => random() < 0.3);
      const seen = new Set<string>();
      const expected = follows.filter(([follower, target], index) => {
        const key = `${follower}|${target}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return !following[index];
      });
      const events = decideFollowMany(command(...follows), following);
      expect(events.flatMap((event) => event.data.follows)).toEqual(expected);
      expect(events).toHaveLength(expected.length === 0 ? 0 : 1);
    }
  });

  it('records nothing when every edge exists', () => {
    expect(decideFollowMany(command(['timeline:a', 'user:b']), [true])).toEqual([]);
  });

  it('refuses a feed following itself, naming the item', () => {
    expect(() => decideFollowMany(command(['timeline:a', 'user:b'], ['timeline:a', 'timeline:a']), [false, false])).toThrow(
      expect.objectContaining({ code: 'invalid_request', field: 'follows[1].target' }),
    );
  });

  it('refuses a batch whose event would not fit the log', () => {
    const long = 'x'.repeat(120);
    const follows = Array.from({ length: 4_000 }, (_, i) => [`timeline:${long}${i}`, `user:${long}${i}`] as [FeedId, FeedId]);
    expect(() => decideFollowMany(command(...follows), follows.map(() => false))).toThrow(expect.objectContaining({ code: 'payload_too_large', field: 'follows' }));
  });
});

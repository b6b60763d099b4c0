import type { Activity } from '@feedmill/contracts';
import { decideActivity, evolveActivity, type ActivityCommand } from './activity.js';
import { decideFollowEdge, evolveFollowEdge } from './follow-edge.js';
import { streamOf } from './streams.js';

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
});

describe('follow edge', () => {
  const follow = { follower: 'timeline:a' as const, target: 'user:b' as const, time: 't' };

  it('follows and unfollows idempotently, in the follower’s stream', () => {
    const [followed] = decideFollowEdge({ type: 'Follow', data: follow }, false);
    expect(followed).toEqual({ type: 'FeedFollowed', data: follow });
    expect(streamOf(followed!)).toBe('follows-timeline:a');
    expect(evolveFollowEdge(false, followed!)).toBe(true);
    expect(decideFollowEdge({ type: 'Follow', data: follow }, true)).toEqual([]);
    const [unfollowed] = decideFollowEdge({ type: 'Unfollow', data: follow }, true);
    expect(unfollowed?.type).toBe('FeedUnfollowed');
    expect(evolveFollowEdge(true, unfollowed!)).toBe(false);
    expect(decideFollowEdge({ type: 'Unfollow', data: follow }, false)).toEqual([]);
  });

  it('refuses following oneself', () => {
    expect(() => decideFollowEdge({ type: 'Follow', data: { ...follow, target: 'timeline:a' } }, false)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});

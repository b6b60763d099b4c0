import type { Activity } from '@feedmill/contracts';
import { decideAddActivity, decideBumpActivity, decideFollow, decideRemoveActivity, decideUnfollow } from './deciders.js';

const command = { feed: 'user:bob' as const, activity: { actor: 'bob', verb: 'post', object: 'o', foreignId: 'f1' }, id: 'id-1', receivedAt: '2026-01-01T00:00:00.000Z' };

describe('deciders', () => {
  it('adds an activity stamped with the command’s id and time', () => {
    const decision = decideAddActivity(command, undefined);
    expect(decision).toMatchObject({ kind: 'added', stream: 'feed-user:bob', event: { type: 'ActivityAdded' } });
    expect(decision.activity).toEqual({ id: 'id-1', feed: 'user:bob', actor: 'bob', verb: 'post', object: 'o', time: command.receivedAt, foreignId: 'f1' });
  });

  it('keeps a time given by the client', () => {
    const decision = decideAddActivity({ ...command, activity: { ...command.activity, time: '2025-05-05T00:00:00.000Z' } }, undefined);
    expect(decision.activity.time).toBe('2025-05-05T00:00:00.000Z');
  });

  it('returns the first activity for a repeated foreignId and decides no event', () => {
    const first = decideAddActivity(command, undefined).activity;
    expect(decideAddActivity({ ...command, id: 'id-2' }, first)).toEqual({ kind: 'duplicate', activity: first });
  });

  it('removes only an activity of the same feed', () => {
    const activity: Activity = decideAddActivity(command, undefined).activity;
    expect(decideRemoveActivity({ feed: 'user:bob', id: 'id-1', time: 't' }, activity).event.type).toBe('ActivityRemoved');
    expect(() => decideRemoveActivity({ feed: 'user:dan', id: 'id-1', time: 't' }, activity)).toThrow(expect.objectContaining({ code: 'activity_not_found' }));
    expect(() => decideRemoveActivity({ feed: 'user:bob', id: 'id-9', time: 't' }, undefined)).toThrow(expect.objectContaining({ code: 'activity_not_found' }));
  });

  it('follows and unfollows idempotently, and refuses following oneself', () => {
    const follow = { follower: 'timeline:a' as const, target: 'user:b' as const, time: 't' };
    expect(decideFollow(follow, false)?.event).toEqual({ type: 'FeedFollowed', data: follow });
    expect(decideFollow(follow, true)).toBeNull();
    expect(decideUnfollow(follow, true)?.event.type).toBe('FeedUnfollowed');
    expect(decideUnfollow(follow, false)).toBeNull();
    expect(() => decideFollow({ ...follow, target: 'timeline:a' }, false)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });

  it('bumps an activity forward only, recording nothing for a bump no later than its relevance', () => {
    const activity: Activity = decideAddActivity(command, undefined).activity;
    const later = decideBumpActivity({ feed: 'user:bob', id: 'id-1', time: '2026-03-01T00:00:00.000Z' }, activity);
    expect(later.event).toEqual({ type: 'ActivityBumped', data: { id: 'id-1', feed: 'user:bob', time: '2026-03-01T00:00:00.000Z' } });
    expect(later.activity.bumpedAt).toBe('2026-03-01T00:00:00.000Z');
    expect(decideBumpActivity({ feed: 'user:bob', id: 'id-1', time: '2026-02-01T00:00:00.000Z' }, later.activity).event).toBeUndefined();
    expect(() => decideBumpActivity({ feed: 'user:bob', id: 'nope', time: 't' }, undefined)).toThrow(expect.objectContaining({ code: 'activity_not_found' }));
  });
});

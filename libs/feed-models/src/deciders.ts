import {
  activityStream,
  FeedmillError,
  followStream,
  type Activity,
  type ActivityAdded,
  type ActivityBumped,
  type ActivityRemoved,
  type FeedFollowed,
  type FeedId,
  type FeedUnfollowed,
  type NewActivity,
} from '@feedmill/contracts';

/**
 * Deciders turn a command and the current state into events. They are pure: ids and times
 * come in with the command, and the caller appends what they return.
 */
export interface AddActivityCommand {
  feed: FeedId;
  activity: NewActivity & { time?: string };
  id: string;
  receivedAt: string;
}

export type AddActivityDecision =
  | { kind: 'duplicate'; activity: Activity }
  | { kind: 'added'; activity: Activity; stream: string; event: ActivityAdded };

/** A second add with the same `foreignId` to the same feed returns the first activity. */
export function decideAddActivity(command: AddActivityCommand, sameForeignId: Activity | undefined): AddActivityDecision {
  if (sameForeignId) return { kind: 'duplicate', activity: sameForeignId };
  const { actor, verb, object, time, foreignId, extra } = command.activity;
  const activity: Activity = {
    id: command.id,
    feed: command.feed,
    actor,
    verb,
    object,
    time: time ?? command.receivedAt,
    ...(foreignId === undefined ? {} : { foreignId }),
    ...(extra === undefined ? {} : { extra }),
  };
  return { kind: 'added', activity, stream: activityStream(command.feed), event: { type: 'ActivityAdded', data: { activity } } };
}

export function decideRemoveActivity(
  command: { feed: FeedId; id: string; time: string },
  existing: Activity | undefined,
): { stream: string; event: ActivityRemoved } {
  if (!existing || existing.feed !== command.feed) {
    throw new FeedmillError('activity_not_found', `activity ${command.id} is not in feed ${command.feed}`, 'activityId');
  }
  return {
    stream: activityStream(command.feed),
    event: { type: 'ActivityRemoved', data: { id: command.id, feed: command.feed, time: command.time } },
  };
}

/**
 * A bump raises an activity for relevancy-ordered readers. A bump no later than the
 * activity's current relevance changes nothing and records nothing.
 */
export function decideBumpActivity(
  command: { feed: FeedId; id: string; time: string },
  existing: Activity | undefined,
): { activity: Activity; stream: string; event: ActivityBumped } | { activity: Activity; stream?: undefined; event?: undefined } {
  if (!existing || existing.feed !== command.feed) {
    throw new FeedmillError('activity_not_found', `activity ${command.id} is not in feed ${command.feed}`, 'activityId');
  }
  const relevance = existing.bumpedAt !== undefined && existing.bumpedAt > existing.time ? existing.bumpedAt : existing.time;
  if (command.time <= relevance) return { activity: existing };
  return {
    activity: { ...existing, bumpedAt: command.time },
    stream: activityStream(command.feed),
    event: { type: 'ActivityBumped', data: { id: command.id, feed: command.feed, time: command.time } },
  };
}

export interface FollowCommand {
  follower: FeedId;
  target: FeedId;
  time: string;
}

/** Following twice is not an error and records nothing the second time. */
export function decideFollow(command: FollowCommand, alreadyFollowing: boolean): { stream: string; event: FeedFollowed } | null {
  if (command.follower === command.target) throw new FeedmillError('invalid_request', 'a feed cannot follow itself', 'target');
  if (alreadyFollowing) return null;
  return { stream: followStream(command.follower), event: { type: 'FeedFollowed', data: { ...command } } };
}

export function decideUnfollow(command: FollowCommand, following: boolean): { stream: string; event: FeedUnfollowed } | null {
  if (!following) return null;
  return { stream: followStream(command.follower), event: { type: 'FeedUnfollowed', data: { ...command } } };
}

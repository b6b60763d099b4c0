import { FeedmillError, type FeedEvent, type FeedFollowed, type FeedId, type FeedUnfollowed } from '@feedmill/contracts';

/**
 * A follow edge (follower, target) as an aggregate whose state is whether it exists. Following
 * twice, or unfollowing what one does not follow, is not an error and records nothing.
 */
export type FollowEdgeEvent = FeedFollowed | FeedUnfollowed;

export const followEdgeEventTypes: ReadonlySet<string> = new Set<FollowEdgeEvent['type']>(['FeedFollowed', 'FeedUnfollowed']);
export const isFollowEdgeEvent = (event: FeedEvent): event is FollowEdgeEvent => followEdgeEventTypes.has(event.type);

export type FollowEdgeCommand =
  | { type: 'Follow'; data: { follower: FeedId; target: FeedId; time: string } }
  | { type: 'Unfollow'; data: { follower: FeedId; target: FeedId; time: string } };

export function decideFollowEdge(command: FollowEdgeCommand, following: boolean): FollowEdgeEvent[] {
  if (command.type === 'Follow') {
    if (command.data.follower === command.data.target) throw new FeedmillError('invalid_request', 'a feed cannot follow itself', 'target');
    return following ? [] : [{ type: 'FeedFollowed', data: { ...command.data } }];
  }
  return following ? [{ type: 'FeedUnfollowed', data: { ...command.data } }] : [];
}

export function evolveFollowEdge(_following: boolean, event: FollowEdgeEvent): boolean {
  return event.type === 'FeedFollowed';
}

import {
  assertBatchFits,
  followBatchBytes,
  FeedmillError,
  type FeedEvent,
  type FeedFollowed,
  type FeedId,
  type FeedLogEvent,
  type FeedSettingsChanged,
  type FeedsFollowed,
  type FeedUnfollowed,
  type FollowRequested,
  type FollowRequestRejected,
} from '@feedmill/contracts';

/**
 * A follow edge (follower, target) as an aggregate: none, requested (a follow of a private
 * feed waiting for its owner), or following. Following twice, or unfollowing what one does
 * not follow, is not an error and records nothing.
 */
export type FollowEdgeEvent = FeedFollowed | FeedUnfollowed;
export type FollowRequestEvent = FollowRequested | FollowRequestRejected;
export type EdgeState = 'none' | 'requested' | 'following';

const singleFollowEdgeEventTypes: ReadonlySet<string> = new Set<FollowEdgeEvent['type']>(['FeedFollowed', 'FeedUnfollowed']);
/** Whether an event changes who follows whom (requests and settings do not). */
export const isFollowEdgeEvent = (event: FeedEvent): event is FollowEdgeEvent => singleFollowEdgeEventTypes.has(event.type);
const followRequestEventTypes: ReadonlySet<string> = new Set<FollowRequestEvent['type']>(['FollowRequested', 'FollowRequestRejected']);
export const isFollowRequestEvent = (event: FeedEvent): event is FollowRequestEvent => followRequestEventTypes.has(event.type);
/**
 * The types of logged events that hold follow-edge events, a batch of follows among them:
 * what a projection of follows reads (and decodes into single events with `eventItems`).
 */
export const followEdgeEventTypes: ReadonlySet<string> = new Set<(FollowEdgeEvent | FeedsFollowed)['type']>(['FeedFollowed', 'FeedUnfollowed', 'FeedsFollowed']);
/** What graph projects: follows, follow requests and feeds' settings. */
export const graphEventTypes: ReadonlySet<string> = new Set([...followEdgeEventTypes, ...followRequestEventTypes, 'FeedSettingsChanged', 'FeedErased']);
/** Of {@link graphEventTypes}, those graph reads from streams it otherwise skips: an erasure, in its feed's activity stream. */
export const graphPartlyReadEventTypes: ReadonlySet<string> = new Set(['FeedErased']);

/** Whether a graph event changes anything of `feed`'s: an edge or request it is a side of, or its settings. */
export function graphEventConcerns(event: FeedLogEvent, feed: FeedId): boolean {
  switch (event.type) {
    case 'FeedFollowed':
    case 'FeedUnfollowed':
    case 'FollowRequested':
    case 'FollowRequestRejected':
      return event.data.follower === feed || event.data.target === feed;
    case 'FeedsFollowed':
      return event.data.follows.some(([follower, target]) => follower === feed || target === feed);
    case 'FeedSettingsChanged':
    case 'FeedErased':
      return event.data.feed === feed;
    default:
      return false;
  }
}

type EdgeData = { follower: FeedId; target: FeedId; time: string };

export type FollowEdgeCommand =
  /**
   * By the follower; a private target's follow waits for approval. `since` bounds the
   * target's history the follow brings (a time key; activities added later always come).
   */
  | { type: 'Follow'; data: EdgeData & { since?: string }; targetPrivate?: boolean }
  /**
   * By the follower: unfollows (keeping what the feed delivered with `keepHistory`, unless
   * the feed is private: only its approved followers may see it), or withdraws its request.
   */
  | { type: 'Unfollow'; data: EdgeData & { keepHistory?: boolean }; targetPrivate?: boolean }
  /**
   * Ends a reader's kept history of a feed it no longer follows (the feed turned private, or
   * its owner removed the reader): recorded as a plain unfollow, which drops the entries.
   */
  | { type: 'EndKeptHistory'; data: EdgeData }
  /** By the target's owner. */
  | { type: 'Approve'; data: EdgeData }
  | { type: 'Reject'; data: EdgeData }
  /** By the target's owner: the follower, or its request, goes. */
  | { type: 'RemoveFollower'; data: EdgeData };

export function decideFollowEdge(command: FollowEdgeCommand, state: EdgeState): Array<FollowEdgeEvent | FollowRequestEvent> {
  // Only the edge's own fields: a command's options become an event's only where they apply.
  const data: EdgeData = { follower: command.data.follower, target: command.data.target, time: command.data.time };
  switch (command.type) {
    case 'Follow': {
      if (data.follower === data.target) throw new FeedmillError('invalid_request', 'a feed cannot follow itself', 'target');
      // A request to a feed that has turned public since is a follow now.
      if (state === 'following' || (state === 'requested' && command.targetPrivate)) return [];
      if (command.targetPrivate) return [{ type: 'FollowRequested', data }];
      const { since } = command.data;
      return [{ type: 'FeedFollowed', data: since === undefined ? data : { ...data, since } }];
    }
    case 'Unfollow':
    case 'RemoveFollower':
      if (state === 'following') {
        const keep = command.type === 'Unfollow' && command.data.keepHistory === true && command.targetPrivate !== true;
        return [{ type: 'FeedUnfollowed', data: keep ? { ...data, keepHistory: true } : data }];
      }
      return state === 'requested' ? [{ type: 'FollowRequestRejected', data }] : [];
    case 'EndKeptHistory':
      // A follow since (or a request) is the edge's own business: only a kept history ends.
      return state === 'none' ? [{ type: 'FeedUnfollowed', data }] : [];
    case 'Approve':
    case 'Reject':
      if (state === 'following' && command.type === 'Approve') return [];
      if (state !== 'requested') throw new FeedmillError('not_found', `${data.follower} has not asked to follow ${data.target}`, 'followerId');
      return [{ type: command.type === 'Approve' ? 'FeedFollowed' : 'FollowRequestRejected', data }];
  }
}

/** Whether the edge exists after the event. */
export function evolveFollowEdge(_following: boolean, event: FollowEdgeEvent): boolean {
  return event.type === 'FeedFollowed';
}

/** Many follows, of many followers, decided together and recorded as one event: an import. */
export interface FollowManyCommand {
  type: 'FollowMany';
  /** The pairs that are new become the event's own: they are not copied. */
  data: { id: string; time: string; follows: ReadonlyArray<[FeedId, FeedId]> };
}

/** A feed's privacy as an aggregate: changing it to what it is records nothing. */
export function decideFeedSettings(data: { feed: FeedId; private: boolean; time: string }, isPrivate: boolean): FeedSettingsChanged[] {
  return data.private === isPrivate ? [] : [{ type: 'FeedSettingsChanged', data: { ...data } }];
}

/**
 * Decides each follow of a batch by {@link decideFollowEdge}'s rules: a feed may not follow
 * itself (refused, naming the item), and an edge that exists (`following[i]` says so for
 * item i), or that the batch names twice, is recorded once or not at all. The new edges
 * make one `FeedsFollowed` (none when nothing is new). Refuses a batch whose event would
 * not fit the log. The rules are applied here rather than by calling it per item: a batch
 * holds 10,000.
 */
export function decideFollowMany(command: FollowManyCommand, following: readonly boolean[]): FeedsFollowed[] {
  const { id, time, follows: items } = command.data;
  // Per follower, the targets seen so far: no key is built per edge.
  const seen = new Map<FeedId, TargetsSeen>();
  const follows: Array<[FeedId, FeedId]> = [];
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    const follower = item[0];
    const target = item[1];
    if (follower === target) throw new FeedmillError('invalid_request', `follows[${index}].target: a feed cannot follow itself`, `follows[${index}].target`);
    if (seenBefore(seen, follower, target)) continue;
    if (!following[index]) follows.push(item);
  }
  if (follows.length === 0) return [];
  const event: FeedsFollowed = { type: 'FeedsFollowed', data: { id, time, follows } };
  assertBatchFits(followBatchBytes(event.data), follows.length, 'follows');
  return [event];
}

/** A follower's targets in a batch: a short list, and a set once there are more than {@link LISTED_TARGETS}. */
type TargetsSeen = FeedId[] | Set<FeedId>;
/** An import's readers follow a handful of feeds each: a list of these costs less than a set. */
const LISTED_TARGETS = 8;

/** Whether the batch named this edge before; remembers it when not. */
function seenBefore(seen: Map<FeedId, TargetsSeen>, follower: FeedId, target: FeedId): boolean {
  const targets = seen.get(follower);
  if (targets === undefined) {
    seen.set(follower, [target]);
    return false;
  }
  if (!Array.isArray(targets)) {
    if (targets.has(target)) return true;
    targets.add(target);
    return false;
  }
  if (targets.includes(target)) return true;
  if (targets.length < LISTED_TARGETS) targets.push(target);
  else seen.set(follower, new Set(targets).add(target));
  return false;
}

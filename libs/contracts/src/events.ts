import type { Activity } from './activity.js';
import type { FeedId } from './feeds.js';

/**
 * Events are facts in the past tense. Each carries a schema version in its metadata so
 * that an old shape can be upcast in one place ({@link upcastEvent}) when read.
 */
export interface ActivityAdded {
  type: 'ActivityAdded';
  data: { activity: Activity };
}

export interface ActivityRemoved {
  type: 'ActivityRemoved';
  data: { id: string; feed: FeedId; time: string };
}

export interface FeedFollowed {
  type: 'FeedFollowed';
  data: { follower: FeedId; target: FeedId; time: string };
}

export interface FeedUnfollowed {
  type: 'FeedUnfollowed';
  data: { follower: FeedId; target: FeedId; time: string };
}

export type FeedEvent = ActivityAdded | ActivityRemoved | FeedFollowed | FeedUnfollowed;
export type FeedEventType = FeedEvent['type'];

/** The schema version written today for each event type. */
export const currentEventVersion: Record<FeedEventType, number> = {
  ActivityAdded: 1,
  ActivityRemoved: 1,
  FeedFollowed: 1,
  FeedUnfollowed: 1,
};

/** Events about a feed's activities live in one stream per feed; follows in one per follower. */
export const activityStream = (feed: FeedId): string => `feed-${feed}`;
export const followStream = (follower: FeedId): string => `follows-${follower}`;

export class UnknownEventVersionError extends Error {
  override readonly name = 'UnknownEventVersionError';
  constructor(
    readonly type: string,
    readonly version: number,
  ) {
    super(`event ${type} has schema version ${version}, newer than this build knows`);
  }
}

const knownTypes = new Set<string>(Object.keys(currentEventVersion));

/**
 * Turns a stored event into today's shape. Returns undefined for types this build does not
 * consume, so that newer writers can add events without breaking older readers.
 */
export function upcastEvent(type: string, data: unknown, version = 1): FeedEvent | undefined {
  if (!knownTypes.has(type)) return undefined;
  if (version > currentEventVersion[type as FeedEventType]) throw new UnknownEventVersionError(type, version);
  // Every event is at version 1 today; an upcaster per older version goes here.
  return { type, data } as FeedEvent;
}

import { z } from 'zod';
import { activitySchema } from './activity.js';
import { feedIdSchema, idSchema, type FeedId } from './feeds.js';

/**
 * Events are facts in the past tense. Each carries a schema version in its metadata so
 * that an old shape can be upcast in one place ({@link upcastEvent}) when read.
 */
const followData = z.strictObject({ follower: feedIdSchema, target: feedIdSchema, time: z.string() });

export const feedEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('ActivityAdded'), data: z.strictObject({ activity: activitySchema }) }),
  z.strictObject({ type: z.literal('ActivityRemoved'), data: z.strictObject({ id: idSchema, feed: feedIdSchema, time: z.string() }) }),
  z.strictObject({ type: z.literal('ActivityBumped'), data: z.strictObject({ id: idSchema, feed: feedIdSchema, time: z.string() }) }),
  z.strictObject({ type: z.literal('FeedFollowed'), data: followData }),
  z.strictObject({ type: z.literal('FeedUnfollowed'), data: followData }),
]);

export type FeedEvent = z.output<typeof feedEventSchema>;
export type FeedEventType = FeedEvent['type'];
export type ActivityAdded = Extract<FeedEvent, { type: 'ActivityAdded' }>;
export type ActivityRemoved = Extract<FeedEvent, { type: 'ActivityRemoved' }>;
export type ActivityBumped = Extract<FeedEvent, { type: 'ActivityBumped' }>;
export type FeedFollowed = Extract<FeedEvent, { type: 'FeedFollowed' }>;
export type FeedUnfollowed = Extract<FeedEvent, { type: 'FeedUnfollowed' }>;

/** The schema version written today for each event type. */
export const currentEventVersion: Record<FeedEventType, number> = {
  ActivityAdded: 1,
  ActivityRemoved: 1,
  ActivityBumped: 1,
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

/** A stored event that does not have the shape its type and version promise. */
export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
  constructor(
    readonly type: string,
    readonly problem: string,
  ) {
    super(`stored ${type} event is malformed: ${problem}`);
  }
}

const knownTypes = new Set<string>(Object.keys(currentEventVersion));

/**
 * Turns a stored event into today's shape, checked against its schema. Returns undefined
 * for types this build does not consume, so that newer writers can add events without
 * breaking older readers; throws for a version it does not know or a malformed event, so
 * that a projection stops rather than silently differing from the log.
 */
export function upcastEvent(type: string, data: unknown, version = 1): FeedEvent | undefined {
  if (!knownTypes.has(type)) return undefined;
  if (version > currentEventVersion[type as FeedEventType]) throw new UnknownEventVersionError(type, version);
  // Every event is at version 1 today; an upcaster per older version goes here.
  const parsed = feedEventSchema.safeParse({ type, data });
  if (!parsed.success) throw new MalformedEventError(type, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  return parsed.data;
}

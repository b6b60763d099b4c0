import { z } from 'zod';
import { activitySchema } from './activity.js';
import { eventCodec } from './event-codec.js';
import { feedIdSchema, idSchema, type FeedId } from './feeds.js';

/**
 * Events are facts in the past tense. The codec writes each with its schema version and
 * reads every older version back in today's shape: when a shape changes, its schema here
 * changes and an upcaster from the previous version joins its definition.
 */
const followData = z.strictObject({ follower: feedIdSchema, target: feedIdSchema, time: z.string() });
const activityChange = z.strictObject({ id: idSchema, feed: feedIdSchema, time: z.string() });

export const feedEvents = eventCodec({
  ActivityAdded: { schema: z.strictObject({ activity: activitySchema }) },
  ActivityRemoved: { schema: activityChange },
  ActivityBumped: { schema: activityChange },
  FeedFollowed: { schema: followData },
  FeedUnfollowed: { schema: followData },
});

export type FeedEvent = NonNullable<ReturnType<typeof feedEvents.decode>>;
export type FeedEventType = FeedEvent['type'];
export type ActivityAdded = Extract<FeedEvent, { type: 'ActivityAdded' }>;
export type ActivityRemoved = Extract<FeedEvent, { type: 'ActivityRemoved' }>;
export type ActivityBumped = Extract<FeedEvent, { type: 'ActivityBumped' }>;
export type FeedFollowed = Extract<FeedEvent, { type: 'FeedFollowed' }>;
export type FeedUnfollowed = Extract<FeedEvent, { type: 'FeedUnfollowed' }>;

/** A decoded event with the log position it was stored at. */
export interface PositionedEvent {
  position: number;
  event: FeedEvent;
}

/**
 * The feed events of a batch read from the log, decoded, in order; events of other types
 * (fan-out's dead letters, or types a newer writer added) are left out.
 */
export function decodeFeedEvents(records: ReadonlyArray<{ position: number; type: string; data: unknown; metadata?: Record<string, unknown> }>): PositionedEvent[] {
  const decoded: PositionedEvent[] = [];
  for (const record of records) {
    const event = feedEvents.decode(record);
    if (event) decoded.push({ position: record.position, event });
  }
  return decoded;
}

/** Events about a feed's activities live in one stream per feed; follows in one per follower. */
export const activityStream = (feed: FeedId): string => `feed-${feed}`;
export const followStream = (follower: FeedId): string => `follows-${follower}`;

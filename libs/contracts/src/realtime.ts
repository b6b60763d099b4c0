import { z } from 'zod';
import { activitySchema } from './activity.js';
import { feedIdSchema, idSchema, type FeedId } from './feeds.js';
import { activityGroupSchema } from './messages.js';

/** In a notification feed's events: the reader's counts as of the event, as a read answers them. */
const notificationCounts = { unseen: z.number().int().min(0).optional(), unread: z.number().int().min(0).optional() };

/**
 * What a feed's realtime stream says about its first page. `added`: an activity is now in
 * it (new, or risen into it); `updated`: one in it changed (an update, or a bump that moved
 * it); `removed`: one left it other than by being pushed below by newer ones (removed, an
 * unfollow); `reset`: here is the whole first page, as of now (a new stream, or one that
 * resumed from an event no longer kept). `cursor` is the activity's (or the page's newest)
 * cursor, for newer-than polls.
 *
 * An aggregated (or notification) feed's first page is groups: its `reset` holds `groups`,
 * and a change is a `group` event: take the group out wherever it is shown and put this
 * version at `rank` (0 is the top), or take out the group `removed` names (it lost every
 * activity). Applied in order, they turn the page a client shows into the new one.
 */
export const streamEventSchema = z.discriminatedUnion('type', [
  z.strictObject({ id: z.string(), type: z.literal('added'), data: z.strictObject({ activity: activitySchema, cursor: z.string() }) }),
  z.strictObject({ id: z.string(), type: z.literal('updated'), data: z.strictObject({ activity: activitySchema, cursor: z.string() }) }),
  z.strictObject({ id: z.string(), type: z.literal('removed'), data: z.strictObject({ id: idSchema }) }),
  z.strictObject({
    id: z.string(),
    type: z.literal('reset'),
    data: z.union([z.strictObject({ items: z.array(activitySchema), newest: z.string().nullable() }), z.strictObject({ groups: z.array(activityGroupSchema), ...notificationCounts })]),
  }),
  z.strictObject({
    id: z.string(),
    type: z.literal('group'),
    data: z.union([
      z.strictObject({ group: activityGroupSchema, rank: z.number().int().min(0), ...notificationCounts }),
      z.strictObject({ removed: z.string(), ...notificationCounts }),
    ]),
  }),
]);
export type StreamEvent = z.output<typeof streamEventSchema>;
export type StreamEventType = StreamEvent['type'];

/** Who watches: one gateway process, named by an id of its own, so that its leases are its own. */
const watcherSchema = z.string().min(1).max(100);

/**
 * A gateway opens a stream on a feed: its watch (tier 1) starts or is renewed, and the reply
 * holds what the stream starts with: the events after `lastEventId` when they are still
 * kept, else a `reset`.
 */
export const watchRequestSchema = z.strictObject({ feed: feedIdSchema, watcher: watcherSchema, lastEventId: z.string().max(200).optional() });
export const watchReplySchema = z.strictObject({ events: z.array(streamEventSchema) });
export type WatchRequest = z.output<typeof watchRequestSchema>;
export type WatchReply = z.output<typeof watchReplySchema>;

/** A gateway still has streams open on these feeds: their watches last another lease. */
export const renewWatchesRequestSchema = z.strictObject({ feeds: z.array(feedIdSchema).max(100_000), watcher: watcherSchema });
export const renewWatchesReplySchema = z.strictObject({ renewed: z.number().int().min(0) });

/** A gateway's last stream on a feed closed: the feed goes to its grace period (tier 2). */
export const unwatchRequestSchema = z.strictObject({ feed: feedIdSchema, watcher: watcherSchema });
export const unwatchReplySchema = z.strictObject({});

/** The NATS subject a feed's stream events are published on: `feed.realtime.<group>.<id>` (ids hold no dots). */
export function realtimeSubject(feed: FeedId): string {
  return `feed.realtime.${feed.replace(':', '.')}`;
}

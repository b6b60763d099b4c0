import { z } from 'zod';
import { activitySchema, isoTimeSchema, newActivitySchema } from './activity.js';
import { MAX_ACTIVITIES_PER_REQUEST, MAX_FOLLOWS_PER_REQUEST } from './batch-limits.js';
import { edgeBoundSchema } from './edge-bounds.js';
import { feedIdSchema, feedPairsSchema, idSchema } from './feeds.js';

const sortKeySchema = z.string().min(1).max(300);
/** A global log position the answering projection must have applied before it answers. */
const atLeastSchema = z.number().int().min(0).optional();
export const pageLimitSchema = z.number().int().min(1).max(1000);

export const addActivityRequestSchema = z.strictObject({
  feed: feedIdSchema,
  activity: newActivitySchema,
  /** Assigned at the edge: `decide` never reads a clock or makes ids. */
  id: idSchema,
  receivedAt: z.string(),
});
export type AddActivityRequest = z.output<typeof addActivityRequestSchema>;

/** Many activities, to many producer feeds, added as one event: all of them or none. */
export const addActivitiesRequestSchema = z.strictObject({
  /** Names the batch, and so its stream; assigned at the edge, like each activity's id. */
  id: idSchema,
  receivedAt: z.string(),
  activities: z.array(z.strictObject({ feed: feedIdSchema, id: idSchema, activity: newActivitySchema })).max(MAX_ACTIVITIES_PER_REQUEST),
});
export type AddActivitiesRequest = z.output<typeof addActivitiesRequestSchema>;

export const removeActivityRequestSchema = z.strictObject({ feed: feedIdSchema, id: idSchema, time: z.string() });
export type RemoveActivityRequest = z.output<typeof removeActivityRequestSchema>;

export const removeActivityReplySchema = z.strictObject({ removed: z.literal(true) });
export type RemoveActivityReply = z.output<typeof removeActivityReplySchema>;

export const bumpActivityRequestSchema = z.strictObject({ feed: feedIdSchema, id: idSchema, time: z.string() });
export type BumpActivityRequest = z.output<typeof bumpActivityRequestSchema>;

/** What a client may send to bump: a time, else the server's. */
export const bumpBodySchema = z.strictObject({ time: isoTimeSchema.optional() });

/** An update in place, as the gateway sends it: the changes a client sent (`activityChangesSchema`), stamped with the server's time. */
export const updateActivityRequestSchema = z.strictObject({
  feed: feedIdSchema,
  id: idSchema,
  time: z.string(),
  object: newActivitySchema.shape.object.optional(),
  extra: newActivitySchema.shape.extra,
});
export type UpdateActivityRequest = z.output<typeof updateActivityRequestSchema>;

export const getActivitiesRequestSchema = z.strictObject({ ids: z.array(idSchema).max(10_000), atLeast: atLeastSchema });
export type GetActivitiesRequest = z.output<typeof getActivitiesRequestSchema>;

/** The log position each activity was added at, in the order asked; null for one not held (removed). */
export const activityPositionsReplySchema = z.strictObject({ positions: z.array(z.number().int().min(0).nullable()) });
export type ActivityPositionsReply = z.output<typeof activityPositionsReplySchema>;

export const recentActivitiesRequestSchema = z.strictObject({
  feeds: z.array(feedIdSchema).max(100_000),
  /** Only keys strictly below this one. */
  before: sortKeySchema.optional(),
  /** Newer-than polling: the newest `limit` with keys strictly above this one (not with `before`). */
  after: sortKeySchema.optional(),
  limit: z.number().int().min(1).max(10_000),
  atLeast: atLeastSchema,
  /** Only activities added at or before this log position: what a feed held at that moment. */
  atMost: z.number().int().min(0).optional(),
  /** @defaultValue 'time' */
  order: z.enum(['time', 'relevance']).optional(),
  /** Fewer items (at least one) when more would pass about this many bytes; `next` then says where to go on. */
  maxBytes: z.number().int().min(1).optional(),
  /** Per feed, what of it a reader's timeline holds (see `isWithinBound`); feeds not named are read whole. */
  bounds: z.array(edgeBoundSchema).optional(),
});
export type TimelineOrder = 'time' | 'relevance';
export type RecentActivitiesRequest = z.output<typeof recentActivitiesRequestSchema>;

/**
 * The newest `limit` activities of each of many feeds, one page per feed, as `recent` would
 * answer each alone: what a batch of follows backfills, in one request instead of one each.
 * Pages are filled in order until about `maxBytes`; a feed left past it gets `null` and is
 * asked alone.
 */
export const recentEachRequestSchema = z.strictObject({
  feeds: z.array(feedIdSchema).min(1).max(1_000),
  limit: z.number().int().min(1).max(10_000),
  atLeast: atLeastSchema,
  atMost: z.number().int().min(0).optional(),
  /** @defaultValue 'time' */
  order: z.enum(['time', 'relevance']).optional(),
  maxBytes: z.number().int().min(1).optional(),
});
export type RecentEachRequest = z.output<typeof recentEachRequestSchema>;

export const activityPageSchema = z.strictObject({
  items: z.array(activitySchema),
  /** Key of the last item when more may follow, else null. For a read `after` a key: set when more newer entries lie below the page. */
  next: sortKeySchema.nullable(),
  /** Key of the first (newest) item, the cursor to poll with (`after`); null for an empty page. Set by feed reads only. */
  newest: sortKeySchema.nullable().optional(),
});
export type ActivityPage = z.output<typeof activityPageSchema>;

/** One page per feed asked, in the same order; `null` for a feed past the byte budget. */
export const recentEachReplySchema = z.strictObject({ pages: z.array(activityPageSchema.nullable()) });
export type RecentEachReply = z.output<typeof recentEachReplySchema>;

export const followRequestSchema = z.strictObject({
  follower: feedIdSchema,
  target: feedIdSchema,
  time: z.string(),
  /** For a follow: the oldest time key of the target's history it brings (the gateway's reading of `copyLimit`). */
  since: sortKeySchema.optional(),
  /** For an unfollow: the timeline keeps what the feed delivered. */
  keepHistory: z.boolean().optional(),
});
export type FollowRequest = z.output<typeof followRequestSchema>;

/**
 * Many follows, recorded as one event: all of them or none. Edges are `[follower, target]`
 * pairs, the shape the event stores, so that the request is no larger than the event.
 */
export const followManyRequestSchema = z.strictObject({
  /** Names the batch, and so its stream; assigned at the edge. */
  id: idSchema,
  time: z.string(),
  /** The follows are approved (an admin importing them): private targets are followed, not refused. */
  approved: z.boolean().optional(),
  follows: feedPairsSchema({ max: MAX_FOLLOWS_PER_REQUEST }),
});
export type FollowManyRequest = z.output<typeof followManyRequestSchema>;

/** How many follows the request carried: each edge now exists, whether it did before or not. */
export const followManyReplySchema = z.strictObject({ count: z.number().int().min(0) });
export type FollowManyReply = z.output<typeof followManyReplySchema>;

/**
 * The edge after a command: followed, requested (a private feed's follow waiting for its
 * owner), or neither; and the log position that covers the change (0 when nothing changed),
 * which a caller may wait for timelines to reach.
 */
export const followStateSchema = z.strictObject({ state: z.enum(['none', 'requested', 'following']), position: z.number().int().min(0) });
export type FollowState = z.output<typeof followStateSchema>;

export const feedRequestSchema = z.strictObject({ feed: feedIdSchema });
/** Whether one of `readers` may read `feed`: it is public, or one of them is its approved follower. */
export const mayReadRequestSchema = z.strictObject({ feed: feedIdSchema, readers: z.array(feedIdSchema).max(100) });
export const mayReadReplySchema = z.strictObject({ allowed: z.boolean() });
export const feedSettingsSchema = z.strictObject({ private: z.boolean() });
export type FeedSettings = z.output<typeof feedSettingsSchema>;
export const putSettingsRequestSchema = z.strictObject({ feed: feedIdSchema, private: z.boolean(), time: z.string() });
export type PutSettingsRequest = z.output<typeof putSettingsRequestSchema>;

/** Waits (up to `timeoutMs`) until timelines have applied the log up to `position`. */
export const reachRequestSchema = z.strictObject({ position: z.number().int().min(0), timeoutMs: z.number().int().min(0).max(60_000) });
export const reachReplySchema = z.strictObject({ reached: z.boolean(), position: z.number().int().min(0) });

export const edgePageRequestSchema = z.strictObject({
  feed: feedIdSchema,
  limit: z.number().int().min(1).max(10_000),
  after: feedIdSchema.optional(),
  atLeast: atLeastSchema,
});
export type EdgePageRequest = z.output<typeof edgePageRequestSchema>;

export const edgePageSchema = z.strictObject({
  items: z.array(feedIdSchema),
  /** The last feed of the page when more may follow, else null. */
  next: feedIdSchema.nullable(),
});
export type EdgePage = z.output<typeof edgePageSchema>;

/** A follower's edges that bound what its timeline holds: follows with a `since`, and feeds unfollowed with their history kept. */
export const edgeBoundsRequestSchema = z.strictObject({ feed: feedIdSchema, atLeast: atLeastSchema });
export const edgeBoundsReplySchema = z.strictObject({ bounds: z.array(edgeBoundSchema) });
export type EdgeBoundsReply = z.output<typeof edgeBoundsReplySchema>;

export const countsRequestSchema = z.strictObject({ feed: feedIdSchema });
export const followCountsSchema = z.strictObject({ followers: z.number().int(), following: z.number().int() });
export type FollowCounts = z.output<typeof followCountsSchema>;

export const readTimelineRequestSchema = z.strictObject({
  feed: feedIdSchema,
  limit: pageLimitSchema,
  before: sortKeySchema.optional(),
  /** Newer-than polling: the newest `limit` entries with keys strictly above this one (not with `before`). */
  after: sortKeySchema.optional(),
});
export type ReadTimelineRequest = z.output<typeof readTimelineRequestSchema>;

/**
 * The log position of the event a delivery comes from: timeline names it in a dead letter
 * when the delivery keeps failing for one reader. Unset, the request's position stands in.
 */
const eventPositionSchema = z.number().int().min(0).optional();

/** One change fan-out asks timeline to make. Readers are always timeline feeds. */
export const timelineDeliverySchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('insert'), readers: z.array(feedIdSchema), activity: activitySchema, eventPosition: eventPositionSchema }),
  z.strictObject({ kind: z.literal('remove'), readers: z.array(feedIdSchema), id: idSchema, eventPosition: eventPositionSchema }),
  z.strictObject({ kind: z.literal('bump'), readers: z.array(feedIdSchema), activity: activitySchema, eventPosition: eventPositionSchema }),
  /** A new version of an activity (an update): it replaces the one each reader holds, in the same place; a reader holding none gets none. */
  z.strictObject({ kind: z.literal('update'), readers: z.array(feedIdSchema), activity: activitySchema, eventPosition: eventPositionSchema }),
  z.strictObject({
    kind: z.literal('follow'),
    reader: feedIdSchema,
    target: feedIdSchema,
    recent: z.array(activitySchema),
    exhausted: z.boolean(),
    /**
     * Set when the follow's history is bounded: `recent` holds only what the bound lets in,
     * and entries of the feed the reader holds from before (a history kept from an earlier
     * follow) leave first, since the new bound decides what the timeline shows.
     */
    since: sortKeySchema.optional(),
    eventPosition: eventPositionSchema,
  }),
  /** An unfollow; with `keepHistory` the reader keeps what the feed delivered. */
  z.strictObject({ kind: z.literal('unfollow'), reader: feedIdSchema, target: feedIdSchema, keepHistory: z.boolean().optional(), eventPosition: eventPositionSchema }),
]);
export type TimelineDelivery = z.output<typeof timelineDeliverySchema>;

/**
 * A batch covering log positions (after, position]. Timeline refuses a batch whose `after`
 * is not where it stands, and answers with its position so fan-out can replay from there.
 */
export const deliverRequestSchema = z.strictObject({
  after: z.number().int().min(0),
  position: z.number().int().min(0),
  deliveries: z.array(timelineDeliverySchema),
});
export type DeliverRequest = z.output<typeof deliverRequestSchema>;

export const deliverReplySchema = z.strictObject({ applied: z.boolean(), position: z.number().int().min(0) });
export type DeliverReply = z.output<typeof deliverReplySchema>;

/** The request of a query that takes no parameters (statuses, dead letters, rebuilds). */
export const noParametersSchema = z.strictObject({});
export type NoParameters = z.output<typeof noParametersSchema>;

export const serviceStatusSchema = z.strictObject({
  service: z.string(),
  ready: z.boolean(),
  position: z.number().int(),
  /** Running totals a service keeps, such as timeline entries delivered. */
  counters: z.record(z.string(), z.number()).optional(),
});
export type ServiceStatus = z.output<typeof serviceStatusSchema>;

/** Progress of a projection rebuild: replaying the log into a new store beside the live one. */
export const rebuildStatusSchema = z.strictObject({
  projection: z.string(),
  state: z.enum(['idle', 'running', 'done', 'failed']),
  /** Log position the new store has reached, and the log head when the rebuild began. */
  position: z.number().int(),
  head: z.number().int(),
  events: z.number().int(),
  error: z.string().optional(),
});
export type RebuildStatus = z.output<typeof rebuildStatusSchema>;

import { z } from 'zod';
import { activitySchema, isoTimeSchema, newActivitySchema, refSchema } from './activity.js';
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

/** Erase a feed: its activities, its edges, and (destroying its keys) its content in the log. */
export const eraseFeedRequestSchema = z.strictObject({ feed: feedIdSchema, time: z.string() });
export type EraseFeedRequest = z.output<typeof eraseFeedRequestSchema>;
/** `position`: the log position of the erasure, which readers wait for. */
export const eraseFeedReplySchema = z.strictObject({ erased: z.literal(true), position: z.number().int().min(0) });
export type EraseFeedReply = z.output<typeof eraseFeedReplySchema>;

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

/** A slice: the activities that refer to `ref`, whatever their feed, newest first by time key. */
export const sliceRequestSchema = z.strictObject({
  ref: refSchema,
  /** Only keys strictly below this one. */
  before: sortKeySchema.optional(),
  limit: z.number().int().min(1).max(10_000),
  atLeast: atLeastSchema,
});
export type SliceRequest = z.output<typeof sliceRequestSchema>;

export const activityPageSchema = z.strictObject({
  items: z.array(activitySchema),
  /** Key of the last item when more may follow, else null. For a read `after` a key: set when more newer entries lie below the page. */
  next: sortKeySchema.nullable(),
  /** Key of the first (newest) item, the cursor to poll with (`after`); null for an empty page. Set by feed reads only. */
  newest: sortKeySchema.nullable().optional(),
});
export type ActivityPage = z.output<typeof activityPageSchema>;

/**
 * A page of activities as the process that holds them wrote it: the items' JSON, comma
 * separated without the array's brackets, which the answering gateway frames as it is, with
 * the page's keys. Its items are not checked on arrival (they would be parsed again, which is
 * what this reply is for): the writer is the timeline service, from the activities it holds.
 */
export const writtenActivityPageSchema = z.strictObject({
  itemsJson: z.string(),
  next: sortKeySchema.nullable(),
  newest: sortKeySchema.nullable().optional(),
});
export type WrittenActivityPage = z.output<typeof writtenActivityPageSchema>;

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
/** `current`: answered from the graph as of the log's head, a change just made included (an access recheck), not as the projection stands. */
export const mayReadRequestSchema = z.strictObject({ feed: feedIdSchema, readers: z.array(feedIdSchema).max(100), current: z.boolean().optional() });
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

/** A feed's follow counts, as of at least log position `atLeast` when given (an erasure's, say). */
export const countsRequestSchema = z.strictObject({ feed: feedIdSchema, atLeast: atLeastSchema });
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

/** Where a page of groups ends: its last group's place (its newest activity's key) and id. */
export const groupCursorSchema = z.strictObject({ key: sortKeySchema, id: z.string().min(1).max(64) });

/** A page of an aggregated timeline: groups after `after`, from the top without it. */
export const readGroupsRequestSchema = z.strictObject({
  feed: feedIdSchema,
  limit: pageLimitSchema,
  after: groupCursorSchema.optional(),
});
export type ReadGroupsRequest = z.output<typeof readGroupsRequestSchema>;

/** One group of an aggregated read (see `groupActivities` in feed-models); `seen` and `read` in notification feeds. */
export const activityGroupSchema = z.strictObject({
  id: z.string(),
  verb: z.string(),
  object: z.string().optional(),
  actor: z.string().optional(),
  target: z.string().optional(),
  activityCount: z.number().int().min(1),
  actorCount: z.number().int().min(1),
  actors: z.array(z.string()),
  activities: z.array(activitySchema),
  time: z.string(),
  updatedAt: z.string(),
  seen: z.boolean().optional(),
  read: z.boolean().optional(),
});
export type ActivityGroupItem = z.output<typeof activityGroupSchema>;

export const groupPageSchema = z.strictObject({
  items: z.array(activityGroupSchema),
  next: groupCursorSchema.nullable(),
  /** In notification feeds: groups not seen, and not read, among all the reader's groups. */
  unseen: z.number().int().min(0).optional(),
  unread: z.number().int().min(0).optional(),
});
export type GroupPage = z.output<typeof groupPageSchema>;

/** What a client sends to mark a notification feed's groups: some by id, or all. */
export const markBodySchema = z
  .strictObject({ ids: z.array(z.string().min(1).max(64)).min(1).max(1000).optional(), all: z.literal(true).optional() })
  .refine((body) => (body.ids === undefined) !== (body.all === undefined), { message: 'give ids or all: true, not both' });
export type MarkBody = z.output<typeof markBodySchema>;

export const markRequestSchema = z.strictObject({
  feed: feedIdSchema,
  mark: z.enum(['seen', 'read']),
  time: z.string(),
  ids: z.array(z.string().min(1).max(64)).min(1).max(1000).optional(),
  all: z.literal(true).optional(),
});
export type MarkRequest = z.output<typeof markRequestSchema>;

/** The reader's counts once the marks are applied, and the log position of the marking (0 when nothing changed). */
export const markReplySchema = z.strictObject({ unseen: z.number().int().min(0), unread: z.number().int().min(0), position: z.number().int().min(0) });
export type MarkReply = z.output<typeof markReplySchema>;

/**
 * Hides an activity from a reader's timeline (`hidden: true`) or shows it again. A reader
 * hides what it holds or might: the activity must exist; showing needs no such check, so
 * that an id hidden before its activity was removed can be shown.
 */
export const hideRequestSchema = z.strictObject({ feed: feedIdSchema, id: idSchema, hidden: z.boolean(), time: z.string() });
export type HideRequest = z.output<typeof hideRequestSchema>;

/** Whether the activity is hidden now, and the log position of the change (0 when nothing changed). */
export const hideReplySchema = z.strictObject({ id: idSchema, hidden: z.boolean(), position: z.number().int().min(0) });
export type HideReply = z.output<typeof hideReplySchema>;

/** A page of a reader's hidden ids, newest hidden first; `after` is the previous page's `next`. */
export const hiddenPageRequestSchema = z.strictObject({ feed: feedIdSchema, limit: pageLimitSchema, after: z.number().int().min(0).optional() });
export type HiddenPageRequest = z.output<typeof hiddenPageRequestSchema>;

/** One hidden activity: its id and when it was hidden. */
export const hiddenEntrySchema = z.strictObject({ id: idSchema, time: z.string() });
export type HiddenEntry = z.output<typeof hiddenEntrySchema>;

/** `next` is the log position of the page's last hiding: the next page holds those hidden before it. */
export const hiddenPageSchema = z.strictObject({ items: z.array(hiddenEntrySchema), next: z.number().int().min(0).nullable() });
export type HiddenPage = z.output<typeof hiddenPageSchema>;

/**
 * The log position of the event a delivery comes from: timeline names it in a dead letter
 * when the delivery keeps failing for one reader. Unset, the request's position stands in.
 */
const eventPositionSchema = z.number().int().min(0).optional();

/**
 * The readers a delivery reaches, read only: fan-out hands every post of a feed the same
 * list of its followers (see `FollowerIndex.followersOf`), which no one may change.
 */
const deliveryReadersSchema = z.array(feedIdSchema).readonly();

/** One change fan-out asks timeline to make. Readers are always timeline feeds. */
export const timelineDeliverySchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('insert'), readers: deliveryReadersSchema, activity: activitySchema, eventPosition: eventPositionSchema }),
  z.strictObject({ kind: z.literal('remove'), readers: deliveryReadersSchema, id: idSchema, eventPosition: eventPositionSchema }),
  z.strictObject({ kind: z.literal('bump'), readers: deliveryReadersSchema, activity: activitySchema, eventPosition: eventPositionSchema }),
  /** A new version of an activity (an update): it replaces the one each reader holds, in the same place; a reader holding none gets none. */
  z.strictObject({ kind: z.literal('update'), readers: deliveryReadersSchema, activity: activitySchema, eventPosition: eventPositionSchema }),
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
  /** A notification feed's reader marked groups seen or read (a `NotificationsMarked`). */
  z.strictObject({
    kind: z.literal('mark'),
    reader: feedIdSchema,
    mark: z.enum(['seen', 'read']),
    all: sortKeySchema.optional(),
    allAt: z.number().int().min(0).optional(),
    groups: z.array(z.strictObject({ id: z.string().min(1).max(64), upTo: sortKeySchema.optional(), at: z.number().int().min(0).optional() })).optional(),
    eventPosition: eventPositionSchema,
  }),
  /** A reader hid an activity from its timeline (an `ActivityHidden`), at `time`. */
  z.strictObject({ kind: z.literal('hide'), reader: feedIdSchema, id: idSchema, time: z.string(), eventPosition: eventPositionSchema }),
  /** A reader showed a hidden activity again (an `ActivityShown`). */
  z.strictObject({ kind: z.literal('show'), reader: feedIdSchema, id: idSchema, eventPosition: eventPositionSchema }),
  /** An unfollow; with `keepHistory` the reader keeps what the feed delivered. */
  z.strictObject({ kind: z.literal('unfollow'), reader: feedIdSchema, target: feedIdSchema, keepHistory: z.boolean().optional(), eventPosition: eventPositionSchema }),
  /**
   * A feed erased (a `FeedErased`): every timeline of every partition drops its entries
   * (those addressed to readers too), and its own timeline, marks and hidings go.
   * `reader` is the erased feed.
   */
  z.strictObject({ kind: z.literal('erase'), reader: feedIdSchema, eventPosition: eventPositionSchema }),
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

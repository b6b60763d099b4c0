import { z } from 'zod';
import { activitySchema } from './activity.js';
import { eventCodec, type StoredEvent } from './event-codec.js';
import { feedIdSchema, feedPairsSchema, idSchema, type FeedId } from './feeds.js';

/**
 * Events are facts in the past tense. The codec writes each with its schema version and
 * reads every older version back in today's shape: when a shape changes, its schema here
 * changes and an upcaster from the previous version joins its definition.
 */
const followData = z.strictObject({ follower: feedIdSchema, target: feedIdSchema, time: z.string() });
/**
 * A follow; `since` (a time sort key) bounds the target's history it brings: of the
 * activities added before the follow, only those with a key at or above it (a `copyLimit`).
 */
const followedData = followData.extend({ since: z.string().min(1).max(300).optional() });
/** An unfollow; `keepHistory` keeps what the feed had delivered (nothing new arrives). */
const unfollowedData = followData.extend({ keepHistory: z.literal(true).optional() });
/** A producer feed's settings: a private feed's follows wait for its owner's approval. */
const settingsData = z.strictObject({ feed: feedIdSchema, private: z.boolean(), time: z.string() });
const activityChange = z.strictObject({ id: idSchema, feed: feedIdSchema, time: z.string() });
/** A removal names the feeds the activity was addressed to, which held it too. */
const activityRemovedData = activityChange.extend({ to: z.array(feedIdSchema).optional() });
/**
 * An activity's object or extra replaced, at `time`: only the fields that changed are there,
 * and at least one is. `extra` replaces the activity's whole extra.
 */
const activityUpdatedData = z
  .strictObject({ id: idSchema, feed: feedIdSchema, time: z.string(), object: z.string().optional(), extra: z.record(z.string(), z.unknown()).optional() })
  .refine((data) => data.object !== undefined || data.extra !== undefined, { message: 'changes neither object nor extra' });

/**
 * A reader of a notification feed marked groups seen or read (`read` marks seen too): every
 * group all of whose activities were recorded in the log at or before position `allAt`, and
 * each group of `groups` up to `at`, the position of its newest-recorded activity when it
 * was marked. Log positions, not groups' states, so that a replay marks the same whatever
 * the timeline held then, and a group that grows is new again, even by an activity whose
 * `time` is older (a backdated post or an import).
 *
 * Markings recorded before positions were, carry sort keys instead (`all`, `upTo`: a
 * group's newest activity's key); they keep that meaning on replay.
 */
const notificationsMarkedData = z
  .strictObject({
    feed: feedIdSchema,
    mark: z.enum(['seen', 'read']),
    time: z.string(),
    all: z.string().min(1).max(300).optional(),
    allAt: z.number().int().min(0).optional(),
    groups: z
      .array(
        z
          .strictObject({ id: z.string().min(1).max(64), upTo: z.string().min(1).max(300).optional(), at: z.number().int().min(0).optional() })
          .refine((group) => group.upTo !== undefined || group.at !== undefined, { message: 'marks the group up to neither a key nor a position' }),
      )
      .max(1000)
      .optional(),
  })
  .refine((data) => data.all !== undefined || data.allAt !== undefined || (data.groups !== undefined && data.groups.length > 0), { message: 'marks neither all groups nor some' });

/**
 * A reader hid an activity from its own timeline (`feed`, a timeline feed), or showed it
 * again. Recorded per reader, whatever the activity's feed: the activity stays where it is,
 * and every read of that reader's timeline leaves it out while it is hidden.
 */
const activityHiddenData = z.strictObject({ feed: feedIdSchema, id: idSchema, time: z.string() });

/**
 * Batches: one event that records many changes of one kind, so that an import is one append
 * to the log, all or nothing, on every adapter. A batch of N events in one append would not
 * be: the file log checks and cuts each record alone after a crash, and JetStream publishes
 * them one by one; only KurrentDB writes several events at once. Every adapter holds one
 * event whole. `id` names the batch (its stream is made from it).
 *
 * A batch is never evolved or planned as such: {@link eventItems} reads it as the single
 * events it stands for, and every projection and fan-out handles those as usual.
 */
const activitiesAddedData = z.strictObject({ id: idSchema, activities: z.array(activitySchema).min(1) });
/**
 * A feed erased at its owner's request: every projection forgets its activities, its follow
 * edges both ways, its follow requests, its settings, and the timeline, marks and hidings it
 * held. `keys` names the data keys its activities' content was sealed with; they are
 * destroyed once this event is durable, which leaves that content unreadable in the log
 * (crypto-shredding). The log layer fills `keys` in as it appends: only it knows them.
 */
const feedErasedData = z.strictObject({ feed: feedIdSchema, time: z.string(), keys: z.array(z.string().min(1).max(64)).max(1000).optional() });
/**
 * What the log reads where an event's sealed content can no longer be opened (its feed was
 * erased, its key destroyed): the event's place stands, with its type (`of`), its feed and
 * activity ids, so that positions and stream revisions stay; every projection treats it as
 * absent.
 */
const contentErasedData = z.strictObject({ of: z.string(), feed: feedIdSchema, ids: z.array(idSchema).optional() });

/** Edges as `[follower, target]` pairs, not objects: 10,000 of them must fit one event (see MAX_BATCH_EVENT_BYTES). */
const feedsFollowedData = z.strictObject({ id: idSchema, time: z.string(), follows: feedPairsSchema({ min: 1 }) });

export const feedEvents = eventCodec({
  ActivityAdded: { schema: z.strictObject({ activity: activitySchema }) },
  ActivityRemoved: { schema: activityRemovedData },
  ActivityBumped: { schema: activityChange },
  ActivityUpdated: { schema: activityUpdatedData },
  FeedFollowed: { schema: followedData },
  FeedUnfollowed: { schema: unfollowedData },
  /** A follow of a private feed, waiting for its owner: approved, it becomes a FeedFollowed. */
  FollowRequested: { schema: followData },
  /** A follow request rejected by the owner, or withdrawn by the follower. */
  FollowRequestRejected: { schema: followData },
  FeedSettingsChanged: { schema: settingsData },
  NotificationsMarked: { schema: notificationsMarkedData },
  ActivityHidden: { schema: activityHiddenData },
  ActivityShown: { schema: activityHiddenData },
  ActivitiesAdded: { schema: activitiesAddedData },
  FeedsFollowed: { schema: feedsFollowedData },
  FeedErased: { schema: feedErasedData },
  ContentErased: { schema: contentErasedData },
});

/** Every event about feeds as the log holds it: one change, or a batch of changes. */
export type FeedLogEvent = NonNullable<ReturnType<typeof feedEvents.decode>>;
export type ActivitiesAdded = Extract<FeedLogEvent, { type: 'ActivitiesAdded' }>;
export type FeedsFollowed = Extract<FeedLogEvent, { type: 'FeedsFollowed' }>;
export type FeedBatchEvent = ActivitiesAdded | FeedsFollowed;
/** One change to one activity or one follow edge: what projections evolve and fan-out plans. */
export type FeedEvent = Exclude<FeedLogEvent, FeedBatchEvent>;
export type FeedEventType = FeedEvent['type'];
export type ActivityAdded = Extract<FeedEvent, { type: 'ActivityAdded' }>;
export type ActivityRemoved = Extract<FeedEvent, { type: 'ActivityRemoved' }>;
export type ActivityBumped = Extract<FeedEvent, { type: 'ActivityBumped' }>;
export type ActivityUpdated = Extract<FeedEvent, { type: 'ActivityUpdated' }>;
export type FeedFollowed = Extract<FeedEvent, { type: 'FeedFollowed' }>;
export type FeedUnfollowed = Extract<FeedEvent, { type: 'FeedUnfollowed' }>;
export type FollowRequested = Extract<FeedEvent, { type: 'FollowRequested' }>;
export type FollowRequestRejected = Extract<FeedEvent, { type: 'FollowRequestRejected' }>;
export type FeedSettingsChanged = Extract<FeedEvent, { type: 'FeedSettingsChanged' }>;
export type NotificationsMarked = Extract<FeedEvent, { type: 'NotificationsMarked' }>;
export type ActivityHidden = Extract<FeedEvent, { type: 'ActivityHidden' }>;
export type ActivityShown = Extract<FeedEvent, { type: 'ActivityShown' }>;
export type FeedErased = Extract<FeedEvent, { type: 'FeedErased' }>;
export type ContentErased = Extract<FeedEvent, { type: 'ContentErased' }>;

/**
 * The single events a logged event stands for, in order: a batch's items (each exactly the
 * event the single endpoint would have recorded, with the batch's time), or the event itself.
 */
export function eventItems(event: FeedLogEvent): FeedEvent[] {
  switch (event.type) {
    case 'ActivitiesAdded':
      return event.data.activities.map((activity) => ({ type: 'ActivityAdded', data: { activity } }));
    case 'FeedsFollowed': {
      const { time } = event.data;
      return event.data.follows.map(([follower, target]) => ({ type: 'FeedFollowed', data: { follower, target, time } }));
    }
    default:
      return [event];
  }
}

/** A decoded event with the log position it was stored at. */
export interface PositionedEvent {
  position: number;
  event: FeedEvent;
}

/**
 * The feed events of a batch read from the log, decoded, in order, a batch event read as its
 * items (all at the batch's position); events of other types (fan-out's dead letters, or
 * types a newer writer added) are left out.
 */
export function decodeFeedEvents(records: ReadonlyArray<StoredEvent & { position: number }>): PositionedEvent[] {
  const decoded: PositionedEvent[] = [];
  for (const record of records) {
    const event = feedEvents.decode(record);
    if (event) for (const item of eventItems(event)) decoded.push({ position: record.position, event: item });
  }
  return decoded;
}

/**
 * Events about a feed's activities live in one stream per feed, its erasures too (an erasure
 * is fenced on the same revisions as posts); follows in one per follower.
 */
export const activityStream = (feed: FeedId): string => `feed-${feed}`;
export const followStream = (follower: FeedId): string => `follows-${follower}`;
export const settingsStream = (feed: FeedId): string => `settings-${feed}`;
/** A notification feed's seen and read marks: one stream per reader. */
export const marksStream = (feed: FeedId): string => `marks-${feed}`;
/** What a reader hid from its timeline and showed again: one stream per reader. */
export const hiddenStream = (feed: FeedId): string => `hidden-${feed}`;
/** A batch lives in a stream of its own: an import contends with no other writer. */
export const activitiesImportStream = (batch: string): string => `import-activities-${batch}`;
export const followsImportStream = (batch: string): string => `import-follows-${batch}`;

import { z } from 'zod';
import { feedIdSchema, idSchema, isFeedId, type FeedId } from './feeds.js';

const shortText = (max: number) => z.string().min(1).max(max);

/** UTC milliseconds in ISO form (`2026-11-21T10:00:00.000Z`): fixed width, so it sorts as text. */
export const isoTimeSchema = z.iso
  .datetime({ offset: true })
  .transform((value, ctx) => {
    const date = new Date(value);
    const year = date.getUTCFullYear();
    if (Number.isNaN(date.getTime()) || year < 1970 || year > 9999) {
      ctx.addIssue({ code: 'custom', message: 'must be a date between 1970 and 9999' });
      return z.NEVER;
    }
    return date.toISOString();
  });

/** The most feeds one activity may be addressed to with `to`. */
export const MAX_TARGETS = 100;

/** The most slice keys (`refs`) one activity may carry. */
export const MAX_REFS = 20;

/**
 * A slice key: what an activity refers to, written like a feed id (`applicant:17`,
 * `position:3`), so that it travels in URLs and index keys as they do.
 */
export const refSchema = z
  .string()
  .refine((value): boolean => isFeedId(value), 'must be "kind:id", with the characters of a feed id')
  .meta({ description: 'A slice key: "kind:id", written like a feed id.', example: 'applicant:17' });

/** What a client sends to post an activity. Unknown fields are refused, not dropped. */
export const newActivitySchema = z.strictObject({
  actor: shortText(256),
  verb: shortText(64),
  object: shortText(256),
  time: isoTimeSchema.optional(),
  foreignId: shortText(256).optional(),
  extra: z.record(z.string(), z.json()).optional(),
  /**
   * Timeline feeds the activity is also delivered into, whoever follows whom (seed 001's
   * targeted activities): a notification, a mention. The gateway checks each one before the
   * activity is recorded, and keeps only those allowed to see its feed.
   */
  to: z
    .array(feedIdSchema)
    .max(MAX_TARGETS)
    .refine((targets) => new Set(targets).size === targets.length, 'must not name a feed twice')
    .optional(),
  /**
   * What the activity refers to (seed 001's RefIds): `GET /v1/refs/{ref}/activities` finds it
   * by any of them, whatever feed it was posted in. Fixed when it is added: an update keeps them.
   */
  refs: z
    .array(refSchema)
    .max(MAX_REFS)
    .refine((refs) => new Set(refs).size === refs.length, 'must not name a ref twice')
    .optional(),
});
export type NewActivity = z.input<typeof newActivitySchema>;

/**
 * What a client sends to update an activity in place: a new `object`, a new `extra` (which
 * replaces the whole of it; `{}` empties it), or both. Its id, feed, actor, verb and time
 * stay, and with them its place in every feed and timeline. Unknown fields are refused.
 */
export const activityChangesSchema = z
  .strictObject({ object: newActivitySchema.shape.object, extra: newActivitySchema.shape.extra })
  .partial()
  .refine((changes) => changes.object !== undefined || changes.extra !== undefined, { message: 'give object, extra or both' });
export type ActivityChanges = z.output<typeof activityChangesSchema>;

export interface Activity {
  id: string;
  feed: FeedId;
  actor: string;
  verb: string;
  object: string;
  /** ISO time, UTC milliseconds. */
  time: string;
  foreignId?: string;
  extra?: Record<string, unknown>;
  /** When a later event (a comment, say) last raised it, for relevancy-ordered timelines. */
  bumpedAt?: string;
  /**
   * When its object or extra was last changed (ISO time, UTC milliseconds), absent until
   * then. An update never moves an activity: `time` and `bumpedAt` place it, this only
   * tells readers that what they see is an edited version.
   */
  updatedAt?: string;
  /**
   * The timeline feeds it was addressed to, besides its feed's followers: each holds it
   * whether or not it follows the feed, for as long as its owner may read the feed.
   */
  to?: FeedId[];
  /** What it refers to (slice keys), fixed when it was added. */
  refs?: string[];
}

export const activitySchema: z.ZodType<Activity> = z.strictObject({
  id: idSchema,
  feed: feedIdSchema,
  actor: z.string(),
  verb: z.string(),
  object: z.string(),
  time: z.string(),
  foreignId: z.string().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  bumpedAt: z.string().optional(),
  updatedAt: z.string().optional(),
  to: z.array(feedIdSchema).optional(),
  refs: z.array(z.string()).optional(),
});

/** What a linked timeline stores of an activity: enough to order it and find it again. */
export type ActivityReference = Pick<Activity, 'id' | 'feed' | 'time' | 'bumpedAt' | 'to'>;

/** An entry of a timeline: the activity itself (embedded), or a reference to it (linked). */
export type TimelineItem = Activity | ActivityReference;

export function referenceTo(activity: Activity): ActivityReference {
  const reference: ActivityReference = { id: activity.id, feed: activity.feed, time: activity.time };
  if (activity.bumpedAt !== undefined) reference.bumpedAt = activity.bumpedAt;
  if (activity.to !== undefined) reference.to = activity.to;
  return reference;
}

/**
 * Whether a reader holds the item because it was addressed to it: it stays when the reader
 * unfollows the item's feed.
 */
export function isAddressedTo(item: TimelineItem, reader: FeedId): boolean {
  return item.to !== undefined && item.to.includes(reader);
}

export function isReference(item: TimelineItem): item is ActivityReference {
  return !('verb' in item);
}

/**
 * About the JSON size of a timeline item, from its text, without serializing it (only
 * `extra`, which is free-form, is). Used to keep messages and documents under their limits.
 */
export function approximateBytes(item: TimelineItem): number {
  let text = item.id.length + item.feed.length + item.time.length + (item.bumpedAt?.length ?? 0);
  if (item.to) for (const target of item.to) text += target.length + 3;
  if ('verb' in item) {
    text += item.actor.length + item.verb.length + item.object.length + (item.foreignId?.length ?? 0) + (item.updatedAt?.length ?? 0);
    if (item.extra) text += JSON.stringify(item.extra).length;
    if (item.refs) for (const ref of item.refs) text += ref.length + 3;
  }
  return 110 + text;
}

import { z } from 'zod';
import { GROUP_PATTERN } from './feeds.js';

/**
 * A producer group holds the activities posted to it; a timeline group holds what its
 * feeds follow, materialized by fan-out. Only producer feeds accept posts and only
 * timeline feeds follow.
 */
const producerGroupSchema = z.strictObject({ kind: z.literal('producer') });

/**
 * How a timeline group stores its readers' timelines:
 * - `ring`: every reader's newest `cap` entries, kept up to date by fan-out from its first follow.
 * - `cache`: the same, but built only when a reader reads, from the pull path, and dropped
 *   after `inactivityMinutes` without a read (seed 002's capped cache for active readers).
 * - `pull`: nothing stored; every read merges the followed feeds' own activities.
 * - `time-buckets`: like `ring`, stored as one document per reader per `bucketMinutes`.
 * - `size-buckets`: like `ring`, stored as documents of `bucketSize` entries each.
 * - `hybrid`: push or pull per follow edge (Feeding Frenzy): a producer's activities are
 *   written into a reader's stored timeline while the reader reads at least `readsPerPost`
 *   times per post of the producer, and read from the producer's feed at the reader's reads
 *   otherwise; reads merge both. Rates are counts decayed over `rateWindowMinutes`, and an
 *   edge changes side only once the ratio has moved past the threshold by `hysteresis`.
 * Whatever the model, a reader's stored entries never pass `cap`, and reads past what is
 * stored come from the pull path. The memory store keeps every materialized model as one
 * sorted list; the models differ in their MongoDB documents.
 */
export const timelineModels = ['ring', 'cache', 'pull', 'time-buckets', 'size-buckets', 'hybrid'] as const;
export type TimelineModel = (typeof timelineModels)[number];

export const MAX_CAP = 100_000;

/** The activity fields an aggregated group may group by; `target` is read from `extra.target`. */
export const aggregateFields = ['verb', 'object', 'actor', 'target'] as const;
export type AggregateField = (typeof aggregateFields)[number];

/**
 * How an aggregated timeline groups its activities: those with the same values of the `by`
 * fields whose times fall in the same `windowMinutes` span (counted from the Unix epoch)
 * are one group.
 */
export const aggregateRuleSchema = z.strictObject({
  by: z
    .array(z.enum(aggregateFields))
    .min(1)
    .max(aggregateFields.length)
    .refine((fields) => new Set(fields).size === fields.length, 'must not name a field twice'),
  /** @defaultValue 60 */
  windowMinutes: z.number().min(1).max(366 * 24 * 60).default(60),
});
export type AggregateRule = z.output<typeof aggregateRuleSchema>;

/** The rule of a notification group that sets none. */
export const DEFAULT_NOTIFICATION_RULE: AggregateRule = Object.freeze({ by: ['verb', 'object'], windowMinutes: 60 }) as AggregateRule;
/** The largest cap of the models that may keep a reader's entries in one document. */
export const MAX_SINGLE_DOCUMENT_CAP = 10_000;

const timelineGroupSchema = z.strictObject({
  kind: z.literal('timeline'),
  /** @defaultValue 'cache' */
  model: z.enum(timelineModels).default('cache'),
  /**
   * Entries kept per reader; older pages come from the pull path. At most 100,000, and at
   * most 10,000 for `cache` and `time-buckets`, whose readers may hold every entry in one
   * MongoDB document (16 MB at most).
   * @defaultValue 800
   */
  cap: z.number().int().min(1).max(MAX_CAP).default(800),
  /**
   * For `cache`: a reader's cache is dropped after this long without a read.
   * @defaultValue 240
   */
  inactivityMinutes: z.number().min(0.001).max(7 * 24 * 60).default(240),
  /**
   * For `time-buckets`: the time span of one bucket document.
   * @defaultValue 1440 (a day)
   */
  bucketMinutes: z.number().min(1).max(366 * 24 * 60).default(1440),
  /**
   * For `size-buckets`: entries per bucket document.
   * @defaultValue 100
   */
  bucketSize: z.number().int().min(1).max(10_000).default(100),
  /**
   * Whether stored entries hold a copy of the activity (`true`) or only a reference to it,
   * the activities of a page then read from content in one batched query.
   * @defaultValue true
   */
  embed: z.boolean().default(true),
  /**
   * Order by relevance (seed 001): an activity rises to its last bump's time.
   * @defaultValue false
   */
  relevancy: z.boolean().default(false),
  /**
   * For `hybrid`: an edge is pushed while its reader reads at least this many times per post
   * of its producer (the cost of querying a feed at a read over the cost of writing an entry
   * at a post).
   * @defaultValue 1
   */
  readsPerPost: z.number().positive().max(1_000_000).default(1),
  /**
   * For `hybrid`: the time constant of the read and post rates, which are counts decayed by
   * e every this many minutes.
   * @defaultValue 60
   */
  rateWindowMinutes: z.number().min(0.001).max(30 * 24 * 60).default(60),
  /**
   * For `hybrid`: a pushed edge turns to pull once its reads per post fall below
   * `readsPerPost / hysteresis`, a pulled edge to push once they reach
   * `readsPerPost * hysteresis`, so that an edge near the threshold does not flip with every
   * read and post.
   * @defaultValue 2
   */
  hysteresis: z.number().min(1).max(1_000).default(2),
  /**
   * Whether a user may address activities (`to`) to this group's feeds that another user
   * owns, as to a notification feed. A user may always address its own feeds, and an admin
   * token any.
   * @defaultValue false
   */
  acceptsTargets: z.boolean().default(false),
  /**
   * Reads return groups of activities (see {@link aggregateRuleSchema}) instead of activities.
   * @defaultValue none: reads return activities
   */
  aggregate: aggregateRuleSchema.optional(),
  /**
   * A notification feed: aggregated (by `aggregate`, else by verb and object per hour), and
   * keeping per reader what has been seen and read.
   * @defaultValue false
   */
  notifications: z.boolean().default(false),
});

export const groupConfigSchema = z.discriminatedUnion('kind', [producerGroupSchema, timelineGroupSchema]);

export const feedConfigSchema = z.strictObject({
  groups: z
    .record(z.string().regex(GROUP_PATTERN, 'group names must match ' + GROUP_PATTERN), groupConfigSchema)
    .refine((groups) => Object.keys(groups).length > 0, 'at least one group is needed')
    .superRefine((groups, ctx) => {
      for (const [name, group] of Object.entries(groups)) {
        if (group.kind === 'timeline' && (group.model === 'cache' || group.model === 'time-buckets') && group.cap > MAX_SINGLE_DOCUMENT_CAP) {
          ctx.addIssue({ code: 'custom', path: [name, 'cap'], message: `a ${group.model} timeline keeps at most ${MAX_SINGLE_DOCUMENT_CAP} entries; use ring or size-buckets for more` });
        }
      }
    }),
});

export type GroupConfig = z.output<typeof groupConfigSchema>;
export type TimelineGroupConfig = Extract<GroupConfig, { kind: 'timeline' }>;
export type FeedConfig = z.output<typeof feedConfigSchema>;

/** `user` feeds post, `timeline` feeds follow and read. */
export const defaultFeedConfig: FeedConfig = feedConfigSchema.parse({
  groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'cache', cap: 800 } },
});

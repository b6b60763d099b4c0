import { z } from 'zod';
import { GROUP_PATTERN } from './feeds.js';

/**
 * A producer group holds the activities posted to it; a timeline group holds what its
 * feeds follow, materialized by fan-out. Only producer feeds accept posts and only
 * timeline feeds follow.
 */
const producerGroupSchema = z.strictObject({ kind: z.literal('producer') });

const timelineGroupSchema = z.strictObject({
  kind: z.literal('timeline'),
  /**
   * Entries kept in each reader's capped cache; older pages come from the pull path.
   * @defaultValue 800
   */
  cap: z.number().int().min(1).max(100_000).default(800),
});

export const groupConfigSchema = z.discriminatedUnion('kind', [producerGroupSchema, timelineGroupSchema]);

export const feedConfigSchema = z.strictObject({
  groups: z
    .record(z.string().regex(GROUP_PATTERN, 'group names must match ' + GROUP_PATTERN), groupConfigSchema)
    .refine((groups) => Object.keys(groups).length > 0, 'at least one group is needed'),
});

export type GroupConfig = z.output<typeof groupConfigSchema>;
export type TimelineGroupConfig = Extract<GroupConfig, { kind: 'timeline' }>;
export type FeedConfig = z.output<typeof feedConfigSchema>;

/** `user` feeds post, `timeline` feeds follow and read. */
export const defaultFeedConfig: FeedConfig = feedConfigSchema.parse({
  groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', cap: 800 } },
});

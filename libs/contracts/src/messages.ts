import { z } from 'zod';
import { newActivitySchema, type Activity } from './activity.js';
import { feedIdSchema, idSchema, type FeedId } from './feeds.js';
import type { SortKey } from './sort-key.js';

/** NATS subjects of every request/reply between the services. */
export const subjects = {
  content: {
    add: 'feed.content.add',
    remove: 'feed.content.remove',
    get: 'feed.content.get',
    recent: 'feed.content.recent',
    status: 'feed.content.status',
  },
  graph: {
    follow: 'feed.graph.follow',
    unfollow: 'feed.graph.unfollow',
    followers: 'feed.graph.followers',
    following: 'feed.graph.following',
    counts: 'feed.graph.counts',
    status: 'feed.graph.status',
  },
  timeline: {
    read: 'feed.timeline.read',
    deliver: 'feed.timeline.deliver',
    status: 'feed.timeline.status',
  },
  fanout: {
    status: 'feed.fanout.status',
  },
} as const;

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

export const removeActivityRequestSchema = z.strictObject({ feed: feedIdSchema, id: idSchema, time: z.string() });
export type RemoveActivityRequest = z.output<typeof removeActivityRequestSchema>;

export const getActivitiesRequestSchema = z.strictObject({ ids: z.array(idSchema).max(1000) });
export type GetActivitiesRequest = z.output<typeof getActivitiesRequestSchema>;

export const recentActivitiesRequestSchema = z.strictObject({
  feeds: z.array(feedIdSchema).max(100_000),
  /** Only keys strictly below this one. */
  before: sortKeySchema.optional(),
  limit: z.number().int().min(1).max(10_000),
  atLeast: atLeastSchema,
  /** Only activities added at or before this log position: what a feed held at that moment. */
  atMost: z.number().int().min(0).optional(),
});
export type RecentActivitiesRequest = z.output<typeof recentActivitiesRequestSchema>;

export interface ActivityPage {
  items: Activity[];
  /** Key of the last item when more may follow, else null. */
  next: SortKey | null;
}

export const followRequestSchema = z.strictObject({ follower: feedIdSchema, target: feedIdSchema, time: z.string() });
export type FollowRequest = z.output<typeof followRequestSchema>;

export const edgePageRequestSchema = z.strictObject({
  feed: feedIdSchema,
  limit: z.number().int().min(1).max(10_000),
  after: feedIdSchema.optional(),
  atLeast: atLeastSchema,
});
export type EdgePageRequest = z.output<typeof edgePageRequestSchema>;

export interface EdgePage {
  items: FeedId[];
  /** The last feed of the page when more may follow, else null. */
  next: FeedId | null;
}

export const countsRequestSchema = z.strictObject({ feed: feedIdSchema });
export interface FollowCounts {
  followers: number;
  following: number;
}

export const readTimelineRequestSchema = z.strictObject({
  feed: feedIdSchema,
  limit: pageLimitSchema,
  before: sortKeySchema.optional(),
});
export type ReadTimelineRequest = z.output<typeof readTimelineRequestSchema>;

/** One change fan-out asks timeline to make. Readers are always timeline feeds. */
export type TimelineDelivery =
  | { kind: 'insert'; readers: FeedId[]; activity: Activity }
  | { kind: 'remove'; readers: FeedId[]; id: string }
  | { kind: 'follow'; reader: FeedId; target: FeedId; recent: Activity[]; exhausted: boolean }
  | { kind: 'unfollow'; reader: FeedId; target: FeedId };

/**
 * A batch covering log positions (after, position]. Timeline refuses a batch whose `after`
 * is not where it stands, and answers with its position so fan-out can replay from there.
 */
export interface DeliverRequest {
  after: number;
  position: number;
  deliveries: TimelineDelivery[];
}

export type DeliverReply = { applied: true; position: number } | { applied: false; position: number };

export interface ServiceStatus {
  service: string;
  ready: boolean;
  position: number;
}

import { z } from 'zod';
import { feedIdSchema, type FeedId } from './feeds.js';
import type { SortKey } from './sort-key.js';

/**
 * What of a followed feed's activities belong to a reader's timeline when not all of them:
 * a follow made with a `copyLimit` (its history from `since` on), or a feed unfollowed with
 * `keepHistory` (what it had delivered by `unfollowedAt`). Every path that reads a timeline
 * (stored entries, the pull path, fan-out's backfill) applies the same bound, so that every
 * storage model shows the same timeline.
 */
export const edgeBoundSchema = z.strictObject({
  /** The followed (or once followed) feed. */
  feed: feedIdSchema,
  /** Of the activities added before the follow, only those with a time key at or above this one. */
  since: z.string().min(1).max(300).optional(),
  /** Log position of the follow: activities added after it belong whatever their time. */
  followedAt: z.number().int().min(0).optional(),
  /** Log position of an unfollow that kept the history: activities added after it do not belong. */
  unfollowedAt: z.number().int().min(0).optional(),
});
export type EdgeBound = z.output<typeof edgeBoundSchema>;

/**
 * Whether an activity of the bound's feed, with time key `timeKey` (the time order's key,
 * also in a relevancy timeline) added to the log at `position`, belongs to the timeline.
 * Positions make it exact where times alone would not be: a post backdated after a follow
 * belongs, one backdated after an unfollow does not.
 */
export function isWithinBound(bound: Omit<EdgeBound, 'feed'>, timeKey: SortKey, position: number): boolean {
  if (bound.unfollowedAt !== undefined && position > bound.unfollowedAt) return false;
  if (bound.since === undefined) return true;
  return timeKey >= bound.since || (bound.followedAt !== undefined && position > bound.followedAt);
}

/** The bounds by feed. */
export function boundsByFeed(bounds: readonly EdgeBound[] | undefined): Map<FeedId, EdgeBound> | undefined {
  if (!bounds || bounds.length === 0) return undefined;
  return new Map(bounds.map((bound) => [bound.feed, bound]));
}

import { subjects, type Activity, type FeedId, type RecentActivitiesRequest } from '@feedmill/contracts';
import type { ServiceClient } from './service-client.js';

/** Edges are asked for in pages this large; a feed with more takes several requests. */
const EDGE_PAGE = 10_000;

/**
 * Every follower (or every followed feed) of `feed`, paging through graph, as of at least
 * log position `atLeast` when given.
 */
export async function allEdges(client: ServiceClient, direction: 'followers' | 'following', feed: FeedId, atLeast?: number): Promise<FeedId[]> {
  const subject = direction === 'followers' ? subjects.graph.followers : subjects.graph.following;
  const feeds: FeedId[] = [];
  let after: FeedId | undefined;
  do {
    const page = await client.request(subject, { feed, limit: EDGE_PAGE, after, atLeast });
    feeds.push(...page.items);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return feeds;
}

/**
 * Activities are asked for in pages of at most this many items and about this many bytes,
 * so that no reply passes NATS's payload limit (1 MiB by default) whatever their size.
 */
const RECENT_PAGE = 1_000;
export const RECENT_PAGE_BYTES = 256 * 1024;

/**
 * The newest `limit` activities of `feeds` (any number), paging through content with its
 * cursor: a backfill or a cache build may want more than one reply can carry.
 */
export async function recentActivities(client: ServiceClient, request: Omit<RecentActivitiesRequest, 'maxBytes'>): Promise<Activity[]> {
  const activities: Activity[] = [];
  let before = request.before;
  while (activities.length < request.limit) {
    const limit = Math.min(RECENT_PAGE, request.limit - activities.length);
    const page = await client.request(subjects.content.recent, { ...request, before, limit, maxBytes: RECENT_PAGE_BYTES });
    activities.push(...page.items);
    if (page.next === null) break;
    before = page.next;
  }
  return activities;
}

import { subjects, type EdgePage, type FeedId } from '@feedmill/contracts';
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
    const page = await client.request<EdgePage>(subject, { feed, limit: EDGE_PAGE, after, atLeast });
    feeds.push(...page.items);
    after = page.next ?? undefined;
  } while (after !== undefined);
  return feeds;
}

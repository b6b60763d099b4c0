import { subjects, type Activity, type ActivityPage, type EdgePage, type FeedId, type GetActivitiesRequest, type RecentActivitiesRequest } from '@feedmill/contracts';
import type { FeedGroups, ServiceClient } from '@feedmill/platform';
import type { PlanLookups } from './delivery-plan.js';

const FOLLOWERS_PAGE = 10_000;

/**
 * Planning's lookups, asked of graph and content through the service client. Every follow
 * is backfilled whatever the reader's model, so that a timeline rebuilt with another model
 * or cap (which stores what its own policy needs) gets the same deliveries.
 */
export function servicePlanLookups(client: ServiceClient, groups: FeedGroups): PlanLookups {
  return {
    async followers(feed, atLeast) {
      const readers: FeedId[] = [];
      let after: FeedId | undefined;
      do {
        const page = await client.request<EdgePage>(subjects.graph.followers, { feed, limit: FOLLOWERS_PAGE, after, atLeast });
        for (const reader of page.items) if (groups.isTimeline(reader)) readers.push(reader);
        after = page.next ?? undefined;
      } while (after !== undefined);
      return readers;
    },
    async recent(feed, limit, atLeast, atMost) {
      const request: RecentActivitiesRequest = { feeds: [feed], limit, atLeast, atMost, order: groups.timelinePolicyOf(feed).relevancy ? 'relevance' : 'time' };
      return (await client.request<ActivityPage>(subjects.content.recent, request)).items;
    },
    isTimeline: (feed) => groups.isTimeline(feed),
    capOf: (reader) => groups.capOf(reader),
    backfills: () => true,
    activities: (ids, atLeast) => client.request<Activity[]>(subjects.content.get, { ids: [...ids], atLeast } satisfies GetActivitiesRequest),
  };
}

import { subjects } from '@feedmill/contracts';
import { IN_PROCESS_DELIVERY_BUDGET_BYTES, type DeliveryTarget, type PlanLookups } from '@feedmill/feed-models';
import type { FeedGroups } from '@feedmill/config';
import { batchedRecent } from './batched-recent.js';
import { allEdges, recentActivities } from './paged-queries.js';
import type { PartitionRoute, ServiceClient } from './service-client.js';

/**
 * Planning's lookups, asked of content (and of graph when a dead letter is replayed) through
 * the service client; followers come from fan-out's own index. Every follow is backfilled
 * whatever the reader's model, so that a timeline rebuilt with another model or cap (which
 * stores what its own policy needs) gets the same deliveries.
 */
export function servicePlanLookups(client: ServiceClient, groups: FeedGroups): PlanLookups {
  const batched = batchedRecent(client);
  return {
    // A bounded follow's backfill is read alone, with its bound: rare, and its page must stop where the bound does.
    recent: (feed, limit, atLeast, atMost, order, since) =>
      since === undefined ? batched(feed, limit, atLeast, atMost, order) : recentActivities(client, { feeds: [feed], limit, atLeast, atMost, order, bounds: [{ feed, since }] }),
    isTimeline: (feed) => groups.isTimeline(feed),
    capOf: (reader) => groups.capOf(reader),
    orderOf: (reader) => (groups.timelinePolicyOf(reader).relevancy ? 'relevance' : 'time'),
    follows: async (follower, target, atLeast) => (await allEdges(client, 'following', follower, atLeast)).includes(target),
    activities: (ids, atLeast) => client.request(subjects.content.get, { ids: [...ids], atLeast }),
    positions: async (ids, atLeast) => (await client.request(subjects.content.positions, { ids: [...ids], atLeast })).positions,
  };
}

/** The timeline service as fan-out's delivery target: one partition of it, with a `route`. */
export function serviceDeliveryTarget(client: ServiceClient, route?: PartitionRoute): DeliveryTarget {
  return {
    deliver: (request) => client.request(subjects.timeline.deliver, request, route),
    ...(client.handsOverObjects && { requestBudgetBytes: IN_PROCESS_DELIVERY_BUDGET_BYTES }),
  };
}

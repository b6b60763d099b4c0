import { subjects } from '@feedmill/contracts';
import type { DeliveryTarget, PlanLookups } from '@feedmill/feed-models';
import type { FeedGroups } from '@feedmill/config';
import { batchedRecent } from './batched-recent.js';
import { allEdges } from './paged-queries.js';
import type { ServiceClient } from './service-client.js';

/**
 * Planning's lookups, asked of content (and of graph when a dead letter is replayed) through
 * the service client; followers come from fan-out's own index. Every follow is backfilled
 * whatever the reader's model, so that a timeline rebuilt with another model or cap (which
 * stores what its own policy needs) gets the same deliveries.
 */
export function servicePlanLookups(client: ServiceClient, groups: FeedGroups): PlanLookups {
  return {
    recent: batchedRecent(client),
    isTimeline: (feed) => groups.isTimeline(feed),
    capOf: (reader) => groups.capOf(reader),
    orderOf: (reader) => (groups.timelinePolicyOf(reader).relevancy ? 'relevance' : 'time'),
    follows: async (follower, target, atLeast) => (await allEdges(client, 'following', follower, atLeast)).includes(target),
    activities: (ids, atLeast) => client.request(subjects.content.get, { ids: [...ids], atLeast }),
  };
}

/** The timeline service as fan-out's delivery target. */
export function serviceDeliveryTarget(client: ServiceClient): DeliveryTarget {
  return { deliver: (request) => client.request(subjects.timeline.deliver, request) };
}

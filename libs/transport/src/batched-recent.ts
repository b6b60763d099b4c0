import { subjects, type Activity, type FeedId, type TimelineOrder } from '@feedmill/contracts';
import { RECENT_PAGE_BYTES, recentActivities } from './paged-queries.js';
import type { ServiceClient } from './service-client.js';

/** Feeds per `recent-each` request: a reply of that many empty pages is about 26 KB. */
const FEEDS_PER_REQUEST = 1_000;

/** The newest `limit` activities of `feed` added at or before `atMost`, newest first in `order`. */
export type RecentOfFeed = (feed: FeedId, limit: number, atLeast: number, atMost: number, order: TimelineOrder) => Promise<Activity[]>;

interface Waiter {
  resolve: (activities: Activity[]) => void;
  reject: (error: unknown) => void;
}

interface Lookups {
  limit: number;
  atLeast: number;
  atMost: number;
  order: TimelineOrder;
  /** Who waits for each feed: a batch may backfill one target for many readers. */
  byFeed: Map<FeedId, Waiter[]>;
}

/**
 * Planning's `recent` lookup, batched: lookups asked in one turn of the event loop with the
 * same limit, positions and order are asked of content together, a thousand feeds per
 * `recent-each` request, instead of one request each. A batch of 10,000 follows backfills
 * thousands of feeds at one position: one request apiece cost more than the rest of its
 * fan-out. A feed whose page did not fit a reply, or whose history goes on past it, is then
 * read on alone, page by page.
 */
export function batchedRecent(client: ServiceClient): RecentOfFeed {
  let pending = new Map<string, Lookups>();
  const flush = () => {
    const asked = pending;
    pending = new Map();
    for (const lookups of asked.values()) {
      const feeds = [...lookups.byFeed.keys()];
      for (let start = 0; start < feeds.length; start += FEEDS_PER_REQUEST) void answer(client, lookups, feeds.slice(start, start + FEEDS_PER_REQUEST));
    }
  };
  return (feed, limit, atLeast, atMost, order) =>
    new Promise<Activity[]>((resolve, reject) => {
      if (pending.size === 0) setImmediate(flush);
      const key = `${limit}|${atLeast}|${atMost}|${order}`;
      let lookups = pending.get(key);
      if (!lookups) pending.set(key, (lookups = { limit, atLeast, atMost, order, byFeed: new Map() }));
      const waiters = lookups.byFeed.get(feed);
      if (waiters) waiters.push({ resolve, reject });
      else lookups.byFeed.set(feed, [{ resolve, reject }]);
    });
}

async function answer(client: ServiceClient, lookups: Lookups, feeds: FeedId[]): Promise<void> {
  const { limit, atLeast, atMost, order } = lookups;
  let pages: Array<{ items: Activity[]; next: string | null } | null>;
  try {
    ({ pages } = await client.request(subjects.content.recentEach, { feeds, limit, atLeast, atMost, order, maxBytes: RECENT_PAGE_BYTES }));
  } catch (error) {
    for (const feed of feeds) for (const waiter of lookups.byFeed.get(feed)!) waiter.reject(error);
    return;
  }
  for (const [index, feed] of feeds.entries()) {
    const waiters = lookups.byFeed.get(feed)!;
    const page = pages[index] ?? null;
    // The usual case: the whole history the lookup wants is in the page.
    if (page !== null && (page.next === null || page.items.length >= limit)) resolveAll(waiters, page.items);
    else readOn(client, feed, page, lookups).then((activities) => resolveAll(waiters, activities), (error: unknown) => waiters.forEach((waiter) => waiter.reject(error)));
  }
}

/** Each reader's delivery gets its own array. */
function resolveAll(waiters: readonly Waiter[], activities: Activity[]): void {
  for (let n = 0; n < waiters.length; n++) waiters[n]!.resolve(n === 0 ? activities : activities.slice());
}

/** A feed the batch could not answer whole: its first page as answered, if any, and the rest read alone. */
async function readOn(client: ServiceClient, feed: FeedId, page: { items: Activity[]; next: string | null } | null, lookups: Lookups): Promise<Activity[]> {
  const { limit, atLeast, atMost, order } = lookups;
  if (page === null) return recentActivities(client, { feeds: [feed], limit, atLeast, atMost, order });
  const rest = await recentActivities(client, { feeds: [feed], limit: limit - page.items.length, before: page.next!, atLeast, atMost, order });
  return [...page.items, ...rest];
}

import { Controller, Get, Param, Query, UseFilters } from '@nestjs/common';
import { Inject } from '@nestjs/common';
import { refSchema, sortKeyOf, subjects, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import { parseInput, SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { activityCursor, parsePageQuery } from './feed-params.js';
import { HttpErrorFilter } from './http-errors.js';
import { RequestCaller } from './auth/authenticate.js';
import type { Caller } from './auth/caller.js';
import { FeedAccess } from './auth/feed-access.js';

/**
 * Pages of a slice content reads to fill one page the caller sees: a slice mostly of feeds
 * the caller may not read answers a short page (even an empty one) with a cursor, rather
 * than scanning the whole slice in one request.
 */
const MAX_ROUNDS = 8;

/**
 * Slices by reference (seed 001's RefIds): every activity that refers to a ref, whatever its
 * feed, newest first, with one cursor, leaving out those of feeds the caller may not read.
 */
@Controller('v1/refs')
@UseFilters(HttpErrorFilter)
export class RefsHttpController {
  constructor(
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    private readonly access: FeedAccess,
  ) {}

  @Get(':ref/activities')
  async slice(@RequestCaller() caller: Caller, @Param('ref') ref: string, @Query() query: unknown): Promise<{ items: Activity[]; next: string | null }> {
    parseInput(refSchema, ref, 'ref');
    const { limit, cursor } = parsePageQuery(query);
    const readable = readableFeeds(caller, this.access);
    const items: Activity[] = [];
    let before: SortKey | undefined = activityCursor.decode(cursor);
    for (let round = 0; round < MAX_ROUNDS; round++) {
      // One more than the page, so that a full page knows whether more follow.
      const page = await this.client.request(subjects.content.slice, { ref, before, limit: limit + 1 });
      const allowed = await readable(page.items.map((activity) => activity.feed));
      for (const activity of page.items) {
        if (!allowed.has(activity.feed)) continue;
        if (items.length === limit) return { items, next: activityCursor.encode(sortKeyOf(items[limit - 1]!)) };
        items.push(activity);
      }
      if (page.next === null) return { items, next: null };
      before = page.next;
    }
    // What was read so far held too little the caller may see: go on from there next time.
    return { items, next: activityCursor.encode(before ?? null) };
  }
}

/**
 * The feeds among those asked that the caller may read, each asked of graph once per
 * request, and those of one page together.
 */
function readableFeeds(caller: Caller, access: FeedAccess): (feeds: readonly FeedId[]) => Promise<Set<FeedId>> {
  const known = new Map<FeedId, Promise<boolean>>();
  const allowed = new Set<FeedId>();
  return async (feeds) => {
    const asked = [...new Set(feeds)].filter((feed) => !known.has(feed));
    for (const feed of asked) known.set(feed, access.mayRead(caller, feed));
    await Promise.all(asked.map(async (feed) => (await known.get(feed)!) && allowed.add(feed)));
    return allowed;
  };
}

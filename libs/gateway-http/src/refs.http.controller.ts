import { Controller, Get, Param, Query, UseFilters } from '@nestjs/common';
import { Inject } from '@nestjs/common';
import { refSchema, subjects, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import { parseInput, SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { parsePageQuery, sliceCursor } from './feed-params.js';
import { readReadableSlice } from './readable-slice.js';
import { HttpErrorFilter } from './http-errors.js';
import { RequestCaller } from './auth/authenticate.js';
import type { Caller } from './auth/caller.js';
import { FeedAccess } from './auth/feed-access.js';

/**
 * Slices by reference (seed 001's RefIds): every activity that refers to a ref, whatever its
 * feed, newest first, with one cursor, leaving out those of feeds the caller may not read
 * (see {@link readReadableSlice} for what the cursor may tell).
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
    const read = (before: SortKey | undefined, limit: number) => this.client.request(subjects.content.slice, { ref, before, limit });
    const page = await readReadableSlice(read, readableFeeds(caller, this.access), sliceCursor.decode(cursor), limit);
    return { items: page.items, next: sliceCursor.encode(page.next) };
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

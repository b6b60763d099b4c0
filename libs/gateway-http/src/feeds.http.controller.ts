import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Post, Query, UseFilters } from '@nestjs/common';
import {
  bumpBodySchema,
  subjects,
  type Activity,
  type BumpActivityRequest,
  type FollowCounts,
  type FollowRequest,
  type RemoveActivityRequest,
} from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { parseInput, SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { edgeCursor, parsePageQuery, resolveFeed, resolveId } from './feed-params.js';
import { HttpErrorFilter } from './http-errors.js';
import { RequestCaller } from './auth/authenticate.js';
import { requireOwner, requireReader, type Caller } from './auth/caller.js';

/**
 * The public feed API. It validates, stamps ids and times, and asks the services. Reading a
 * feed, posting and following are {@link HotRoutes}, on Fastify directly.
 */
@Controller('v1/feeds')
@UseFilters(HttpErrorFilter)
export class FeedsHttpController {
  constructor(
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
  ) {}

  @Delete(':group/:id/activities/:activityId')
  @HttpCode(204)
  async remove(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Param('activityId') activityId: string): Promise<void> {
    const feed = resolveFeed(this.groups, group, id, 'producer');
    requireOwner(caller, feed, 'remove activities of');
    const request: RemoveActivityRequest = { feed, id: resolveId(activityId, 'activityId'), time: new Date().toISOString() };
    await this.client.request(subjects.content.remove, request);
  }

  /** 200 with the activity as it now is; a bump no later than its relevance changes nothing. */
  @Post(':group/:id/activities/:activityId/bump')
  @HttpCode(200)
  bump(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Param('activityId') activityId: string, @Body() body: unknown): Promise<Activity> {
    const feed = resolveFeed(this.groups, group, id, 'producer');
    requireOwner(caller, feed, 'bump activities of');
    const { time } = parseInput(bumpBodySchema, body ?? {}, 'body');
    const request: BumpActivityRequest = { feed, id: resolveId(activityId, 'activityId'), time: time ?? new Date().toISOString() };
    return this.client.request(subjects.content.bump, request);
  }

  @Delete(':group/:id/follows/:targetGroup/:targetId')
  @HttpCode(204)
  async unfollow(@RequestCaller() caller: Caller, @Param() params: Record<string, string>): Promise<void> {
    const request = this.followRequest(params);
    requireOwner(caller, request.follower, 'unfollow from');
    await this.client.request(subjects.graph.unfollow, request);
  }

  @Get(':group/:id/followers')
  followers(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown) {
    return this.edges(caller, subjects.graph.followers, group, id, query);
  }

  @Get(':group/:id/following')
  following(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown) {
    return this.edges(caller, subjects.graph.following, group, id, query);
  }

  @Get(':group/:id/counts')
  counts(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string): Promise<FollowCounts> {
    const feed = resolveFeed(this.groups, group, id);
    requireReader(caller, feed, this.groups.isTimeline(feed));
    return this.client.request(subjects.graph.counts, { feed });
  }

  private async edges(caller: Caller, subject: typeof subjects.graph.followers | typeof subjects.graph.following, group: string, id: string, query: unknown) {
    const feed = resolveFeed(this.groups, group, id);
    requireReader(caller, feed, this.groups.isTimeline(feed));
    const { limit, cursor } = parsePageQuery(query);
    const page = await this.client.request(subject, { feed, limit, after: edgeCursor.decode(cursor) });
    return { items: page.items.map((item) => ({ feed: item })), next: edgeCursor.encode(page.next) };
  }

  private followRequest(params: Record<string, string>): FollowRequest {
    const follower = resolveFeed(this.groups, params['group']!, params['id']!, 'timeline');
    const target = resolveFeed(this.groups, params['targetGroup']!, params['targetId']!, 'producer', { group: 'targetGroup', id: 'targetId' });
    return { follower, target, time: new Date().toISOString() };
  }
}

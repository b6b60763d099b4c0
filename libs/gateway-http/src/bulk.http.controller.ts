import { Body, Controller, HttpCode, Inject, Post, Req, UseFilters } from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { subjects, type Activity } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { parseActivitiesBody, parseFollowsBody } from './bulk-requests.js';
import { HttpErrorFilter } from './http-errors.js';
import { RequestCaller } from './auth/authenticate.js';
import { requireOwner, type Caller } from './auth/caller.js';

/**
 * Bodies of the bulk routes may be this large, past `BODY_LIMIT`: 10,000 follows take about
 * 0.5 to 1 MB of JSON. What one request may write is bounded by its event (MAX_BATCH_BYTES),
 * and each activity by `BODY_LIMIT` as on the single route.
 */
export const BULK_BODY_LIMIT = 4 * 1024 * 1024;

/** Imports and migrations: many follows, or many activities, in one request, one event, all or nothing. */
@Controller('v1')
@UseFilters(HttpErrorFilter)
export class BulkHttpController {
  constructor(
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
  ) {}

  /** 200 with the number of follows in the request: each edge now exists, new or not. */
  @Post('follows')
  @HttpCode(200)
  @RouteConfig({ bodyLimit: BULK_BODY_LIMIT })
  followMany(@RequestCaller() caller: Caller, @Body() body: unknown): Promise<{ count: number }> {
    const request = parseFollowsBody(body, this.groups, new Date().toISOString());
    if (!caller.admin) request.follows.forEach(([source], index) => requireOwner(caller, source, 'follow from', `follows[${index}].source`));
    // A trusted backend imports follows its application approved: of private feeds too.
    else request.approved = true;
    return this.client.request(subjects.graph.followMany, request);
  }

  /** 201 with the stored activities in request order; a repeated `foreignId` names the first one. */
  @Post('activities')
  @HttpCode(201)
  @RouteConfig({ bodyLimit: BULK_BODY_LIMIT })
  async addMany(@RequestCaller() caller: Caller, @Body() body: unknown, @Req() request: FastifyRequest): Promise<{ activities: Activity[] }> {
    // The server's body limit (BODY_LIMIT) is the largest activity the single route takes.
    const maxActivityBytes = request.server.initialConfig.bodyLimit ?? BULK_BODY_LIMIT;
    const added = parseActivitiesBody(body, this.groups, maxActivityBytes);
    if (!caller.admin) added.activities.forEach(({ feed }, index) => requireOwner(caller, feed, 'post to', `activities[${index}].feed`));
    const activities = await this.client.request(subjects.content.addMany, added);
    return { activities };
  }
}

import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FeedmillError, newActivitySchema, subjects, TimelinePartitioning, type AddActivityRequest } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { TIMELINE_PARTITIONING } from '@feedmill/runtime';
import { activityJson, parseInput, SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { activityCursor, groupCursor, parseFeedReadQuery, resolveFeed } from './feed-params.js';
import { toHttpError } from './http-errors.js';
import { activityPageJson } from './page-json.js';
import { callerOf } from './auth/authenticate.js';
import { requireOwner, type Caller } from './auth/caller.js';
import { ActivityTargets } from './auth/activity-targets.js';
import { FeedAccess } from './auth/feed-access.js';
import { followOptions } from './follow-options.js';
import { newActivityStamp } from './activity-stamps.js';
import { FEED_POST_ROUTE, FEED_READ_ROUTE, JSON_TYPE } from './front-door.js';

type Params = Record<string, string>;
/** Answers a request with the JSON body it wrote, or undefined for none; or with a status of its own. */
type Produce = (request: FastifyRequest) => Promise<string | undefined | { status: number; json: string }>;

const PENDING = Object.freeze({ status: 202, json: JSON.stringify({ status: 'pending' }) });

/**
 * The routes every client calls all the time (read a feed, post, follow), registered on
 * Fastify itself rather than as Nest controller methods. Nest stays the frame (these take
 * their dependencies from its container, and its error handler still answers Fastify's own
 * errors, such as malformed JSON), but its per-request pipeline (guards, interceptors,
 * pipes, filters, an observable per request) costs more here than it gives: these routes
 * validate their input once, here, and frame pages whose activities the process holding
 * them serialized once ({@link ServiceClient.requestPage}). Every other route is an ordinary Nest controller.
 */
@Injectable()
export class HotRoutes implements OnModuleInit {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
    private readonly access: FeedAccess,
    private readonly targets: ActivityTargets,
    @Inject(TIMELINE_PARTITIONING) private readonly partitioning: TimelinePartitioning,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.get(FEED_READ_ROUTE, answer(200, (request) => this.read(callerOf(request), request.params as Params, request.query)));
    fastify.post(FEED_POST_ROUTE, answer(201, (request) => this.add(callerOf(request), request.params as Params, request.body)));
    fastify.put('/v1/feeds/:group/:id/follows/:targetGroup/:targetId', answer(204, (request) => this.follow(callerOf(request), request.params as Params, request.query)));
    // The same reads and posts, answered before Fastify routes them where the app has a front door.
    if (fastify.frontDoor) {
      fastify.frontDoor.answerFeedReads((caller, params, query) => this.read(caller, params, query));
      fastify.frontDoor.answerPosts((caller, params, body) => this.add(caller, params, body));
      new Logger('http').log('feed reads and posts are answered in front of Fastify (FrontDoor)');
    }
  }

  /**
   * A timeline feed reads its merged timeline, an aggregated one its groups (with its counts
   * in a notification feed); a producer feed reads its own activities.
   */
  private async read(caller: Caller, params: Params, query: unknown): Promise<string> {
    const feed = resolveFeed(this.groups, params['group']!, params['id']!);
    await this.access.requireReader(caller, feed);
    const { limit, cursor, after } = parseFeedReadQuery(query);
    if (this.groups.aggregateRuleOf(feed)) {
      if (after !== undefined) throw new FeedmillError('invalid_request', 'query.after: aggregated feeds are read by groups, which newer-than polling does not take', 'query.after');
      const page = await this.client.request(subjects.timeline.readGroups, { feed, limit, after: groupCursor.decode(cursor) }, this.partitioning.routeOf(feed));
      return JSON.stringify({ ...page, next: groupCursor.encode(page.next) });
    }
    const before = activityCursor.decode(cursor);
    const page = this.groups.isTimeline(feed)
      ? await this.client.requestPage(subjects.timeline.read, { feed, limit, before, after }, this.partitioning.routeOf(feed))
      : await this.client.requestPage(subjects.content.recent, { feeds: [feed], limit, before, after });
    return activityPageJson(page.itemsJson, activityCursor.encode(page.next), activityCursor.encode(page.newest ?? null));
  }

  /** The stored activity; a repeated `foreignId` returns the first one. */
  private async add(caller: Caller, params: Params, body: unknown): Promise<string> {
    const feed = resolveFeed(this.groups, params['group']!, params['id']!, 'producer');
    requireOwner(caller, feed, 'post to');
    const activity = parseInput(newActivitySchema, body, 'body');
    if (activity.to !== undefined) activity.to = await this.targets.allowed(caller, feed, activity.to);
    const request: AddActivityRequest = { feed, activity, ...newActivityStamp() };
    return activityJson(await this.client.request(subjects.content.add, request));
  }

  /**
   * 204 once followed; 202 `pending` when the target is private and its owner must approve.
   * `copyLimit` bounds the target's history the follow brings.
   */
  private async follow(caller: Caller, params: Params, query: unknown): Promise<undefined | { status: number; json: string }> {
    const follower = resolveFeed(this.groups, params['group']!, params['id']!, 'timeline');
    requireOwner(caller, follower, 'follow from');
    const target = resolveFeed(this.groups, params['targetGroup']!, params['targetId']!, 'producer', { group: 'targetGroup', id: 'targetId' });
    const options = await followOptions(this.client, target, query, this.groups.capOf(follower));
    const { state } = await this.client.request(subjects.graph.follow, { follower, target, time: new Date().toISOString(), ...options });
    return state === 'requested' ? PENDING : undefined;
  }
}

/** A Fastify handler answering `status` with the JSON that `handle` wrote, or an error body. */
function answer(status: number, produce: Produce): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply> {
  return async (request, reply) => {
    try {
      const produced = await produce(request);
      if (typeof produced === 'object') return reply.code(produced.status).header('content-type', JSON_TYPE).send(produced.json);
      void reply.code(status);
      return produced === undefined ? reply.send() : reply.header('content-type', JSON_TYPE).send(produced);
    } catch (error) {
      const failure = toHttpError(error);
      return reply.code(failure.status).send(failure.body);
    }
  };
}

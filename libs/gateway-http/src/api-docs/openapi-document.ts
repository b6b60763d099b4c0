import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject, type ZodOpenApiResponsesObject, type oas31 } from 'zod-openapi';
import {
  activityChangesSchema,
  activitySchema,
  bumpBodySchema,
  deadLetterListSchema,
  deadLetterReplaySchema,
  errorCodes,
  feedSettingsSchema,
  followCountsSchema,
  followManyReplySchema,
  markBodySchema,
  newActivitySchema,
  refSchema,
  rebuildStatusSchema,
  streamEventSchema,
  type ErrorCode,
} from '@feedmill/contracts';
import { activitiesBodySchema, followsBodySchema } from '../bulk-requests.js';
import { feedReadQuerySchema, pageQuerySchema } from '../feed-params.js';
import { followQuerySchema, unfollowQuerySchema } from '../follow-options.js';
import { settingsBodySchema } from '../feeds.http.controller.js';
import { streamQuerySchema } from '../streams/feed-streams.js';
import { httpStatusOf } from '../http-errors.js';
import {
  activityPageHttpSchema,
  slicePageHttpSchema,
  activityPath,
  addedActivitiesSchema,
  errorBodySchema,
  feedPageHttpSchema,
  feedPath,
  groupPageHttpSchema,
  hiddenPageHttpSchema,
  hiddenStateSchema,
  markCountsSchema,
  followerPath,
  followPath,
  healthSchema,
  pendingFollowSchema,
  projectionPath,
  readinessSchema,
} from './http-shapes.js';

export type OpenApiDocument = oas31.OpenAPIObject;

/** The version of the API the document describes (`info.version`). */
export const API_VERSION = '1.0.0';

/** The statuses every `/v1` operation may answer with an error body, besides its own. */
const COMMON_ERRORS = [400, 401, 403, 404, 429, 500, 503] as const;
/** …and those of an operation that takes a JSON body. */
const BODY_ERRORS = [413, 415] as const;

const json = <S extends z.ZodType>(schema: S) => ({ content: { 'application/json': { schema } } });

/** The error codes that answer with `status`, from the gateway's one mapping of codes to statuses. */
function codesOf(status: number): ErrorCode[] {
  return errorCodes.filter((code) => httpStatusOf[code] === status);
}

/** An error answer, as a reusable component named by its status: one object per status, so that it is registered once. */
const errorResponses = new Map<number, ReturnType<typeof buildErrorResponse>>();
function errorResponse(status: number) {
  let response = errorResponses.get(status);
  if (!response) errorResponses.set(status, (response = buildErrorResponse(status)));
  return response;
}

function buildErrorResponse(status: number) {
  const codes = codesOf(status);
  return {
    id: `Error${status}`,
    description: `\`{ code, message, field }\` with \`code\` ${codes.map((code) => `\`${code}\``).join(' or ')}${status < 500 ? '; nothing was written' : ''}.`,
    ...(status === 429 && { headers: z.object({ 'retry-after': z.string().meta({ description: 'Seconds until the token (or address) may send again.' }) }) }),
    ...json(errorBodySchema),
  };
}

function errors(...statuses: readonly number[]): ZodOpenApiResponsesObject {
  return Object.fromEntries(statuses.map((status) => [String(status), errorResponse(status)]));
}

/** An operation of the `/v1` API: it takes a token when tokens are configured, and may be refused. */
function v1(operation: ZodOpenApiOperationObject & { operationId: string }, takesBody = false): ZodOpenApiOperationObject {
  return {
    ...operation,
    responses: { ...operation.responses, ...errors(...COMMON_ERRORS, ...(takesBody ? BODY_ERRORS : [])) },
  };
}

const noContent = (description: string) => ({ '204': { description } });

const paths: ZodOpenApiPathsObject = {
  '/v1/feeds/{group}/{id}': {
    get: v1({
      operationId: 'readFeed',
      tags: ['feeds'],
      summary: 'Read a feed, newest first',
      description:
        'A timeline feed reads its merged timeline (only its owner may); a producer feed its own activities (anyone, unless it is private). A feed of an aggregated group reads groups of activities instead, and a notification feed adds `unseen` and `unread`. With `after` (newer-than polling, not on aggregated feeds): the newest `limit` entries newer than that cursor, newest first; not with `cursor`.',
      requestParams: { path: feedPath, query: feedReadQuerySchema },
      responses: { '200': { description: 'A page of activities, or of groups for an aggregated feed.', ...json(z.union([activityPageHttpSchema, groupPageHttpSchema])) } },
    }),
    delete: v1({
      operationId: 'eraseFeed',
      tags: ['feeds'],
      summary: 'Erase a feed for good (the right to erasure)',
      description:
        'Only with `erase=true` (otherwise 400 `erase_required`: there is no soft delete). Only the feed’s owner (or an admin) may. Its activities leave every timeline, slice and cache; its follows both ways, its follow requests, its settings and its own timeline, marks and hidings go; and its activities’ content in the log becomes unreadable: it is sealed with the feed’s key, which is destroyed (crypto-shredding). Answers once every timeline and graph have applied it. The feed id may be used again afterwards.',
      requestParams: { path: feedPath, query: z.object({ erase: z.literal('true').meta({ description: 'Must be `true`: an erasure cannot be undone.' }) }) },
      responses: noContent('Erased.'),
    }),
  },
  '/v1/refs/{ref}/activities': {
    get: v1({
      operationId: 'readSlice',
      tags: ['activities'],
      summary: 'Read a slice: every activity that refers to a ref, newest first',
      description:
        'The activities whose `refs` hold `ref`, whatever feed they were posted in, by time, with one cursor. Those of feeds the caller may not read (private, and not an approved follower) are left out; a page may then be short, even empty, with a cursor to go on (a time boundary that names no activity).',
      requestParams: { path: z.object({ ref: refSchema }), query: pageQuerySchema },
      responses: { '200': { description: 'A page of activities.', ...json(slicePageHttpSchema) } },
    }),
  },
  '/v1/feeds/{group}/{id}/hidden/{activityId}': {
    put: v1({
      operationId: 'hideActivity',
      tags: ['feeds'],
      summary: 'Hide an activity from one’s own timeline',
      description:
        'Every page of this timeline leaves the activity out (pages stay full) until it is shown again. Recorded in the log; hiding what is hidden writes nothing. Only the timeline’s owner (or an admin) may; a producer feed is refused (400, field `group`); an unknown activity, or one in a feed the timeline’s owner may not read, is 404 `activity_not_found`. 503 `unavailable` (retryable) when the timeline has not applied it within the wait. Timelines kept in MongoDB refuse it (400).',
      requestParams: { path: activityPath },
      responses: { '200': { description: 'The activity is hidden.', ...json(hiddenStateSchema) } },
    }),
    delete: v1({
      operationId: 'showActivity',
      tags: ['feeds'],
      summary: 'Show a hidden activity again',
      description: 'Showing what is not hidden writes nothing. Only the timeline’s owner (or an admin) may. 503 `unavailable` (retryable) when the timeline has not applied it within the wait.',
      requestParams: { path: activityPath },
      responses: { '200': { description: 'The activity is shown.', ...json(hiddenStateSchema) } },
    }),
  },
  '/v1/feeds/{group}/{id}/hidden': {
    get: v1({
      operationId: 'listHidden',
      tags: ['feeds'],
      summary: 'List the activities hidden from one’s own timeline, newest hiding first',
      description: 'Only the timeline’s owner (or an admin) may.',
      requestParams: { path: feedPath, query: pageQuerySchema },
      responses: { '200': { description: 'A page of hidden ids, with when each was hidden.', ...json(hiddenPageHttpSchema) } },
    }),
  },
  '/v1/feeds/{group}/{id}/seen': {
    post: v1(
      {
        operationId: 'markSeen',
        tags: ['notifications'],
        summary: 'Mark a notification feed’s groups seen',
        description: 'Groups named by `ids`, or `all`, are seen up to the log position of their newest-recorded activity; a group that grows, or a new one, is unseen whatever its activities’ `time`. Only the feed’s owner may. 503 `unavailable` (retryable) when the timeline has not applied the marking within the wait.',
        requestParams: { path: feedPath },
        requestBody: { required: true, ...json(markBodySchema) },
        responses: { '200': { description: 'The reader’s counts.', ...json(markCountsSchema) } },
      },
      true,
    ),
  },
  '/v1/feeds/{group}/{id}/read': {
    post: v1(
      {
        operationId: 'markRead',
        tags: ['notifications'],
        summary: 'Mark a notification feed’s groups read (and seen)',
        requestParams: { path: feedPath },
        requestBody: { required: true, ...json(markBodySchema) },
        responses: { '200': { description: 'The reader’s counts.', ...json(markCountsSchema) } },
      },
      true,
    ),
  },
  '/v1/feeds/{group}/{id}/stream': {
    get: v1({
      operationId: 'streamFeed',
      tags: ['feeds'],
      summary: 'Stream the changes to a feed’s first page (Server-Sent Events)',
      description:
        'A `text/event-stream` of the changes to the feed’s first page: `added`, `updated`, `removed`, each with an `id:`; the first event is a `reset` holding the page (or, with `Last-Event-ID`, the events missed since that one, or a `reset` when it is no longer kept). An aggregated or notification feed’s page is groups: its `reset` holds `groups` (and the counts), and each change is a `group` event: put `group` at `rank` (0 is the top), taking it out wherever it was, or take out the group `removed` names. Heartbeat comments keep idle connections open. Who may read the feed may stream it; a client that cannot send `Authorization` passes `access_token`.',
      requestParams: {
        path: feedPath,
        query: streamQuerySchema,
        header: z.object({ 'last-event-id': z.string().optional().meta({ description: 'Resume after this event.' }) }),
      },
      responses: {
        '200': {
          description: 'Events, each `id: …`, `event: <type>`, `data: <JSON>`; the data of each type is below.',
          content: { 'text/event-stream': { schema: z.array(streamEventSchema) } },
        },
      },
    }),
  },
  '/v1/feeds/{group}/{id}/activities': {
    post: v1(
      {
        operationId: 'addActivity',
        tags: ['activities'],
        summary: 'Post an activity to a producer feed',
        description:
          'The server gives it an `id`, and a `time` unless one is given. A repeated `foreignId` in the same feed answers the first activity. `to` names up to 100 timeline feeds it is also delivered into; the answer’s `to` lists those that got it.',
        requestParams: { path: feedPath },
        requestBody: { required: true, ...json(newActivitySchema) },
        responses: { '201': { description: 'The stored activity.', ...json(activitySchema) } },
      },
      true,
    ),
  },
  '/v1/feeds/{group}/{id}/activities/{activityId}': {
    delete: v1({
      operationId: 'removeActivity',
      tags: ['activities'],
      summary: 'Remove an activity from its feed and every timeline',
      requestParams: { path: activityPath },
      responses: noContent('Removed.'),
    }),
    patch: v1(
      {
        operationId: 'updateActivity',
        tags: ['activities'],
        summary: 'Replace an activity’s object and/or extra, in place',
        description: 'Its time, relevance and place stay; `updatedAt` is stamped. `extra` replaces the whole of it (`{}` empties it). An update that changes nothing records nothing.',
        requestParams: { path: activityPath },
        requestBody: { required: true, ...json(activityChangesSchema) },
        responses: { '200': { description: 'The activity as it now is.', ...json(activitySchema) } },
      },
      true,
    ),
  },
  '/v1/feeds/{group}/{id}/activities/{activityId}/bump': {
    post: v1(
      {
        operationId: 'bumpActivity',
        tags: ['activities'],
        summary: 'Raise an activity in relevancy-ordered timelines',
        description: 'A bump no later than its relevance changes nothing.',
        requestParams: { path: activityPath },
        requestBody: { required: false, ...json(bumpBodySchema) },
        responses: { '200': { description: 'The activity, with `bumpedAt`.', ...json(activitySchema) } },
      },
      true,
    ),
  },
  '/v1/feeds/{group}/{id}/follows/{targetGroup}/{targetId}': {
    put: v1({
      operationId: 'follow',
      tags: ['follows'],
      summary: 'Follow a producer feed from a timeline feed',
      description: 'Idempotent. The followed feed’s history comes into the timeline (`copyLimit` bounds it).',
      requestParams: { path: followPath, query: followQuerySchema },
      responses: {
        '202': { description: 'The followed feed is private: the follow waits for its owner’s approval.', ...json(pendingFollowSchema) },
        '204': { description: 'Followed.' },
      },
    }),
    delete: v1({
      operationId: 'unfollow',
      tags: ['follows'],
      summary: 'Unfollow, or withdraw a pending follow request',
      description: 'Idempotent. Answers once the timeline no longer shows the feed (unless `keepHistory`).',
      requestParams: { path: followPath, query: unfollowQuerySchema },
      responses: noContent('Unfollowed.'),
    }),
  },
  '/v1/feeds/{group}/{id}/settings': {
    get: v1({
      operationId: 'getSettings',
      tags: ['privacy'],
      summary: 'A producer feed’s settings',
      requestParams: { path: feedPath },
      responses: { '200': { description: 'The settings.', ...json(feedSettingsSchema) } },
    }),
    put: v1(
      {
        operationId: 'putSettings',
        tags: ['privacy'],
        summary: 'Make a producer feed private or public',
        description: 'New follows of a private feed wait for its owner’s approval; a feed that turns public approves those waiting.',
        requestParams: { path: feedPath },
        requestBody: { required: true, ...json(settingsBodySchema) },
        responses: { '200': { description: 'The settings.', ...json(feedSettingsSchema) } },
      },
      true,
    ),
  },
  '/v1/feeds/{group}/{id}/follow-requests': {
    get: v1({
      operationId: 'listFollowRequests',
      tags: ['privacy'],
      summary: 'The follows waiting for the owner’s approval',
      requestParams: { path: feedPath, query: pageQuerySchema },
      responses: { '200': { description: 'A page of follower feeds.', ...json(feedPageHttpSchema) } },
    }),
  },
  '/v1/feeds/{group}/{id}/follow-requests/{followerGroup}/{followerId}': {
    post: v1({
      operationId: 'approveFollowRequest',
      tags: ['privacy'],
      summary: 'Approve a follow request',
      description: 'The request becomes a follow, and the feed’s history comes into the follower’s timeline. `404 not_found` when there is no such request.',
      requestParams: { path: followerPath },
      responses: noContent('Approved.'),
    }),
    delete: v1({
      operationId: 'rejectFollowRequest',
      tags: ['privacy'],
      summary: 'Reject a follow request',
      requestParams: { path: followerPath },
      responses: noContent('Rejected.'),
    }),
  },
  '/v1/feeds/{group}/{id}/followers/{followerGroup}/{followerId}': {
    delete: v1({
      operationId: 'removeFollower',
      tags: ['privacy'],
      summary: 'Remove a follower (or its request)',
      description: 'Answers once the follower’s timeline no longer shows the feed.',
      requestParams: { path: followerPath },
      responses: noContent('Removed.'),
    }),
  },
  '/v1/feeds/{group}/{id}/followers': {
    get: v1({
      operationId: 'listFollowers',
      tags: ['follows'],
      summary: 'The feeds that follow this one',
      requestParams: { path: feedPath, query: pageQuerySchema },
      responses: { '200': { description: 'A page of feeds.', ...json(feedPageHttpSchema) } },
    }),
  },
  '/v1/feeds/{group}/{id}/following': {
    get: v1({
      operationId: 'listFollowing',
      tags: ['follows'],
      summary: 'The feeds this one follows',
      requestParams: { path: feedPath, query: pageQuerySchema },
      responses: { '200': { description: 'A page of feeds.', ...json(feedPageHttpSchema) } },
    }),
  },
  '/v1/feeds/{group}/{id}/counts': {
    get: v1({
      operationId: 'getCounts',
      tags: ['follows'],
      summary: 'How many feeds follow this one, and how many it follows',
      requestParams: { path: feedPath },
      responses: { '200': { description: 'The counts.', ...json(followCountsSchema) } },
    }),
  },
  '/v1/follows': {
    post: v1(
      {
        operationId: 'followMany',
        tags: ['bulk'],
        summary: 'Import up to 10,000 follows, all or nothing',
        description: 'One event in the log. A bad item is refused with the error the single route gives it, its `field` naming the item (`follows[3].target`).',
        requestBody: { required: true, ...json(followsBodySchema) },
        responses: { '200': { description: 'Every edge now exists; `count` is the number of follows in the request.', ...json(followManyReplySchema) } },
      },
      true,
    ),
  },
  '/v1/activities': {
    post: v1(
      {
        operationId: 'addActivities',
        tags: ['bulk'],
        summary: 'Import up to 1,000 activities, all or nothing',
        description: 'One event in the log. Each item is an activity as `addActivity` takes it (without `to`), plus its producer `feed`.',
        requestBody: { required: true, ...json(activitiesBodySchema) },
        responses: { '201': { description: 'The stored activities in request order.', ...json(addedActivitiesSchema) } },
      },
      true,
    ),
  },
  '/v1/admin/rebuild/{projection}': {
    post: v1({
      operationId: 'startRebuild',
      tags: ['admin'],
      summary: 'Rebuild the timelines from the log (admin token)',
      description: 'The live timelines serve reads until the rebuild has caught up.',
      requestParams: { path: projectionPath },
      responses: { '202': { description: 'The rebuild’s status.', ...json(rebuildStatusSchema) } },
    }),
    get: v1({
      operationId: 'getRebuild',
      tags: ['admin'],
      summary: 'The status of the last rebuild (admin token)',
      requestParams: { path: projectionPath },
      responses: { '200': { description: 'The rebuild’s status.', ...json(rebuildStatusSchema) } },
    }),
  },
  '/v1/admin/deadletters': {
    get: v1({
      operationId: 'listDeadLetters',
      tags: ['admin'],
      summary: 'The deliveries fan-out gave up on, with their reasons (admin token)',
      responses: { '200': { description: 'The open dead letters, oldest first.', ...json(deadLetterListSchema) } },
    }),
  },
  '/v1/admin/deadletters/replay': {
    post: v1({
      operationId: 'replayDeadLetters',
      tags: ['admin'],
      summary: 'Deliver every dead letter again as the log now stands (admin token)',
      responses: { '200': { description: 'What was delivered, and what failed again.', ...json(deadLetterReplaySchema) } },
    }),
  },
  '/healthz': {
    get: {
      operationId: 'health',
      tags: ['operations'],
      summary: 'The process is alive',
      security: [],
      responses: { '200': { description: 'Alive.', ...json(healthSchema) } },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      tags: ['operations'],
      summary: 'Every service answers and has caught up with the log',
      security: [],
      responses: {
        '200': { description: 'Ready.', ...json(readinessSchema) },
        '503': { description: 'Not ready: the details.', ...json(readinessSchema) },
      },
    },
  },
  '/openapi.json': {
    get: {
      operationId: 'openApiDocument',
      tags: ['operations'],
      summary: 'This document',
      security: [],
      responses: { '200': { description: 'OpenAPI 3.1, as JSON.', content: { 'application/json': {} } } },
    },
  },
  '/docs': {
    get: {
      operationId: 'apiReference',
      tags: ['operations'],
      summary: 'This document as an HTML reference page',
      security: [],
      responses: { '200': { description: 'HTML.', content: { 'text/html': {} } } },
    },
  },
};

/**
 * The OpenAPI 3.1 document of the HTTP API, built from the zod schemas the routes validate
 * their input with and the contracts' schemas of what they answer: a change to a schema
 * changes the document, and a route without an entry here fails the gateway's tests.
 */
export function openApiDocument(version = API_VERSION): OpenApiDocument {
  return createDocument({
    openapi: '3.1.0',
    info: {
      title: 'feedmill',
      version,
      description:
        'An event-sourced activity-feed backend. Feeds are `group:id`, in URLs `/v1/feeds/{group}/{id}`. Every error is `{ code, message, field }` and writes nothing. A `2xx` means the change is durably in the log.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    security: [{ bearer: [] }],
    tags: [
      { name: 'feeds', description: 'Reading feeds and timelines.' },
      { name: 'notifications', description: 'What a notification feed’s reader has seen and read.' },
      { name: 'activities', description: 'Posting, updating, bumping and removing activities.' },
      { name: 'follows', description: 'Follow edges and their counts.' },
      { name: 'privacy', description: 'Private feeds and follow requests.' },
      { name: 'bulk', description: 'Imports and migrations.' },
      { name: 'admin', description: 'Operations that take an admin token.' },
      { name: 'operations', description: 'Health, readiness and this documentation; no token needed.' },
    ],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'JWT',
          description: 'Needed when the server has `FEEDMILL_JWT_SECRET` or `FEEDMILL_JWT_PUBLIC_KEY` set. `sub` is the user, who owns every feed whose id is its own; `"admin": true` marks a trusted backend.',
        },
      },
      schemas: {
        Activity: activitySchema,
        // The free-form JSON of `extra`, named rather than left to a generated name.
        JsonValue: newActivitySchema.shape.extra.unwrap().valueType,
        ActivityPage: activityPageHttpSchema,
        FeedPage: feedPageHttpSchema,
        Error: errorBodySchema,
      },
    },
  });
}

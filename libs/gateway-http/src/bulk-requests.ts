import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  assertBatchFits,
  FeedmillError,
  followBatchBytes,
  isFeedId,
  jsonBytes,
  MAX_ACTIVITIES_PER_REQUEST,
  MAX_FOLLOWS_PER_REQUEST,
  newActivitySchema,
  type AddActivitiesRequest,
  type FeedId,
  type FollowManyRequest,
} from '@feedmill/contracts';
import type { FeedGroups } from '@feedmill/config';
import { MAX_INPUT_DEPTH, parseInput } from '@feedmill/transport';
import { resolveFeed } from './feed-params.js';
import { newActivityId, receivedAtOf } from './activity-stamps.js';

/**
 * The bodies of the bulk routes, checked whole before anything is sent on: the first bad
 * item is refused with the error the single route gives it, its field naming the item
 * (`follows[3].target`), and nothing is written.
 */
export const followsBodySchema = z.strictObject({
  follows: z
    .array(z.strictObject({ source: z.string(), target: z.string() }))
    .max(MAX_FOLLOWS_PER_REQUEST, `at most ${MAX_FOLLOWS_PER_REQUEST} follows per request`),
});

export const activitiesBodySchema = z.strictObject({
  activities: z
    // An import records history: addressing (`to`) is checked per post, and an import takes none.
    .array(newActivitySchema.omit({ to: true }).extend({ feed: z.string() }))
    .max(MAX_ACTIVITIES_PER_REQUEST, `at most ${MAX_ACTIVITIES_PER_REQUEST} activities per request`),
});

/** `POST /v1/follows`: each source a timeline feed, each target a producer feed, as `PUT …/follows/…` wants them. */
export function parseFollowsBody(body: unknown, groups: FeedGroups, time: string): FollowManyRequest {
  const { follows } = isFollowsBody(body) ? body : parseBody(followsBodySchema, body);
  const sources = new FeedResolver(groups, 'timeline', (index) => `follows[${index}].source`);
  const targets = new FeedResolver(groups, 'producer', (index) => `follows[${index}].target`);
  const pairs: Array<[FeedId, FeedId]> = new Array(follows.length);
  for (let index = 0; index < follows.length; index++) {
    const { source, target } = follows[index]!;
    pairs[index] = [sources.resolve(source, index), targets.resolve(target, index)];
  }
  const request: FollowManyRequest = { id: randomUUID(), time, follows: pairs };
  // The request travels to graph as one message, and becomes one event: it must fit both.
  assertBatchFits(followBatchBytes(request), follows.length, 'follows');
  return request;
}

/**
 * `POST /v1/activities`: each item an activity as `POST …/activities` takes it, plus its
 * producer `feed`, and no larger than that route's body may be (`maxActivityBytes`).
 */
export function parseActivitiesBody(body: unknown, groups: FeedGroups, maxActivityBytes: number): AddActivitiesRequest {
  const { activities } = parseBody(activitiesBodySchema, body);
  const feeds = new FeedResolver(groups, 'producer', (index) => `activities[${index}].feed`);
  // Items without a `time` share the request's received time; their ids, made in order, keep the request's order among them.
  const id = newActivityId();
  const request: AddActivitiesRequest = {
    id,
    receivedAt: receivedAtOf(id),
    activities: activities.map(({ feed, ...activity }, index) => {
      const bytes = jsonBytes(activity);
      if (bytes > maxActivityBytes) {
        throw new FeedmillError('payload_too_large', `activities[${index}]: an activity of ${bytes} bytes, over the ${maxActivityBytes} one activity may have`, `activities[${index}]`);
      }
      return { feed: feeds.resolve(feed, index), id: newActivityId(), activity };
    }),
  };
  assertBatchFits(jsonBytes(request), activities.length, 'activities');
  return request;
}

/**
 * Whether `body` is exactly what {@link followsBodySchema} takes, checked without copying it:
 * zod builds a new object per item (10,000 per request), this reads them in place. Anything
 * it does not take goes through the schema, which gives the error.
 */
function isFollowsBody(body: unknown): body is { follows: Array<{ source: string; target: string }> } {
  if (!isPlainObject(body) || !hasOnlyKeys(body, 1)) return false;
  const follows = body['follows'];
  if (!Array.isArray(follows) || follows.length > MAX_FOLLOWS_PER_REQUEST) return false;
  for (let index = 0; index < follows.length; index++) {
    const item: unknown = follows[index];
    if (!isPlainObject(item) || typeof item['source'] !== 'string' || typeof item['target'] !== 'string' || !hasOnlyKeys(item, 2)) return false;
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether `value` has `count` own enumerable keys: with its known keys checked, no others. */
function hasOnlyKeys(value: Record<string, unknown>, count: number): boolean {
  let keys = 0;
  for (const key in value) if (Object.hasOwn(value, key)) keys++;
  return keys === count;
}

/**
 * The body, checked as the single routes check theirs (depth first: a walk of deep input
 * overflows the stack). Fields are named from the body's top, `follows[3].target`; an item
 * sits two levels down (`activities[i]`), so it may nest as deep as a single route's body.
 */
function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  try {
    return parseInput(schema, body, undefined, MAX_INPUT_DEPTH + 2);
  } catch (error) {
    if (error instanceof FeedmillError && error.field === undefined) throw new FeedmillError(error.code, `body: ${error.message}`, 'body');
    throw error;
  }
}


/**
 * Resolves the `group:id` of items as the single routes resolve their URL's, an error naming
 * the item. A feed named again (a reader's ten follows, a popular target's thousand) is
 * resolved once.
 */
class FeedResolver {
  private readonly resolved = new Map<string, FeedId>();

  constructor(
    private readonly groups: FeedGroups,
    private readonly need: 'producer' | 'timeline',
    /** The field of item `index`, named only in an error. */
    private readonly fieldOf: (index: number) => string,
  ) {}

  resolve(value: string, index: number): FeedId {
    let feed = this.resolved.get(value);
    if (feed === undefined) this.resolved.set(value, (feed = this.resolveFirst(value, this.fieldOf(index))));
    return feed;
  }

  private resolveFirst(value: string, field: string): FeedId {
    // The usual feed, well formed and of a configured group of the kind wanted, in one test;
    // any other is refused as the single routes refuse it.
    if (isFeedId(value) && this.groups.kindOfFeed(value) === this.need) return value;
    const colon = value.indexOf(':');
    if (colon <= 0) throw new FeedmillError('invalid_request', `${field}: must be "group:id"`, field);
    try {
      return resolveFeed(this.groups, value.slice(0, colon), value.slice(colon + 1), this.need, { group: field, id: field });
    } catch (error) {
      if (!(error instanceof FeedmillError)) throw error;
      throw new FeedmillError(error.code, error.message.startsWith(`${field}:`) ? error.message : `${field}: ${error.message}`, field);
    }
  }
}

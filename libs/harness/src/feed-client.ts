import type { Activity, FeedId, NewActivity } from '@feedmill/contracts';
import { FeedmillApiError, FeedmillClient } from '@feedmill/client';

export interface HttpResult<T = unknown> {
  status: number;
  body: T;
}

/** Signs a token for a user (`sub`), or for an admin when `sub` is undefined. */
export type TokenFor = (sub: string | undefined) => Promise<string>;

/**
 * The tests' and the benchmark's view of the HTTP API: {@link FeedmillClient} underneath
 * (`api`), with each answer given back as its status and body, errors included, since
 * tests assert statuses. With `tokenFor`, each request carries the token of the user who
 * owns the feed in its path (`/v1/feeds/{group}/{id}` acts as `id`), or an admin's for other
 * paths, unless it sets its own `authorization`.
 */
export class FeedClient {
  /** The typed client every request goes through. */
  readonly api: FeedmillClient;

  constructor(
    readonly baseUrl: string,
    tokenFor?: TokenFor,
  ) {
    this.api = new FeedmillClient({ baseUrl, ...(tokenFor && { token: ({ path }) => tokenFor(ownerOf(path)) }) });
  }

  /** Any request, as it is: a body that is a string is sent unchanged, so that tests may send malformed JSON. */
  async call<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
    const response = await this.api.send<T>({ method, path, body, headers });
    return { status: response.status, body: response.body };
  }

  post(feed: string, activity: Record<string, unknown>) {
    return answered(201, () => this.api.addActivity(feed as FeedId, activity as unknown as NewActivity));
  }

  remove(feed: string, id: string) {
    return answered(204, () => this.api.removeActivity(feed as FeedId, id));
  }

  /** 204 when followed; 202 `{ status: 'pending' }` when the feed is private. */
  async follow(follower: string, target: string): Promise<HttpResult> {
    try {
      const { status } = await this.api.follow(follower as FeedId, target as FeedId);
      return status === 'pending' ? { status: 202, body: { status } } : { status: 204, body: undefined };
    } catch (error) {
      return refused(error);
    }
  }

  unfollow(follower: string, target: string) {
    return answered(204, () => this.api.unfollow(follower as FeedId, target as FeedId));
  }

  page(feed: string, limit = 25, cursor?: string) {
    return answered(200, () => this.api.readFeed(feed as FeedId, { limit, cursor }));
  }

  /** Newer-than polling: the newest `limit` entries newer than the cursor `after`. */
  newer(feed: string, after: string, limit = 25) {
    return answered(200, () => this.api.readNewer(feed as FeedId, after, { limit }));
  }

  /** A service's counters as `/readyz` shows them (`timeline`, `fanout`, …); fails when it shows none. */
  async counters(service: string): Promise<Record<string, number>> {
    const { services } = await this.api.readiness();
    const counters = services.find((status) => status.service === service)?.counters;
    if (!counters) throw new Error(`/readyz shows no counters for ${service}: ${JSON.stringify(services)}`);
    return counters;
  }

  /** Scrolls a feed to its end with the API's cursors; fails on a page that is not 200. */
  async readAll(feed: string, limit = 25): Promise<Activity[]> {
    const items: Activity[] = [];
    for await (const activity of this.api.feedItems(feed as FeedId, { limit })) items.push(activity);
    return items;
  }
}

/** The user whose token a path takes: the id of the feed it names, or none (an admin's). */
function ownerOf(path: string): string | undefined {
  const owner = /^\/v1\/feeds\/[^/]+\/([^/?]+)/.exec(path)?.[1];
  return owner === undefined ? undefined : decodeURIComponent(owner);
}

/** What a call of the typed client answered: `status` and its result, or the error's status and body. */
async function answered<T>(status: number, call: () => Promise<T>): Promise<HttpResult<T>> {
  try {
    return { status, body: await call() };
  } catch (error) {
    return refused<T>(error);
  }
}

/** An error answer as its status and body; anything else (the server unreachable) is thrown on. */
function refused<T>(error: unknown): HttpResult<T> {
  if (error instanceof FeedmillApiError) return { status: error.status, body: error.toBody() as T };
  throw error;
}

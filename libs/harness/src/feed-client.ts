import type { Activity } from '@feedmill/contracts';

export interface HttpResult<T = unknown> {
  status: number;
  body: T;
}

/** Signs a token for a user (`sub`), or for an admin when `sub` is undefined. */
export type TokenFor = (sub: string | undefined) => Promise<string>;

/**
 * A thin client of the public HTTP API, for tests and benchmarks. With `tokenFor`, each
 * request carries the token of the user who owns the feed in its path (`/v1/feeds/{group}/{id}`
 * acts as `id`), or an admin's for other paths, unless it sets its own `authorization`.
 */
export class FeedClient {
  constructor(
    readonly baseUrl: string,
    private readonly tokenFor?: TokenFor,
  ) {}

  async call<T = unknown>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
    const init: RequestInit = { method, headers: { ...(await this.authorization(path)), ...headers } };
    if (body !== undefined) {
      init.body = typeof body === 'string' ? body : JSON.stringify(body);
      (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
    }
    const response = await fetch(`${this.baseUrl}${path}`, init);
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  private async authorization(path: string): Promise<Record<string, string>> {
    if (!this.tokenFor) return {};
    const owner = /^\/v1\/feeds\/[^/]+\/([^/?]+)/.exec(path)?.[1];
    return { authorization: `Bearer ${await this.tokenFor(owner === undefined ? undefined : decodeURIComponent(owner))}` };
  }

  post(feed: string, activity: Record<string, unknown>) {
    return this.call<Activity>('POST', `/v1/feeds/${feed.replace(':', '/')}/activities`, activity);
  }

  remove(feed: string, id: string) {
    return this.call('DELETE', `/v1/feeds/${feed.replace(':', '/')}/activities/${id}`);
  }

  follow(follower: string, target: string) {
    return this.call('PUT', `/v1/feeds/${follower.replace(':', '/')}/follows/${target.replace(':', '/')}`);
  }

  unfollow(follower: string, target: string) {
    return this.call('DELETE', `/v1/feeds/${follower.replace(':', '/')}/follows/${target.replace(':', '/')}`);
  }

  page(feed: string, limit = 25, cursor?: string) {
    const query = new URLSearchParams({ limit: String(limit), ...(cursor ? { cursor } : {}) });
    return this.call<{ items: Activity[]; next: string | null }>('GET', `/v1/feeds/${feed.replace(':', '/')}?${query}`);
  }

  /** Scrolls a feed to its end with the API's cursors; fails on a non-200 page. */
  async readAll(feed: string, limit = 25): Promise<Activity[]> {
    const items: Activity[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100_000; pages++) {
      const page = await this.page(feed, limit, cursor);
      if (page.status !== 200) throw new Error(`GET ${feed} answered ${page.status}: ${JSON.stringify(page.body)}`);
      items.push(...page.body.items);
      if (page.body.next === null) return items;
      cursor = page.body.next;
    }
    throw new Error(`${feed} did not end`);
  }
}

import type {
  Activity,
  ActivityGroupItem,
  HiddenEntry,
  MarkBody,
  ActivityChanges,
  DeadLetterList,
  DeadLetterReplay,
  FeedId,
  FeedSettings,
  FollowCounts,
  NewActivity,
  RebuildStatus,
  ServiceStatus,
} from '@feedmill/contracts';
import { pages, type Page } from './pages.js';
import { FeedStream, type StreamOptions } from './feed-stream.js';
import { ApiTransport, type ApiRequest, type ApiResponse, type FeedmillClientOptions } from './transport.js';

/** A page of feeds: followers, followed feeds, follow requests. */
export type FeedPage = Page<{ feed: FeedId }>;
/** A page of activities; `newest` is the cursor to poll with (`readNewer`), null for an empty page. */
export type ActivityPage = Page<Activity> & { newest: string | null };
/** A page of an aggregated feed; a notification feed's carries its reader's counts. */
export type GroupPage = Page<ActivityGroupItem> & { unseen?: number; unread?: number };
/** A page of the activities a reader hid, newest hiding first. */
export type HiddenPage = Page<HiddenEntry>;
/** Whether an activity is hidden from the reader's timeline, after a hide or show. */
export interface HiddenState {
  id: string;
  hidden: boolean;
}
/** A notification feed's reader's counts after a marking. */
export interface MarkCounts {
  unseen: number;
  unread: number;
}

export interface NewerOptions {
  /** Items per page, 1 to 100. @defaultValue 25 */
  limit?: number;
}

export interface PageOptions {
  /** Items per page, 1 to 100. @defaultValue 25 */
  limit?: number;
  /** The `next` of the page before; none for the first page. */
  cursor?: string;
}

export interface FollowOptions {
  /** At most this many of the followed feed's newest activities come into the timeline. @defaultValue as many as it holds */
  copyLimit?: number;
}

export interface UnfollowOptions {
  /** Keep what was delivered in the timeline. @defaultValue false */
  keepHistory?: boolean;
}

/** A follow's outcome: followed, or waiting for the owner of a private feed to approve. */
export type FollowResult = { status: 'following' } | { status: 'pending' };

/** An activity of a bulk import: as {@link FeedmillClient.addActivity} takes it, plus its feed. */
export type ImportedActivity = Omit<NewActivity, 'to'> & { feed: FeedId };

export interface Readiness {
  ready: boolean;
  services: Array<ServiceStatus & { error?: string }>;
}

/**
 * A typed client of feedmill's HTTP API, over `fetch`. Feeds are `group:id`. Every answer
 * other than success is thrown as a {@link FeedmillApiError} with its `status`, `code` and
 * `field`. Paged reads come as pages (`readFeed`) or as async iterators of every item
 * (`feedItems`).
 *
 * @example
 * const feeds = new FeedmillClient({ baseUrl: 'http://localhost:3000', token });
 * await feeds.follow('timeline:alice', 'user:bob');
 * await feeds.addActivity('user:bob', { actor: 'bob', verb: 'post', object: 'photo:1' });
 * for await (const activity of feeds.feedItems('timeline:alice')) console.log(activity.object);
 */
export class FeedmillClient {
  private readonly transport: ApiTransport;

  constructor(options: FeedmillClientOptions) {
    this.transport = new ApiTransport(options);
  }

  /** Sends any request and gives back its answer, errors included, without throwing for them. */
  send<T = unknown>(request: ApiRequest): Promise<ApiResponse<T>> {
    return this.transport.send<T>(request);
  }

  // Feeds and activities

  /** A page of a feed, newest first: a timeline's merged timeline, a producer feed's own activities. */
  async readFeed(feed: FeedId, options: PageOptions = {}): Promise<ActivityPage> {
    return this.body<ActivityPage>({ method: 'GET', path: feedPath(feed), query: { limit: options.limit, cursor: options.cursor } });
  }

  /**
   * Newer-than polling: the newest `limit` entries newer than `after` (a page's `newest`),
   * newest first. `next` is set when more newer entries exist than the page holds: read on
   * down from it with {@link readFeed} until you meet the entries you had.
   */
  async readNewer(feed: FeedId, after: string, options: NewerOptions = {}): Promise<ActivityPage> {
    return this.body<ActivityPage>({ method: 'GET', path: feedPath(feed), query: { limit: options.limit, after } });
  }

  /**
   * The feed's realtime stream: the changes to its first page (`added`, `updated`,
   * `removed`), after a `reset` holding the page itself, or, with `lastEventId`, what was
   * missed since that event. Reconnects by itself (see {@link FeedStream}).
   */
  stream(feed: FeedId, options: StreamOptions = {}): FeedStream {
    return new FeedStream(this.transport, `${feedPath(feed)}/stream`, options);
  }

  /** Every activity of a feed, newest first, page by page. */
  feedItems(feed: FeedId, options: Omit<PageOptions, 'cursor'> = {}): AsyncIterableIterator<Activity> {
    return pages((cursor) => this.readFeed(feed, { ...options, cursor }));
  }

  /** A page of an aggregated feed's groups, newest first; a notification feed's with `unseen` and `unread`. */
  async readGroups(feed: FeedId, options: PageOptions = {}): Promise<GroupPage> {
    return this.body<GroupPage>({ method: 'GET', path: feedPath(feed), query: { limit: options.limit, cursor: options.cursor } });
  }

  /** Every group of an aggregated feed, newest first, page by page. */
  groupItems(feed: FeedId, options: Omit<PageOptions, 'cursor'> = {}): AsyncIterableIterator<ActivityGroupItem> {
    return pages((cursor) => this.readGroups(feed, { ...options, cursor }));
  }

  /** Marks a notification feed's groups (by id, or all) seen; answers the reader's counts. */
  markSeen(feed: FeedId, marks: MarkBody): Promise<MarkCounts> {
    return this.body<MarkCounts>({ method: 'POST', path: `${feedPath(feed)}/seen`, body: marks });
  }

  /** Marks a notification feed's groups (by id, or all) read, and so seen; answers the reader's counts. */
  markRead(feed: FeedId, marks: MarkBody): Promise<MarkCounts> {
    return this.body<MarkCounts>({ method: 'POST', path: `${feedPath(feed)}/read`, body: marks });
  }

  /**
   * A page of a slice: the activities that refer to `ref` (among their `refs`), whatever
   * feed they were posted in, newest first, leaving out those of feeds the caller may not read.
   */
  async readSlice(ref: string, options: PageOptions = {}): Promise<Page<Activity>> {
    return this.body<Page<Activity>>({ method: 'GET', path: `/v1/refs/${encodeURIComponent(ref)}/activities`, query: { limit: options.limit, cursor: options.cursor } });
  }

  /** Every activity of a slice, newest first, page by page. */
  sliceItems(ref: string, options: Omit<PageOptions, 'cursor'> = {}): AsyncIterableIterator<Activity> {
    return pages((cursor) => this.readSlice(ref, { ...options, cursor }));
  }

  /** Hides an activity from the reader's own timeline (every page leaves it out); hiding twice is one hiding. */
  hideActivity(timeline: FeedId, activityId: string): Promise<HiddenState> {
    return this.body<HiddenState>({ method: 'PUT', path: `${feedPath(timeline)}/hidden/${encodeURIComponent(activityId)}` });
  }

  /** Shows a hidden activity again in the reader's own timeline. */
  showActivity(timeline: FeedId, activityId: string): Promise<HiddenState> {
    return this.body<HiddenState>({ method: 'DELETE', path: `${feedPath(timeline)}/hidden/${encodeURIComponent(activityId)}` });
  }

  /** A page of what the reader hid from its timeline, newest hiding first. */
  readHidden(timeline: FeedId, options: PageOptions = {}): Promise<HiddenPage> {
    return this.body<HiddenPage>({ method: 'GET', path: `${feedPath(timeline)}/hidden`, query: { limit: options.limit, cursor: options.cursor } });
  }

  /** Everything the reader hid, newest hiding first, page by page. */
  hiddenItems(timeline: FeedId, options: Omit<PageOptions, 'cursor'> = {}): AsyncIterableIterator<HiddenEntry> {
    return pages((cursor) => this.readHidden(timeline, { ...options, cursor }));
  }

  /** Posts an activity; a repeated `foreignId` in the same feed gives back the first one. */
  addActivity(feed: FeedId, activity: NewActivity): Promise<Activity> {
    return this.body<Activity>({ method: 'POST', path: `${feedPath(feed)}/activities`, body: activity });
  }

  /**
   * Erases the feed for good: its activities (unreadable in the log too), its follows both
   * ways and its own timeline. Resolves once every timeline has applied it.
   */
  async eraseFeed(feed: FeedId): Promise<void> {
    await this.transport.call({ method: 'DELETE', path: feedPath(feed), query: { erase: true } });
  }

  async removeActivity(feed: FeedId, activityId: string): Promise<void> {
    await this.transport.call({ method: 'DELETE', path: activityPath(feed, activityId) });
  }

  /** Replaces its `object` and/or its whole `extra`, in place. */
  updateActivity(feed: FeedId, activityId: string, changes: ActivityChanges): Promise<Activity> {
    return this.body<Activity>({ method: 'PATCH', path: activityPath(feed, activityId), body: changes });
  }

  /** Raises it in relevancy-ordered timelines, as of `time` (the server's now when none). */
  bumpActivity(feed: FeedId, activityId: string, time?: string): Promise<Activity> {
    return this.body<Activity>({ method: 'POST', path: `${activityPath(feed, activityId)}/bump`, body: time === undefined ? {} : { time } });
  }

  // Follows

  /** `follower` (a timeline feed) follows `target` (a producer feed); idempotent. */
  async follow(follower: FeedId, target: FeedId, options: FollowOptions = {}): Promise<FollowResult> {
    const response = await this.transport.call({ method: 'PUT', path: followPath(follower, target), query: { copyLimit: options.copyLimit } });
    return response.status === 202 ? { status: 'pending' } : { status: 'following' };
  }

  /** Unfollows, or withdraws a pending request; resolves once the timeline no longer shows the feed. */
  async unfollow(follower: FeedId, target: FeedId, options: UnfollowOptions = {}): Promise<void> {
    await this.transport.call({ method: 'DELETE', path: followPath(follower, target), query: { keepHistory: options.keepHistory } });
  }

  followers(feed: FeedId, options: PageOptions = {}): Promise<FeedPage> {
    return this.feedPage(`${feedPath(feed)}/followers`, options);
  }

  following(feed: FeedId, options: PageOptions = {}): Promise<FeedPage> {
    return this.feedPage(`${feedPath(feed)}/following`, options);
  }

  /** Every feed that follows `feed`, page by page. */
  followerItems(feed: FeedId, options: Omit<PageOptions, 'cursor'> = {}): AsyncIterableIterator<FeedId> {
    return feedsOf(pages((cursor) => this.followers(feed, { ...options, cursor })));
  }

  /** Every feed `feed` follows, page by page. */
  followingItems(feed: FeedId, options: Omit<PageOptions, 'cursor'> = {}): AsyncIterableIterator<FeedId> {
    return feedsOf(pages((cursor) => this.following(feed, { ...options, cursor })));
  }

  counts(feed: FeedId): Promise<FollowCounts> {
    return this.body<FollowCounts>({ method: 'GET', path: `${feedPath(feed)}/counts` });
  }

  // Private feeds and follow requests

  settings(feed: FeedId): Promise<FeedSettings> {
    return this.body<FeedSettings>({ method: 'GET', path: `${feedPath(feed)}/settings` });
  }

  putSettings(feed: FeedId, settings: FeedSettings): Promise<FeedSettings> {
    return this.body<FeedSettings>({ method: 'PUT', path: `${feedPath(feed)}/settings`, body: settings });
  }

  followRequests(feed: FeedId, options: PageOptions = {}): Promise<FeedPage> {
    return this.feedPage(`${feedPath(feed)}/follow-requests`, options);
  }

  /** Every follow of `feed` waiting for approval, page by page. */
  followRequestItems(feed: FeedId, options: Omit<PageOptions, 'cursor'> = {}): AsyncIterableIterator<FeedId> {
    return feedsOf(pages((cursor) => this.followRequests(feed, { ...options, cursor })));
  }

  async approveFollowRequest(feed: FeedId, follower: FeedId): Promise<void> {
    await this.transport.call({ method: 'POST', path: `${feedPath(feed)}/follow-requests/${feedPathPart(follower)}` });
  }

  async rejectFollowRequest(feed: FeedId, follower: FeedId): Promise<void> {
    await this.transport.call({ method: 'DELETE', path: `${feedPath(feed)}/follow-requests/${feedPathPart(follower)}` });
  }

  /** The owner removes a follower (or its request); resolves once its timeline no longer shows the feed. */
  async removeFollower(feed: FeedId, follower: FeedId): Promise<void> {
    await this.transport.call({ method: 'DELETE', path: `${feedPath(feed)}/followers/${feedPathPart(follower)}` });
  }

  // Bulk imports

  /** Up to 10,000 follows in one request, all or nothing; the count of follows in the request. */
  async followMany(follows: ReadonlyArray<{ source: FeedId; target: FeedId }>): Promise<number> {
    return (await this.body<{ count: number }>({ method: 'POST', path: '/v1/follows', body: { follows } })).count;
  }

  /** Up to 1,000 activities in one request, all or nothing; the stored activities in request order. */
  async addActivities(activities: readonly ImportedActivity[]): Promise<Activity[]> {
    return (await this.body<{ activities: Activity[] }>({ method: 'POST', path: '/v1/activities', body: { activities } })).activities;
  }

  // Operations (an admin token)

  startRebuild(projection: 'timeline' = 'timeline'): Promise<RebuildStatus> {
    return this.body<RebuildStatus>({ method: 'POST', path: `/v1/admin/rebuild/${projection}` });
  }

  rebuildStatus(projection: 'timeline' = 'timeline'): Promise<RebuildStatus> {
    return this.body<RebuildStatus>({ method: 'GET', path: `/v1/admin/rebuild/${projection}` });
  }

  deadLetters(): Promise<DeadLetterList> {
    return this.body<DeadLetterList>({ method: 'GET', path: '/v1/admin/deadletters' });
  }

  replayDeadLetters(): Promise<DeadLetterReplay> {
    return this.body<DeadLetterReplay>({ method: 'POST', path: '/v1/admin/deadletters/replay' });
  }

  // Probes and documents (no token)

  /** Whether the process answers at all. */
  async alive(): Promise<boolean> {
    return (await this.transport.send({ method: 'GET', path: '/healthz' }).catch(() => undefined))?.status === 200;
  }

  /** Whether every service answers and has caught up with the log, with each one's status; a 503 is an answer here, not an error. */
  async readiness(): Promise<Readiness> {
    const response = await this.transport.send<Readiness>({ method: 'GET', path: '/readyz' });
    if (response.status === 200 || response.status === 503) return response.body;
    return (await this.transport.call<Readiness>({ method: 'GET', path: '/readyz' })).body;
  }

  /** The OpenAPI 3.1 document of the API. */
  openApiDocument(): Promise<Record<string, unknown>> {
    return this.body<Record<string, unknown>>({ method: 'GET', path: '/openapi.json' });
  }

  private feedPage(path: string, options: PageOptions): Promise<FeedPage> {
    return this.body<FeedPage>({ method: 'GET', path, query: { limit: options.limit, cursor: options.cursor } });
  }

  private async body<T>(request: ApiRequest): Promise<T> {
    return (await this.transport.call<T>(request)).body;
  }
}

/** `group/id` of a feed, each part encoded for a URL. */
function feedPathPart(feed: FeedId): string {
  const colon = feed.indexOf(':');
  if (colon <= 0) throw new TypeError(`a feed is "group:id", not "${feed}"`);
  return `${encodeURIComponent(feed.slice(0, colon))}/${encodeURIComponent(feed.slice(colon + 1))}`;
}

function feedPath(feed: FeedId): string {
  return `/v1/feeds/${feedPathPart(feed)}`;
}

function activityPath(feed: FeedId, activityId: string): string {
  return `${feedPath(feed)}/activities/${encodeURIComponent(activityId)}`;
}

function followPath(follower: FeedId, target: FeedId): string {
  return `${feedPath(follower)}/follows/${feedPathPart(target)}`;
}

async function* feedsOf(items: AsyncIterable<{ feed: FeedId }>): AsyncIterableIterator<FeedId> {
  for await (const item of items) yield item.feed;
}

import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import {
  isReference,
  subjects,
  type TimelineItem,
  type Activity,
  type DeliverReply,
  type DeliverRequest,
  type FeedConfig,
  type RebuildStatus,
  type FeedId,
  type ReadTimelineRequest,
  type SortKey,
  type TimelineOrder,
} from '@feedmill/contracts';
import type { PullScope, TimelinePage } from '@feedmill/feed-models';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { FEED_CONFIG_LOADER, STORE_FACTORY, type StoreFactory } from '@feedmill/runtime';
import { allEdges, recentActivities, SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { TimelineRebuild } from './timeline-rebuild.js';
import { TIMELINE_STORE, type TimelineStore } from '@feedmill/stores';

interface PositionWaiter {
  position: number;
  resolve: (reached: boolean) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** Materialized timelines: receives deliveries from fan-out, serves merged reads, rebuilds. */
@Injectable()
export class TimelineService implements OnModuleDestroy {
  private readonly rebuild: TimelineRebuild;
  /** Feeds read by pulls since start, summed over reads: the read side of fan-out's work. */
  private feedsQueried = 0;
  private readonly waiters = new Set<PositionWaiter>();

  constructor(
    @Inject(TIMELINE_STORE) private store: TimelineStore,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private groups: FeedGroups,
    @Inject(EVENT_LOG) log: EventLog,
    @Inject(STORE_FACTORY) stores: StoreFactory,
    @Inject(FEED_CONFIG_LOADER) loadConfig: () => FeedConfig,
  ) {
    this.rebuild = new TimelineRebuild(log, stores, client, loadConfig, (rebuilt) => {
      this.store = rebuilt.store;
      this.groups = rebuilt.groups;
    });
  }

  onModuleDestroy(): Promise<void> {
    for (const waiter of this.waiters) this.stopWaiting(waiter, false);
    return this.rebuild.stop();
  }

  startRebuild(): Promise<RebuildStatus> {
    return this.rebuild.start();
  }

  rebuildStatus(): RebuildStatus {
    return this.rebuild.status();
  }

  async deliver(request: DeliverRequest): Promise<DeliverReply> {
    const reply = await this.store.deliver(request);
    if (reply.applied) this.reached(reply.position);
    return reply;
  }

  /**
   * Resolves once the timelines have applied the log up to `position` (an unfollow, say,
   * whose entries must be gone from the reader's next page), or after `timeoutMs` with
   * `reached: false`.
   */
  async reach(position: number, timeoutMs: number): Promise<{ reached: boolean; position: number }> {
    // Waiting before looking: a delivery applied while the position is read still wakes it.
    let waiter!: PositionWaiter;
    const reached = new Promise<boolean>((resolve) => {
      waiter = { position, resolve, timer: setTimeout(() => this.stopWaiting(waiter, false), timeoutMs) };
      this.waiters.add(waiter);
    });
    if ((await this.store.position()) >= position) this.stopWaiting(waiter, true);
    return { reached: await reached, position: await this.store.position() };
  }

  private reached(position: number): void {
    for (const waiter of this.waiters) if (waiter.position <= position) this.stopWaiting(waiter, true);
  }

  private stopWaiting(waiter: PositionWaiter, reached: boolean): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    waiter.resolve(reached);
  }

  async read(request: ReadTimelineRequest): Promise<TimelinePage<Activity>> {
    const order = this.groups.timelinePolicyOf(request.feed).relevancy ? 'relevance' : 'time';
    const page = await this.store.readPage(request.feed, request.before, request.limit, (before, limit, scope) => this.pull(request.feed, before, limit, order, scope));
    return { items: await this.hydrate(page.items), next: page.next };
  }

  /**
   * Linked entries hold references: the page's activities come from content in one batched
   * query (seed 001's second round trip). One removed meanwhile is left out.
   */
  private async hydrate(items: readonly TimelineItem[]): Promise<Activity[]> {
    const ids = items.filter(isReference).map((item) => item.id);
    if (ids.length === 0) return items as Activity[];
    const found = new Map((await this.client.request(subjects.content.get, { ids })).map((a) => [a.id, a]));
    return items.flatMap((item) => (isReference(item) ? (found.has(item.id) ? [found.get(item.id)!] : []) : [item]));
  }

  async status() {
    return { service: 'timeline', ready: true, position: await this.store.position(), counters: { ...(await this.store.counters()), feedsQueried: this.feedsQueried } };
  }

  /**
   * Fan-out on read: the newest activities of every feed the reader follows. Graph and
   * content answer as of at least what this store holds or is taking in when the pull
   * starts (with several replicas, either may lag): a cache built from the pull then misses
   * no follow and no post that a delivery brought here before the cache existed.
   */
  private async pull(reader: FeedId, before: SortKey | undefined, limit: number, order: TimelineOrder, scope?: PullScope): Promise<Activity[]> {
    const atLeast = await this.store.pullPosition();
    const feeds = scope && 'only' in scope ? scope.only : without(await allEdges(this.client, 'following', reader, atLeast), scope?.except);
    if (feeds.length === 0) return [];
    this.feedsQueried += feeds.length;
    return recentActivities(this.client, { feeds: feeds as FeedId[], before, limit, atLeast, order });
  }
}

/** `feeds` less those of `left` (a hybrid reader's pulled edges, read apart). */
function without(feeds: FeedId[], left: readonly FeedId[] | undefined): FeedId[] {
  if (!left || left.length === 0) return feeds;
  const leaving = new Set(left);
  return feeds.filter((feed) => !leaving.has(feed));
}

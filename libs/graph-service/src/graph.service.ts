import { Inject, Injectable, Logger } from '@nestjs/common';
import {
  FeedmillError,
  feedOwner,
  type EdgeBoundsReply,
  type EdgePage,
  type EdgePageRequest,
  type FeedId,
  type FeedSettings,
  type FollowCounts,
  type FollowManyRequest,
  type FollowRequest,
  type FollowState,
  type PutSettingsRequest,
} from '@feedmill/contracts';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { decideFeedSettings, decideFollowEdge, decideFollowMany, streamOf, type FollowEdgeCommand } from '@feedmill/feed-models';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { ProjectedService, SerialQueues } from '@feedmill/runtime';
import { GRAPH_STORE, type GraphStore } from '@feedmill/stores';

/** Follow edges: decides and appends follows and unfollows, answers edge queries. */
@Injectable()
export class GraphService extends ProjectedService {
  /** Commands of one follower run one after another, on the state the last one left. */
  private readonly perFollower = new SerialQueues();
  private readonly perFeedSettings = new SerialQueues();
  private readonly logger = new Logger('graph');

  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(GRAPH_STORE) private readonly store: GraphStore,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
  ) {
    super(log, store);
  }

  /**
   * A follow, or, of a private feed, a request for its owner to approve. A follow concurrent
   * with the target turning private may be decided on either side of it: like a follow made
   * a moment before, which the feed keeps. Follows of one feed are not serialized, so that a
   * popular feed's followers share the log's group commits.
   */
  async follow(request: FollowRequest): Promise<FollowState> {
    if (!this.groups.isTimeline(request.follower)) {
      throw new FeedmillError('group_cannot_follow', `${request.follower} is not a timeline feed; only timeline feeds follow`, 'group');
    }
    return this.decide({ type: 'Follow', data: request, targetPrivate: await this.closedTo(request.follower, request.target) });
  }

  /** Whether `target` is private to the owner of `follower`: its own owner's feeds are never closed to it. */
  private async closedTo(follower: FeedId, target: FeedId): Promise<boolean> {
    return feedOwner(follower) !== feedOwner(target) && (await this.store.isPrivate(target));
  }

  /**
   * Records many follows as one event (a `FeedsFollowed` in a stream of its own), all or none:
   * every follower is checked first, and a refusal names the item. Edges that exist are left
   * out of the event. Returns how many follows the request carried.
   *
   * It takes no follower's serial section: a follow's event says what the edge is after it,
   * whatever it was before, so an edge followed both here and by a single follow meanwhile
   * is recorded twice and applied once. What the batch leaves out because the projection
   * shows it, it leaves as the projection shows it: a concurrent unfollow of such an edge
   * comes after the batch, which found the edge there.
   */
  async followMany(request: FollowManyRequest): Promise<number> {
    for (let index = 0; index < request.follows.length; index++) {
      const [follower, target] = request.follows[index]!;
      if (!this.groups.isTimeline(follower)) {
        throw new FeedmillError('group_cannot_follow', `follows[${index}].source: ${follower} is not a timeline feed; only timeline feeds follow`, `follows[${index}].source`);
      }
      // An import records follows, not requests: of a private feed, only approved ones.
      if (!request.approved && (await this.closedTo(follower, target))) {
        throw new FeedmillError('forbidden', `follows[${index}].target: ${target} is private; ask to follow it with PUT …/follows/…, or import approved follows with an admin token`, `follows[${index}].target`);
      }
    }
    await this.writer.decideWithRetry(async () => {
      const following = await this.store.followingEach(request.follows);
      const events = decideFollowMany({ type: 'FollowMany', data: request }, following);
      for (const event of events) await this.writer.append(streamOf(event), event);
    });
    return request.follows.length;
  }

  /** By the follower: an unfollow, or its request withdrawn; a private feed's history is not kept. */
  async unfollow(request: FollowRequest): Promise<FollowState> {
    // A plain unfollow of a feed whose history the reader kept when it unfollowed before ends
    // that history: afterwards the timeline shows nothing of the feed, as after any unfollow.
    if (request.keepHistory !== true && (await this.keepsHistory(request.follower, request.target))) return this.decide({ type: 'EndKeptHistory', data: request });
    return this.decide({ type: 'Unfollow', data: request, targetPrivate: request.keepHistory === true && (await this.closedTo(request.follower, request.target)) });
  }

  /** By the target's owner: the request becomes a follow (and the backfill arrives). */
  approve(request: FollowRequest): Promise<FollowState> {
    return this.decide({ type: 'Approve', data: request });
  }

  reject(request: FollowRequest): Promise<FollowState> {
    return this.decide({ type: 'Reject', data: request });
  }

  /** By the target's owner: the follower goes, or its request does, or the history it kept of the feed. */
  async removeFollower(request: FollowRequest): Promise<FollowState> {
    if (await this.keepsHistory(request.follower, request.target)) return this.decide({ type: 'EndKeptHistory', data: request });
    return this.decide({ type: 'RemoveFollower', data: request });
  }

  private async keepsHistory(follower: FeedId, target: FeedId): Promise<boolean> {
    return (await this.store.boundsOf(follower)).some((bound) => bound.feed === target && bound.unfollowedAt !== undefined);
  }

  /**
   * Once the projection has caught up: a feed that turned private ends the histories kept of
   * it one event after another ({@link endKeptHistories}), and a stop between them leaves
   * readers keeping the history of a feed that is closed to them, which nothing else would
   * end. Such histories are ended here. A failure is logged and leaves the start alone.
   */
  override async onApplicationBootstrap(): Promise<void> {
    await super.onApplicationBootstrap();
    try {
      await this.endKeptHistoriesOfClosedFeeds();
    } catch (error) {
      this.logger.error(`could not end the histories kept of private feeds: ${String(error)}`);
    }
  }

  private async endKeptHistoriesOfClosedFeeds(): Promise<void> {
    for (const { follower, target } of await this.store.keptEdges()) {
      if (!(await this.closedTo(follower, target))) continue;
      await this.decide({ type: 'EndKeptHistory', data: { follower, target, time: new Date().toISOString() } });
      this.logger.warn(`ended ${follower}'s kept history of ${target}, private since a stop interrupted its change of settings`);
    }
  }

  /** Ends every history kept of a feed that turned private: only its approved followers may see it now. */
  private async endKeptHistories(feed: FeedId, time: string): Promise<void> {
    for (const follower of await this.store.keptBy(feed)) {
      if (!(await this.store.isPrivate(feed))) return;
      await this.decide({ type: 'EndKeptHistory', data: { follower, target: feed, time } });
    }
  }

  async settings(feed: FeedId): Promise<FeedSettings> {
    return { private: await this.store.isPrivate(feed) };
  }

  /**
   * A feed that turns private keeps its followers, and new follows wait for approval, and the
   * histories readers kept of it when they unfollowed end (each a plain unfollow); one
   * that turns public approves the follows waiting (as Mastodon does when an account is
   * unlocked). Each approval is an event of its own: should the process stop between them,
   * a request left waiting becomes a follow when its follower follows again.
   */
  async putSettings(request: PutSettingsRequest): Promise<FeedSettings> {
    const settings = await this.perFeedSettings.run(request.feed, () =>
      this.writer.decideWithRetry(async () => {
        for (const event of decideFeedSettings(request, await this.store.isPrivate(request.feed))) await this.writer.append(streamOf(event), event);
        return { private: request.private };
      }),
    );
    if (!request.private) await this.approveWaiting(request.feed, request.time);
    else await this.endKeptHistories(request.feed, request.time);
    return settings;
  }

  /**
   * Approves the follows waiting when a feed turned public: those listed now, not one asked
   * later, and none once the feed is private again. A request withdrawn meanwhile is passed over.
   */
  private async approveWaiting(feed: FeedId, time: string): Promise<void> {
    const waiting: FeedId[] = [];
    for (let page = await this.store.requests(feed, undefined, 1_000); page.length > 0; page = await this.store.requests(feed, page[page.length - 1], 1_000)) waiting.push(...page);
    for (const follower of waiting) {
      if (await this.store.isPrivate(feed)) return;
      await this.decide({ type: 'Approve', data: { follower, target: feed, time } }).catch((error: unknown) => {
        if (!(error instanceof FeedmillError && error.code === 'not_found')) throw error;
      });
    }
  }

  /**
   * Whether `feed` is public, or one of `readers` follows it (approved). With `current`, as of
   * the log's head: a feed that turned private a moment ago, through another replica, is
   * private here too (a stream's recheck asks so; every read would pay a look at the head).
   */
  async mayRead(feed: FeedId, readers: readonly FeedId[], current = false): Promise<boolean> {
    if (current) await this.store.reach(await this.log.headPosition());
    if (!(await this.store.isPrivate(feed))) return true;
    // A follower removed a moment ago, through another replica, must not read on here.
    if (!current) await this.store.reach(await this.log.headPosition());
    for (const reader of readers) if ((await this.store.edgeState(reader, feed)) === 'following') return true;
    return false;
  }

  async requests(request: EdgePageRequest): Promise<EdgePage> {
    await this.store.reach(request.atLeast);
    return toPage(await this.store.requests(request.feed, request.after, request.limit + 1), request.limit);
  }

  private decide(command: FollowEdgeCommand): Promise<FollowState> {
    const { follower, target } = command.data;
    return this.perFollower.run(follower, () =>
      this.writer.decideWithRetry(async () => {
        let position = 0;
        for (const event of decideFollowEdge(command, await this.store.edgeState(follower, target))) position = await this.writer.append(streamOf(event), event);
        return { state: await this.store.edgeState(follower, target), position };
      }),
    );
  }

  async followers(request: EdgePageRequest): Promise<EdgePage> {
    await this.store.reach(request.atLeast);
    return toPage(await this.store.followers(request.feed, request.after, request.limit + 1), request.limit);
  }

  async following(request: EdgePageRequest): Promise<EdgePage> {
    await this.store.reach(request.atLeast);
    return toPage(await this.store.following(request.feed, request.after, request.limit + 1), request.limit);
  }

  /** The follower's bounded and kept edges, as of at least `atLeast`: what a pull of its timeline reads within. */
  async edgeBounds(request: { feed: FeedId; atLeast?: number }): Promise<EdgeBoundsReply> {
    await this.store.reach(request.atLeast);
    return { bounds: await this.store.boundsOf(request.feed) };
  }

  async counts(feed: FeedId, atLeast?: number): Promise<FollowCounts> {
    await this.store.reach(atLeast);
    return this.store.counts(feed);
  }
}

function toPage(items: FeedId[], limit: number): EdgePage {
  if (items.length <= limit) return { items, next: null };
  items.length = limit;
  return { items, next: items[items.length - 1]! };
}

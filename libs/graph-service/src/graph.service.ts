import { Inject, Injectable } from '@nestjs/common';
import { FeedmillError, type EdgePage, type EdgePageRequest, type FeedId, type FollowCounts, type FollowManyRequest, type FollowRequest } from '@feedmill/contracts';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { decideFollowEdge, decideFollowMany, streamOf, type FollowEdgeCommand } from '@feedmill/feed-models';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { ProjectedService, SerialQueues } from '@feedmill/runtime';
import { GRAPH_STORE, type GraphStore } from '@feedmill/stores';

/** Follow edges: decides and appends follows and unfollows, answers edge queries. */
@Injectable()
export class GraphService extends ProjectedService {
  /** Commands of one follower run one after another, on the state the last one left. */
  private readonly perFollower = new SerialQueues();

  constructor(
    @Inject(EVENT_LOG) log: EventLog,
    @Inject(GRAPH_STORE) private readonly store: GraphStore,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
  ) {
    super(log, store);
  }

  async follow(request: FollowRequest): Promise<void> {
    if (!this.groups.isTimeline(request.follower)) {
      throw new FeedmillError('group_cannot_follow', `${request.follower} is not a timeline feed; only timeline feeds follow`, 'group');
    }
    return this.decide({ type: 'Follow', data: request });
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
      const follower = request.follows[index]![0];
      if (!this.groups.isTimeline(follower)) {
        throw new FeedmillError('group_cannot_follow', `follows[${index}].source: ${follower} is not a timeline feed; only timeline feeds follow`, `follows[${index}].source`);
      }
    }
    await this.writer.decideWithRetry(async () => {
      const following = await this.store.followingEach(request.follows);
      const events = decideFollowMany({ type: 'FollowMany', data: request }, following);
      for (const event of events) await this.writer.append(streamOf(event), event);
    });
    return request.follows.length;
  }

  unfollow(request: FollowRequest): Promise<void> {
    return this.decide({ type: 'Unfollow', data: request });
  }

  private decide(command: FollowEdgeCommand): Promise<void> {
    const { follower, target } = command.data;
    return this.perFollower.run(follower, () =>
      this.writer.decideWithRetry(async () => {
        for (const event of decideFollowEdge(command, await this.store.isFollowing(follower, target))) await this.writer.append(streamOf(event), event);
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

  counts(feed: FeedId): Promise<FollowCounts> {
    return this.store.counts(feed);
  }
}

function toPage(items: FeedId[], limit: number): EdgePage {
  if (items.length <= limit) return { items, next: null };
  items.length = limit;
  return { items, next: items[items.length - 1]! };
}

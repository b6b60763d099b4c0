import { Inject, Injectable } from '@nestjs/common';
import { FeedmillError, type EdgePage, type EdgePageRequest, type FeedId, type FollowCounts, type FollowRequest } from '@feedmill/contracts';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { decideFollowEdge, streamOf, type FollowEdgeCommand } from '@feedmill/feed-models';
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

import { Inject, Injectable } from '@nestjs/common';
import { FeedmillError, subjects, type FeedId } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { owns, requireOwner, type Caller } from './caller.js';

/** Who may read a feed and its follow lists, which needs graph for a private feed. */
@Injectable()
export class FeedAccess {
  constructor(
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
  ) {}

  /**
   * Throws `forbidden` unless the caller may read `feed`: a timeline only its owner; a
   * producer feed its owner, anyone while it is public, and, while it is private, a user one
   * of whose timelines is its approved follower. Only a read by another user of a producer
   * feed asks graph.
   */
  async requireReader(caller: Caller, feed: FeedId): Promise<void> {
    if (this.groups.isTimeline(feed)) return requireOwner(caller, feed, 'read');
    if (await this.mayRead(caller, feed)) return;
    throw new FeedmillError('forbidden', `${feed} is private: only its owner and its approved followers may read it`, 'id');
  }

  /**
   * Whether the caller may read `feed`, by the rules of {@link requireReader}: without a
   * refusal, for a read that leaves out what the caller may not see (a slice). With `current`,
   * as of the log's head (see the graph's `mayRead`).
   */
  async mayRead(caller: Caller, feed: FeedId, current = false): Promise<boolean> {
    if (owns(caller, feed)) return true;
    if (this.groups.isTimeline(feed)) return false;
    const readers = caller.sub === undefined ? [] : this.groups.timelinesOf(caller.sub);
    return (await this.client.request(subjects.graph.mayRead, { feed, readers, ...(current && { current }) })).allowed;
  }
}

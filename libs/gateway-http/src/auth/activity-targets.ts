import { Inject, Injectable } from '@nestjs/common';
import { feedOwner, FeedmillError, subjects, type FeedId } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { describeCaller, owns, type Caller } from './caller.js';

/**
 * The feeds an activity posted to `feed` may be addressed to (`to`), checked before anything
 * is recorded: each must be a timeline feed; one that another user owns, of a group that
 * accepts targets (a notification feed), unless the caller is a trusted backend. A target
 * whose owner may not read `feed` (private, and none of the owner's timelines an approved
 * follower) is left out, silently: its owner must not even learn that the activity exists.
 */
@Injectable()
export class ActivityTargets {
  constructor(
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
  ) {}

  /** The targets that get the activity; throws `invalid_request` or `forbidden` naming the first bad one. */
  async allowed(caller: Caller, feed: FeedId, targets: readonly FeedId[]): Promise<FeedId[]> {
    targets.forEach((target, index) => this.requireAddressable(caller, target, `body.to[${index}]`));
    const author = feedOwner(feed);
    const others = targets.filter((target) => feedOwner(target) !== author);
    if (others.length === 0 || !(await this.client.request(subjects.graph.settings, { feed })).private) return [...targets];
    const refused = new Set<string>();
    await Promise.all(
      [...new Set(others.map(feedOwner))].map(async (owner) => {
        const readers = this.groups.timelinesOf(owner);
        if (!(await this.client.request(subjects.graph.mayRead, { feed, readers })).allowed) refused.add(owner);
      }),
    );
    return targets.filter((target) => !refused.has(feedOwner(target)));
  }

  private requireAddressable(caller: Caller, target: FeedId, field: string): void {
    if (!this.groups.isTimeline(target)) {
      throw new FeedmillError('invalid_request', `${field}: ${target} is not a feed of a configured timeline group; activities are addressed to timelines, such as notification feeds`, field);
    }
    if (owns(caller, target) || this.groups.acceptsTargets(target)) return;
    throw new FeedmillError('forbidden', `${describeCaller(caller)} may not address ${target} (${field}): it belongs to another user, and its group does not accept activities addressed to it (acceptsTargets)`, field);
  }
}

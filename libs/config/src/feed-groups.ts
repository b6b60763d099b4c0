import { FeedmillError, type FeedConfig, type FeedId } from '@feedmill/contracts';
import type { TimelinePolicy } from '@feedmill/stores';

/** What a feed of no timeline group stores: nothing. */
const NO_TIMELINE: TimelinePolicy = Object.freeze({ model: 'pull', cap: 0, inactivityMs: 0 });

/** Answers questions about feed groups from the config. */
export class FeedGroups {
  /**
   * Each timeline group's `group:` and policy. Fan-out and imports ask {@link isTimeline} and
   * {@link timelinePolicyOf} several times per follow: a prefix test slices no string and
   * looks up no key, and the policy is made once.
   */
  private readonly timelineGroups: ReadonlyArray<{ prefix: string; policy: TimelinePolicy }>;

  constructor(readonly config: FeedConfig) {
    this.timelineGroups = Object.entries(config.groups).flatMap(([group, groupConfig]) =>
      groupConfig.kind === 'timeline'
        ? [
            {
              prefix: `${group}:`,
              policy: Object.freeze({
                model: groupConfig.model,
                cap: groupConfig.cap,
                inactivityMs: groupConfig.inactivityMinutes * 60_000,
                bucketMs: groupConfig.bucketMinutes * 60_000,
                bucketSize: groupConfig.bucketSize,
                embed: groupConfig.embed,
                relevancy: groupConfig.relevancy,
              }),
            },
          ]
        : [],
    );
  }

  /** Throws `unknown_group` (404) for a group the config does not declare. */
  kindOf(group: string): 'producer' | 'timeline' {
    const config = this.config.groups[group];
    if (!config) throw new FeedmillError('unknown_group', `feed group "${group}" is not configured`, 'group');
    return config.kind;
  }

  isTimeline(feed: FeedId): boolean {
    return this.timelinePolicyOf(feed) !== NO_TIMELINE;
  }

  capOf(feed: FeedId): number {
    return this.timelinePolicyOf(feed).cap;
  }

  /** How a reader's timeline is stored (the same object for every feed of a group); a feed of no timeline group stores nothing. */
  timelinePolicyOf(feed: FeedId): TimelinePolicy {
    // A group name has no colon: `group:` starts a feed exactly when it is the feed's group.
    for (const { prefix, policy } of this.timelineGroups) if (feed.startsWith(prefix)) return policy;
    return NO_TIMELINE;
  }
}

export const FEED_GROUPS = Symbol('FeedGroups');

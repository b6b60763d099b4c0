import { FeedmillError, feedGroup, type FeedConfig, type FeedId } from '@feedmill/contracts';
import type { TimelinePolicy } from '@feedmill/stores';

/** Answers questions about feed groups from the config. */
export class FeedGroups {
  /**
   * `group:` of each timeline group. Fan-out and imports ask {@link isTimeline} several times
   * per follow: a prefix test slices no string and looks up no key.
   */
  private readonly timelinePrefixes: string[];

  constructor(readonly config: FeedConfig) {
    this.timelinePrefixes = Object.entries(config.groups).flatMap(([group, { kind }]) => (kind === 'timeline' ? [`${group}:`] : []));
  }

  /** Throws `unknown_group` (404) for a group the config does not declare. */
  kindOf(group: string): 'producer' | 'timeline' {
    const config = this.config.groups[group];
    if (!config) throw new FeedmillError('unknown_group', `feed group "${group}" is not configured`, 'group');
    return config.kind;
  }

  isTimeline(feed: FeedId): boolean {
    // A group name has no colon: `group:` starts a feed exactly when it is the feed's group.
    for (const prefix of this.timelinePrefixes) if (feed.startsWith(prefix)) return true;
    return false;
  }

  capOf(feed: FeedId): number {
    return this.timelinePolicyOf(feed).cap;
  }

  /** How a reader's timeline is stored; a feed of no timeline group stores nothing. */
  timelinePolicyOf(feed: FeedId): TimelinePolicy {
    const config = this.config.groups[feedGroup(feed)];
    if (config?.kind !== 'timeline') return { model: 'pull', cap: 0, inactivityMs: 0 };
    return {
      model: config.model,
      cap: config.cap,
      inactivityMs: config.inactivityMinutes * 60_000,
      bucketMs: config.bucketMinutes * 60_000,
      bucketSize: config.bucketSize,
      embed: config.embed,
      relevancy: config.relevancy,
    };
  }
}

export const FEED_GROUPS = Symbol('FeedGroups');

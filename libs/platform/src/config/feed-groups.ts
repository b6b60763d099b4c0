import { FeedmillError, feedGroup, type FeedConfig, type FeedId } from '@feedmill/contracts';

/** Answers questions about feed groups from the config. */
export class FeedGroups {
  constructor(readonly config: FeedConfig) {}

  /** Throws `unknown_group` (404) for a group the config does not declare. */
  kindOf(group: string): 'producer' | 'timeline' {
    const config = this.config.groups[group];
    if (!config) throw new FeedmillError('unknown_group', `feed group "${group}" is not configured`, 'group');
    return config.kind;
  }

  isTimeline(feed: FeedId): boolean {
    return this.config.groups[feedGroup(feed)]?.kind === 'timeline';
  }

  capOf(feed: FeedId): number {
    const config = this.config.groups[feedGroup(feed)];
    return config?.kind === 'timeline' ? config.cap : 0;
  }
}

export const FEED_GROUPS = Symbol('FeedGroups');

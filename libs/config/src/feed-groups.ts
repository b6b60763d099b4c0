import { FeedmillError, feedGroup, type FeedConfig, type FeedId } from '@feedmill/contracts';
import type { TimelinePolicy } from '@feedmill/stores';

/** Answers questions about feed groups from the config. */
export class FeedGroups {
  /**
   * The groups' settings as one text, the same for the same settings in any order: what a
   * snapshot of state the config shapes (timelines, fan-out's followers) is taken under.
   */
  readonly fingerprint: string;

  constructor(readonly config: FeedConfig) {
    this.fingerprint = JSON.stringify(Object.entries(config.groups).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

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

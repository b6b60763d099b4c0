import { DEFAULT_NOTIFICATION_RULE, FeedmillError, type AggregateRule, type FeedConfig, type FeedId, type TimelineModel } from '@feedmill/contracts';
import type { TimelinePolicy } from '@feedmill/stores';

/** What a feed of no timeline group stores: nothing. */
const NO_TIMELINE: TimelinePolicy = Object.freeze({ model: 'pull', cap: 0, inactivityMs: 0 });

/** Answers questions about feed groups from the config. */
export class FeedGroups {
  /**
   * The groups' settings as one text, the same for the same settings in any order: what a
   * snapshot of state the config shapes (timelines, fan-out's followers) is taken under.
   */
  readonly fingerprint: string;

  /**
   * Each group's `group:`, kind and timeline policy. Imports and fan-out ask about a feed's
   * group several times per follow: a prefix test slices no string and looks up no key, and
   * the policy is made once.
   */
  private readonly byPrefix: ReadonlyArray<{ prefix: string; kind: 'producer' | 'timeline'; policy: TimelinePolicy }>;
  private readonly timelineGroups: readonly string[];

  constructor(readonly config: FeedConfig) {
    this.fingerprint = JSON.stringify(Object.entries(config.groups).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    this.byPrefix = Object.entries(config.groups).map(([group, groupConfig]) => ({
      prefix: `${group}:`,
      kind: groupConfig.kind,
      policy:
        groupConfig.kind === 'timeline'
          ? Object.freeze({
              model: groupConfig.model,
              cap: groupConfig.cap,
              inactivityMs: groupConfig.inactivityMinutes * 60_000,
              bucketMs: groupConfig.bucketMinutes * 60_000,
              bucketSize: groupConfig.bucketSize,
              embed: groupConfig.embed,
              relevancy: groupConfig.relevancy,
              ...(groupConfig.model === 'hybrid' && {
                hybrid: Object.freeze({ readsPerPost: groupConfig.readsPerPost, windowMs: groupConfig.rateWindowMinutes * 60_000, hysteresis: groupConfig.hysteresis }),
              }),
            })
          : NO_TIMELINE,
    }));
    this.timelineGroups = Object.keys(this.timelineModels);
  }

  /** The timeline feeds a user owns, one per timeline group: those whose follows let it read a private feed. */
  timelinesOf(owner: string): FeedId[] {
    return this.timelineGroups.map((group): FeedId => `${group}:${owner}`);
  }

  /** Whether another user than a timeline feed's owner may address activities to it (`acceptsTargets`). */
  acceptsTargets(feed: FeedId): boolean {
    const config = this.configOf(feed.slice(0, feed.indexOf(':')));
    return config?.kind === 'timeline' && config.acceptsTargets;
  }

  /** How a feed's group groups its reads; undefined for a feed whose reads return activities. */
  aggregateRuleOf(feed: FeedId): AggregateRule | undefined {
    const config = this.configOf(feed.slice(0, feed.indexOf(':')));
    if (config?.kind !== 'timeline') return undefined;
    return config.aggregate ?? (config.notifications ? DEFAULT_NOTIFICATION_RULE : undefined);
  }

  /** Whether a feed is a notification feed, which keeps what its reader has seen and read. */
  isNotificationFeed(feed: FeedId): boolean {
    const config = this.configOf(feed.slice(0, feed.indexOf(':')));
    return config?.kind === 'timeline' && config.notifications;
  }

  /** The timeline groups that keep seen and read marks: a store that keeps none refuses them at start. */
  get notificationGroups(): string[] {
    return Object.entries(this.config.groups).flatMap(([group, config]) => (config.kind === 'timeline' && config.notifications ? [group] : []));
  }

  /** Each timeline group's storage model. */
  get timelineModels(): Record<string, TimelineModel> {
    const models: Record<string, TimelineModel> = {};
    for (const [group, config] of Object.entries(this.config.groups)) if (config.kind === 'timeline') models[group] = config.model;
    return models;
  }

  /** Throws `unknown_group` (404) for a group the config does not declare, naming `field`. */
  kindOf(group: string, field = 'group'): 'producer' | 'timeline' {
    const config = this.configOf(group);
    if (!config) throw new FeedmillError('unknown_group', `feed group "${group}" is not configured`, field);
    return config.kind;
  }

  /** The kind of a feed's group; undefined for a group the config does not declare. */
  kindOfFeed(feed: FeedId): 'producer' | 'timeline' | undefined {
    return this.groupOf(feed)?.kind;
  }

  isTimeline(feed: FeedId): boolean {
    return this.groupOf(feed)?.kind === 'timeline';
  }

  capOf(feed: FeedId): number {
    return this.timelinePolicyOf(feed).cap;
  }

  /** How a reader's timeline is stored (the same object for every feed of a group); a feed of no timeline group stores nothing. */
  timelinePolicyOf(feed: FeedId): TimelinePolicy {
    return this.groupOf(feed)?.policy ?? NO_TIMELINE;
  }

  /** A group's config; none for a name the config does not declare (nor for `constructor` and the like, which every object inherits). */
  private configOf(group: string) {
    return Object.hasOwn(this.config.groups, group) ? this.config.groups[group] : undefined;
  }

  private groupOf(feed: FeedId): { kind: 'producer' | 'timeline'; policy: TimelinePolicy } | undefined {
    // A group name has no colon: `group:` starts a feed exactly when it is the feed's group.
    for (const group of this.byPrefix) if (feed.startsWith(group.prefix)) return group;
    return undefined;
  }
}

export const FEED_GROUPS = Symbol('FeedGroups');

import { relevanceKeyOf, sortKeyOf, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import type { TimelineOrder } from '../activity-table.js';

/** When a `hybrid` timeline's edge is pushed, and how fast the rates it compares forget. */
export interface HybridPolicy {
  /** An edge is pushed while its reader reads at least this many times per post of its producer. */
  readsPerPost: number;
  /** The time constant of both rates: a count decays by e every this many milliseconds. */
  windowMs: number;
  /** How far past the threshold the ratio must move before an edge changes side (at least 1). */
  hysteresis: number;
}

/**
 * A rate as a count of events decayed exponentially with time: each event adds one, and the
 * sum decays by e every `windowMs`, so it reads as events per window. Reads and posts are
 * counted on the same window, so their counts compare as their rates do.
 */
export class DecayedCount {
  private count = 0;
  private at = -Infinity;

  /** The count as of `atMs` (no decay for a time before the last event: clocks may disagree). */
  valueAt(atMs: number, windowMs: number): number {
    if (this.count === 0) return 0;
    return atMs > this.at ? this.count * Math.exp((this.at - atMs) / windowMs) : this.count;
  }

  /** Counts one event at `atMs`; returns the count with it. */
  add(atMs: number, windowMs: number): number {
    this.count = this.valueAt(atMs, windowMs) + 1;
    if (atMs > this.at) this.at = atMs;
    return this.count;
  }

  /** For snapshots. */
  get state(): { count: number; at: number } {
    return { count: this.count, at: this.at };
  }

  /** Takes the state a snapshot kept ({@link state}). */
  set(count: number, at: number): void {
    this.count = count;
    this.at = at;
  }
}

/**
 * Whether an edge should be pushed, from its reader's and its producer's decayed counts
 * (Silberstein et al., "Feeding Frenzy", SIGMOD 2010: push when the reader reads more often
 * than the producer posts, weighed by what a write and a query cost). An edge already on a
 * side keeps it until the ratio has moved past the threshold by the policy's hysteresis;
 * a new edge (`pushedNow` undefined) takes the side the ratio gives.
 */
export function shouldPush(reads: number, posts: number, pushedNow: boolean | undefined, policy: HybridPolicy): boolean {
  const needed = posts * policy.readsPerPost;
  if (pushedNow === undefined) return reads >= needed;
  return pushedNow ? reads * policy.hysteresis >= needed : reads >= needed * policy.hysteresis;
}

/** Marks an edge whose every activity is read from the producer's feed. */
export const PULLED_WHOLE = null;

/**
 * The edges of one `hybrid` reader that are not simply pushed, by producer feed:
 * - {@link PULLED_WHOLE}: pulled; the stored timeline holds none of the feed's activities.
 * - a sort key: pushed since an activity with this key; the feed's activities below it are
 *   pulled (they predate the switch and were never written), those at or above it stored.
 * An edge missing here is pushed: its activities are stored above the timeline's floor and
 * pulled below it, as in a `ring` timeline. A switch to push writes nothing of the past, so
 * that a reader whose reads pick up costs nothing until its producers post.
 */
export type PulledEdges = Map<FeedId, SortKey | typeof PULLED_WHOLE>;

/** What a `hybrid` store knows of one producer's posts. */
interface ProducerRecord {
  count: DecayedCount;
  /** The last post counted: deliveries of one post follow one another. */
  lastId: string;
  /** The greatest keys of its activities delivered, by time and by relevance. */
  newestByTime: SortKey;
  newestByRelevance: SortKey;
}

/**
 * Producers' posts as `hybrid` timelines weigh them, on one rate window: a decayed count of
 * posts, counted once however many deliveries carry a post (fan-out splits a large feed's
 * readers into several, one after the other), and the greatest key delivered, which is
 * where a pulled edge switched to push starts storing: every activity of the feed below it
 * stays pulled, even one posted with an older time than the post that switched it.
 */
export class ProducerPosts {
  private readonly byFeed = new Map<FeedId, ProducerRecord>();

  constructor(readonly windowMs: number) {}

  /** Counts a post at `atMs` unless it was the last counted; returns its producer's count. */
  count(activity: Activity, atMs: number): number {
    const record = this.recordOf(activity.feed);
    this.raise(record, activity);
    if (record.lastId === activity.id) return record.count.valueAt(atMs, this.windowMs);
    record.lastId = activity.id;
    return record.count.add(atMs, this.windowMs);
  }

  /**
   * Takes in an activity without counting a post: a bump (its relevance rose), or one that a
   * follow found in the feed (posted before the reader followed).
   */
  saw(activity: Activity): void {
    this.raise(this.recordOf(activity.feed), activity);
  }

  valueAt(feed: FeedId, atMs: number): number {
    return this.byFeed.get(feed)?.count.valueAt(atMs, this.windowMs) ?? 0;
  }

  /** The greatest key of the feed's activities delivered, in `order` ('' when none). */
  newestKey(feed: FeedId, order: TimelineOrder): SortKey {
    const record = this.byFeed.get(feed);
    if (!record) return '';
    return order === 'relevance' ? record.newestByRelevance : record.newestByTime;
  }

  private recordOf(feed: FeedId): ProducerRecord {
    let record = this.byFeed.get(feed);
    if (!record) this.byFeed.set(feed, (record = { count: new DecayedCount(), lastId: '', newestByTime: '', newestByRelevance: '' }));
    return record;
  }

  private raise(record: ProducerRecord, activity: Activity): void {
    const byTime = sortKeyOf(activity);
    if (byTime > record.newestByTime) record.newestByTime = byTime;
    const byRelevance = relevanceKeyOf(activity);
    if (byRelevance > record.newestByRelevance) record.newestByRelevance = byRelevance;
  }

  /** Forgets a feed's record (it was erased). */
  forget(feed: FeedId): void {
    this.byFeed.delete(feed);
  }

  /** For snapshots: every producer's record. */
  *entries(): IterableIterator<{ feed: FeedId; count: number; at: number; lastId: string; newestByTime: SortKey; newestByRelevance: SortKey }> {
    for (const [feed, { count, lastId, newestByTime, newestByRelevance }] of this.byFeed) yield { feed, ...count.state, lastId, newestByTime, newestByRelevance };
  }

  restore(feed: FeedId, count: number, at: number, lastId: string, newestByTime: SortKey, newestByRelevance: SortKey): void {
    const restored = new DecayedCount();
    restored.set(count, at);
    this.byFeed.set(feed, { count: restored, lastId, newestByTime, newestByRelevance });
  }
}

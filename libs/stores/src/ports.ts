import type { Activity, EdgeBound, DeliverReply, DeliverRequest, FeedId, FeedLogEvent, SortKey, TimelineModel } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { EdgeState, HiddenActivities, HybridPolicy, NotificationMarks, PullPath, TimelinePage } from '@feedmill/feed-models';

/**
 * A projection fed from the log. `apply` takes events in log order and records the last
 * position; `applyOwn` takes an event its service just appended, so the writer reads its
 * own write at once, with the event as decided (typed, in today's shape: it is not decoded
 * from the record again). Both skip events already applied.
 */
export interface Projection {
  readonly name: string;
  position(): Promise<number>;
  apply(events: readonly RecordedEvent[]): Promise<void>;
  applyOwn(event: RecordedEvent, decided: FeedLogEvent): Promise<void>;
  /** Resolves once the projection has applied `position` (rejects after a timeout). */
  reach(position: number | undefined): Promise<void>;
}

export interface ContentStore extends Projection {
  /** Revision of an event stream as applied here (-1 when none). */
  streamRevision(stream: string): Promise<number>;
  get(ids: readonly string[]): Promise<Activity[]>;
  /** The log position each activity was added at, in the order asked; null for one not held. */
  positionsOf(ids: readonly string[]): Promise<Array<number | null>>;
  byForeignId(feed: FeedId, foreignId: string): Promise<Activity | undefined>;
  /**
   * Newest first (by time, or by relevance), keys strictly below `before`, added at or
   * before log position `atMost` when given. A feed with a bound among `bounds` gives only
   * the activities the bound lets in (`isWithinBound`); what is addressed to a feed is not
   * bounded.
   */
  recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number, order?: 'time' | 'relevance', bounds?: readonly EdgeBound[]): Promise<Activity[]>;
  /**
   * A slice: the activities that refer to `ref` (among their `refs`), whatever their feed,
   * newest first by time key, keys strictly below `before`.
   */
  slice(ref: string, before: SortKey | undefined, limit: number): Promise<Activity[]>;
}

export interface GraphStore extends Projection {
  streamRevision(stream: string): Promise<number>;
  isFollowing(follower: FeedId, target: FeedId): Promise<boolean>;
  /** Whether each follower follows its target, in the order asked: an import's 10,000 edges in one lookup. */
  followingEach(edges: ReadonlyArray<readonly [FeedId, FeedId]>): Promise<boolean[]>;
  /** Followers of `feed` in id order, after `after`. */
  followers(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]>;
  following(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]>;
  counts(feed: FeedId): Promise<{ followers: number; following: number }>;
  /**
   * The follower's edges that bound its timeline: follows made with a `since` (with the
   * follow's position), and kept edges, feeds unfollowed with `keepHistory` (with the
   * unfollow's position). Kept edges are not followed: no list or count shows them, and a
   * follow of the feed replaces its kept edge.
   */
  boundsOf(follower: FeedId): Promise<EdgeBound[]>;
  /** The readers that keep `target`'s history (kept edges), in no particular order. */
  keptBy(target: FeedId): Promise<FeedId[]>;
  /** Every kept edge, target first then reader, in id order: few, as only unfollows that keep history make them. */
  keptEdges(): Promise<Array<{ follower: FeedId; target: FeedId }>>;
  /** Followed, asked for (a private feed's follow waiting for its owner), or neither. */
  edgeState(follower: FeedId, target: FeedId): Promise<EdgeState>;
  /** Feeds waiting for `feed`'s owner to approve their follow, in id order, after `after`. */
  requests(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]>;
  isPrivate(feed: FeedId): Promise<boolean>;
}

/** How one reader's timeline is stored: its group's model and sizes. */
export interface TimelinePolicy {
  model: TimelineModel;
  cap: number;
  /** For `cache`: how long a cache lives without a read. */
  inactivityMs: number;
  /** For `time-buckets`: the span of one bucket. @defaultValue one day */
  bucketMs?: number;
  /** For `size-buckets`: entries per bucket. @defaultValue 100 */
  bucketSize?: number;
  /** Store a copy of each activity, or only a reference to it. @defaultValue true */
  embed?: boolean;
  /** Order by relevance (bumps raise an activity) instead of time. @defaultValue false */
  relevancy?: boolean;
  /** For `hybrid`: when an edge is pushed, and how fast rates forget. */
  hybrid?: HybridPolicy;
}

export interface TimelineStore {
  /** The end of the last batch applied: fan-out's next batch must start here. */
  position(): Promise<number>;
  /**
   * A log position that covers every delivery applied here or being applied now: a pull as
   * of at least it misses nothing those deliveries brought.
   */
  pullPosition(): Promise<number>;
  /**
   * Applies the request's deliveries if the store stands at `after`, and moves it to
   * `position`; else applies nothing and answers where it stands. A request with `position`
   * equal to `after` (a job, or one reader's part of a request that failed) leaves the
   * position where it is. Every delivery is idempotent: applied again, it changes nothing.
   */
  deliver(request: DeliverRequest): Promise<DeliverReply>;
  readPage(reader: FeedId, before: SortKey | undefined, limit: number, pull: PullPath): Promise<TimelinePage>;
  /** What a notification feed's reader has marked seen and read; undefined when nothing. */
  notificationMarks(reader: FeedId): Promise<NotificationMarks | undefined>;
  /**
   * Whether this store keeps what readers hide (`hide` and `show` deliveries). One that does
   * not leaves them unapplied, and the timeline service refuses to hide on it.
   */
  readonly keepsHidden: boolean;
  /** The activities a reader hid from its timeline; undefined when none (so that a read of a reader who hid nothing checks nothing). */
  hiddenOf(reader: FeedId): Promise<HiddenActivities | undefined>;
  /** Number of entries the reader's materialized timeline holds (0 when none). */
  size(reader: FeedId): Promise<number>;
  /**
   * Totals since start: readers with a materialized timeline, entries held, entries
   * delivered by fan-out's inserts, and entries written by any means (inserts, follows'
   * backfills, cache builds).
   */
  counters(): Promise<TimelineCounters>;
}

export type TimelineCounters = {
  timelines: number;
  entries: number;
  delivered: number;
  entriesWritten: number;
};

export const CONTENT_STORE = Symbol('ContentStore');
export const GRAPH_STORE = Symbol('GraphStore');
export const TIMELINE_STORE = Symbol('TimelineStore');

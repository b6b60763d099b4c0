import { isAddressedTo, justAbove, keyOfOrder, relevanceKeyOf, sortKeyOf, type Activity, type KeyOf, type DeliverReply, type DeliverRequest, type FeedId, type SortKey, type TimelineDelivery } from '@feedmill/contracts';
import {
  ActivityTable,
  CompactTimeline,
  DecayedCount,
  EntryCount,
  HiddenActivities,
  NotificationMarks,
  NO_HANDLE,
  ProducerPosts,
  PULLED_WHOLE,
  readHybridPage,
  readTimelinePage,
  shouldPush,
  type ActivityHandle,
  type HybridPolicy,
  type PulledEdges,
  type PullPath,
  type TimelinePage,
} from '@feedmill/feed-models';
import type { TimelineCounters, TimelinePolicy, TimelineStore } from '../ports.js';
import { SnapshotMismatchError } from '../snapshots/snapshot-file.js';
import { allSteps, WritesHeld, type SnapshotState, type SnapshotSteps, type Snapshottable } from '../snapshots/snapshottable.js';
import { EntriesByTimeline } from './entries-by-timeline.js';
import { readTimelineSnapshot, timelineSnapshotSteps } from './memory-timeline-snapshot.js';

/** A reader's timeline as this store keeps it: its entries, and what a `cache` build needs (one object per reader). */
class Materialized extends CompactTimeline {
  /** For the `cache` model: the build in progress. */
  building: Promise<void> | undefined = undefined;
  /**
   * Changes delivered while a build pulls, applied once the pulled entries are in: the pull
   * may have read the feeds before them, and must not undo a removal or an unfollow.
   */
  held: Array<(timeline: Materialized) => void> | undefined = undefined;
  /** For the `hybrid` model: when an edge is pushed, the edges that are not, and the reader's reads. */
  readonly hybrid: HybridPolicy | undefined;
  readonly pulledEdges: PulledEdges | undefined;
  readonly reads: DecayedCount | undefined;
  /** The run of inserts that last numbered this timeline, and its number there ({@link EntriesByTimeline}). */
  runNumber = 0;
  slotInRun = 0;

  constructor(
    readonly reader: FeedId,
    policy: TimelinePolicy,
    activities: ActivityTable,
    /** Whether the reader's group stores references instead of copies. */
    readonly links: boolean,
    /** For the `cache` model: when the reader last read. */
    public lastReadAt: number,
    /** The store's running count of entries, which this timeline keeps up to date. */
    count: EntryCount,
  ) {
    super(policy.cap, activities, policy.relevancy ? 'relevance' : 'time', count);
    if (policy.model === 'hybrid') {
      this.hybrid = policy.hybrid ?? DEFAULT_HYBRID;
      this.pulledEdges = new Map();
      this.reads = new DecayedCount();
    }
  }
}

/** A list of readers' timelines as looked up while the store had made `changes` to its set of timelines. */
interface ResolvedReaders {
  changes: number;
  timelines: ReadonlyArray<Materialized | undefined>;
}

const DEFAULT_HYBRID: HybridPolicy = Object.freeze({ readsPerPost: 1, windowMs: 3_600_000, hysteresis: 2 });

/**
 * Entries a run of consecutive inserts in one request must reach to be applied reader by
 * reader: below it, few readers get more than one entry of the run, and grouping costs more
 * than it saves. A catch-up's requests carry thousands of posts.
 */
const BY_READER_MIN_ENTRIES = 8_192;

/** How often idle `cache` timelines are looked for. */
const SWEEP_INTERVAL_MS = 10_000;

/**
 * Readers' timelines in memory, each stored as its group's model says:
 * - `ring`: a capped cache from the reader's first follow on, kept by fan-out.
 * - `cache`: a capped cache built from the pull path at the reader's first read, kept by
 *   fan-out while it exists, dropped after a period without reads.
 * - `pull`: nothing; every read comes from the pull path.
 * - `time-buckets`, `size-buckets`: as `ring` (their difference is in MongoDB's documents).
 *
 * Each activity version is stored once, in one {@link ActivityTable} for all readers, and a
 * reader's timeline is a {@link CompactTimeline} of integer handles into it: a delivery to a
 * reader is an integer write. Reads return the table's objects, the same for every reader.
 *
 * Deliveries come from fan-out in log order; the store keeps the position they cover,
 * refuses a batch that does not start where it stands (after a restart it stands at 0, and
 * fan-out replays), and so applies each batch exactly once. A delivery of a version a
 * reader does not hold yet (a bump, an update, or an activity delivered again with new
 * content) replaces the one it holds.
 */
export class MemoryTimelineStore implements TimelineStore, Snapshottable {
  // Not readonly: a snapshot restore replaces them whole.
  private timelines = new Map<FeedId, Materialized>();
  /** Entries in `timelines`, kept by each as it changes, so that `counters()` walks none of them (see {@link EntryCount}). */
  private entryCount = new EntryCount();
  private activities = new ActivityTable();
  private applied = 0;
  /** Held while a snapshot is taken in steps: deliveries wait. */
  private readonly writes = new WritesHeld();
  /** Log positions the applied batches moved the store by, since start. */
  private advanced = 0;
  /** Entries newly written by insert deliveries: fan-out's output, counted for throughput. */
  private delivered = 0;
  /** Entries newly written by any means: deliveries, follows' backfills, cache builds. */
  private written = 0;
  /** For `hybrid` timelines: producers' post counts, one set per rate window. */
  private producerPosts = new Map<number, ProducerPosts>();
  private lastSweep = 0;
  /** Notification feeds' seen and read marks, per reader: apart from the entries, which a cache may drop. */
  private marks = new Map<FeedId, NotificationMarks>();
  /** What readers hid from their timelines, per reader; a reader who hid nothing (or showed all again) has no entry. */
  private hidden = new Map<FeedId, HiddenActivities>();
  readonly keepsHidden = true;
  /**
   * Per list of readers, the timelines it named when last looked up, while the store gained
   * or lost no timeline since (`timelinesChanged`). Fan-out hands every post of a feed the
   * same list of its followers until they change (`FollowerIndex.followersOf`), so a post
   * looks its readers up once per list rather than one by one in a map of every timeline.
   */
  private resolvedReaders = new WeakMap<readonly FeedId[], ResolvedReaders>();
  /** Counts every timeline added to or dropped from `timelines`. */
  private timelinesChanged = 0;
  /** Large runs of inserts, grouped by reader (reused: it keeps its arrays). */
  private readonly byReader = new EntriesByTimeline<Materialized>();
  private runs = 0;

  /**
   * @param policyOf the model and sizes of a reader's group, from the feed config.
   * @param now the clock for inactivity. @defaultValue Date.now
   * @param policies names the feed config `policyOf` answers from: a snapshot taken under
   *   another is not restored, since the config shapes every timeline. @defaultValue ''
   * @param name names its snapshots: each timeline partition keeps its own. @defaultValue 'timeline'
   */
  constructor(
    private readonly policyOf: (reader: FeedId) => TimelinePolicy,
    private readonly now: () => number = Date.now,
    private readonly policies = '',
    readonly name = 'timeline',
  ) {}

  get appliedEvents(): number {
    return this.advanced;
  }

  /**
   * Every timeline and the activity versions they hold, as of the last batch applied. A
   * `cache` being built is left out: a read builds it again.
   */
  takeSnapshot(): SnapshotState {
    return allSteps(this.snapshotSteps());
  }

  /** Deliveries wait from the first step to the last: see {@link timelineSnapshotSteps}. */
  *snapshotSteps(): SnapshotSteps {
    this.writes.hold();
    try {
      return { position: this.applied, payload: yield* this.snapshotPayload() };
    } finally {
      this.writes.end();
    }
  }

  private snapshotPayload(): Generator<void, Uint8Array, void> {
    const kept = [...this.timelines].filter(([, timeline]) => !timeline.held);
    return timelineSnapshotSteps({
      policies: this.policies,
      delivered: this.delivered,
      written: this.written,
      table: this.activities,
      timelines: kept.map(([reader, timeline]) => ({ reader, timeline, lastReadAt: timeline.lastReadAt })),
      producerPosts: [...this.producerPosts.values()],
      marks: this.marks,
      hidden: this.hidden,
    });
  }

  restoreSnapshot(snapshot: SnapshotState): void {
    if (this.applied !== 0 || this.timelines.size > 0) throw new Error('timeline: a snapshot restores only an empty store');
    // A count of its own: a snapshot refused half-read leaves the store's as it was.
    const entryCount = new EntryCount();
    const restored = readTimelineSnapshot(snapshot.payload, this.policies, (reader, table, lastReadAt) => {
      const policy = this.policyOf(reader);
      if (!materializesOnFollow(policy) && policy.model !== 'cache') throw new SnapshotMismatchError(`${reader} has a timeline, but its group's model is ${policy.model}`);
      return new Materialized(reader, policy, table, policy.embed === false, lastReadAt, entryCount);
    });
    this.activities = restored.table;
    this.timelines = restored.timelines;
    this.timelinesChanged++;
    this.entryCount = entryCount;
    this.delivered = restored.delivered;
    this.written = restored.written;
    this.producerPosts = new Map(restored.producerPosts.map((counts) => [counts.windowMs, counts]));
    this.marks = restored.marks;
    this.hidden = restored.hidden;
    this.applied = snapshot.position;
  }

  async position(): Promise<number> {
    return this.applied;
  }

  /** A batch is applied in one turn of the event loop: none is ever half applied. */
  pullPosition(): Promise<number> {
    return this.position();
  }

  async deliver(request: DeliverRequest): Promise<DeliverReply> {
    if (this.writes.now) await this.writes.cleared();
    if (request.after !== this.applied) return { applied: false, position: this.applied };
    const { deliveries } = request;
    for (let index = 0; index < deliveries.length; ) {
      const { end, entries } = insertRunAt(deliveries, index);
      if (entries >= BY_READER_MIN_ENTRIES && this.applyInsertsByReader(deliveries, index, end)) {
        index = end;
        continue;
      }
      // Not a large run of inserts, or one that must go post by post.
      for (const last = Math.max(end, index + 1); index < last; index++) this.applyDelivery(deliveries[index]!, request.position);
    }
    this.advanced += request.position - this.applied;
    this.applied = request.position;
    this.sweepIdleCaches();
    return { applied: true, position: this.applied };
  }

  /**
   * Applies the inserts `deliveries[from..to)` reader by reader rather than post by post, to
   * the same effect: each reader's timeline takes its entries in the same order, and a
   * timeline is affected by no other reader's entries. Every activity of the run is interned
   * first and held until the run is applied, so that no handle a later reader takes is freed
   * by an earlier reader's trim. Returns false, having changed nothing, where the order
   * across readers matters: a `hybrid` reader (its edge's side is decided from counts every
   * post changes) or a `cache` being built (it holds changes back).
   */
  private applyInsertsByReader(deliveries: readonly TimelineDelivery[], from: number, to: number): boolean {
    const run = ++this.runs;
    const byReader = this.byReader;
    const delivered: DeliveredActivity[] = [];
    /** Timelines that an activity addressed to their reader started in this run: undone if the run goes post by post. */
    const started: FeedId[] = [];
    let applies = true;
    for (let index = from; index < to && applies; index++) {
      const delivery = deliveries[index] as InsertDelivery;
      const one = new DeliveredActivity(this.activities, delivery.activity);
      delivered.push(one);
      const { readers } = delivery;
      const timelines = this.timelinesOf(readers);
      for (let at = 0; at < readers.length; at++) {
        const reader = readers[at]!;
        let timeline = timelines[at];
        if (!timeline) {
          timeline = this.materializeAddressed(reader, delivery.activity);
          if (!timeline) continue;
          started.push(reader);
        }
        if (timeline.pulledEdges || timeline.held) {
          applies = false;
          break;
        }
        if (timeline.runNumber !== run) {
          timeline.runNumber = run;
          timeline.slotInRun = byReader.slot(timeline);
        }
        byReader.add(timeline.slotInRun, delivered[delivered.length - 1]!.handleFor(timeline));
      }
    }
    if (applies) byReader.forEach(this.insertCounted);
    else for (const reader of started) this.dropTimeline(reader);
    byReader.clear();
    for (const one of delivered) one.release();
    return applies;
  }

  /** Creates no closure of its own: one capturing `delivery` would cost every delivery a context. */
  private applyDelivery(delivery: TimelineDelivery, requestPosition: number): void {
    switch (delivery.kind) {
      case 'insert': {
        // One handle for all readers (two when some link), held while the readers take it.
        const delivered = new DeliveredActivity(this.activities, delivery.activity);
        const { readers } = delivery;
        const timelines = this.timelinesOf(readers);
        for (let at = 0; at < readers.length; at++) {
          const reader = readers[at]!;
          const timeline = timelines[at] ?? this.materializeAddressed(reader, delivery.activity);
          if (!timeline) continue;
          // An entry addressed to the reader is stored whatever its feed's edge, which it may not follow.
          if (timeline.pulledEdges && !isAddressedTo(delivery.activity, reader) && !this.pushesPost(timeline, delivered)) continue;
          // The hot path: a closure only while a build holds changes back.
          if (timeline.held) this.holdActivity(timeline.held, delivery.activity, this.insertCounted);
          else this.insertCounted(timeline, delivered.handleFor(timeline));
        }
        delivered.release();
        return;
      }
      case 'bump': {
        const delivered = new DeliveredActivity(this.activities, delivery.activity);
        for (const reader of delivery.readers) {
          const timeline = this.timelines.get(reader);
          if (!timeline) continue;
          if (timeline.pulledEdges && !isAddressedTo(delivery.activity, reader) && this.bumpIsPulled(timeline, delivered)) continue;
          if (timeline.held) this.holdActivity(timeline.held, delivery.activity, applyBump);
          else applyBump(timeline, delivered.handleFor(timeline));
        }
        delivered.release();
        return;
      }
      case 'update': {
        // Only where a version is held: a reader holding none (a pulled hybrid edge, an entry
        // below the floor, a cache not built) reads the activity from content, which has it.
        // A cache being built takes it once its pull is in: the pull may predate the update.
        const delivered = new DeliveredActivity(this.activities, delivery.activity);
        for (const reader of delivery.readers) {
          const timeline = this.timelines.get(reader);
          if (!timeline) continue;
          if (timeline.held) this.holdActivity(timeline.held, delivery.activity, replaceHeld);
          else replaceHeld(timeline, delivered.handleFor(timeline));
        }
        delivered.release();
        return;
      }
      case 'remove': {
        const remove = removing(delivery.id);
        for (const reader of delivery.readers) {
          const timeline = this.timelines.get(reader);
          if (timeline) this.change(timeline, remove);
        }
        return;
      }
      case 'follow': {
        const policy = this.policyOf(delivery.reader);
        // A bounded follow decides anew what of the feed the timeline shows: entries kept
        // from an earlier follow go first, and a hybrid edge starts over as a new one.
        if (delivery.since !== undefined) this.forgetFeed(delivery.reader, delivery.target);
        if (policy.model === 'hybrid') {
          this.followHybrid(this.materialize(delivery.reader, policy), delivery.target, delivery.recent, delivery.exhausted);
        } else if (materializesOnFollow(policy)) {
          this.mergeFeed(this.materialize(delivery.reader, policy), delivery.recent, delivery.exhausted);
        } else {
          // A cache knows nothing of the new feed's history: the next read builds it again.
          this.discard(delivery.reader);
        }
        return;
      }
      case 'unfollow': {
        // With its history kept, what the feed delivered stays, and a hybrid edge stays as it
        // is: its pulled part is read within the kept edge's bounds, and fan-out delivers it
        // nothing new.
        if (!delivery.keepHistory) this.forgetFeed(delivery.reader, delivery.target);
        return;
      }
      case 'mark': {
        let marks = this.marks.get(delivery.reader);
        if (!marks) this.marks.set(delivery.reader, (marks = new NotificationMarks()));
        marks.apply(delivery);
        return;
      }
      case 'hide': {
        let hidden = this.hidden.get(delivery.reader);
        if (!hidden) this.hidden.set(delivery.reader, (hidden = new HiddenActivities()));
        hidden.hide(delivery.id, delivery.time, delivery.eventPosition ?? requestPosition);
        return;
      }
      case 'show': {
        const hidden = this.hidden.get(delivery.reader);
        if (hidden?.show(delivery.id) && hidden.size === 0) this.hidden.delete(delivery.reader);
        return;
      }
      case 'erase':
        this.erase(delivery.reader);
        return;
    }
  }

  /**
   * An erased feed leaves every timeline (the entries addressed to their readers too, and
   * hybrid edges' state), and its own timeline, marks and hidings go. A walk over every
   * timeline: erasures are rare.
   */
  private erase(feed: FeedId): void {
    // The feed's versions are marked once in the table: each timeline then drops its entries
    // by an integer look-up each, and none is touched when nothing of the feed is held. A
    // cache being built takes activities later, so it drops them by feed when it applies.
    // A floor that is one of the feed's versions keeps its key, not its content.
    const marked = this.activities.markFeed(feed);
    const removeAll = (timeline: Materialized) => {
      timeline.removeFeed(feed, undefined);
      if (timeline.floorEntry !== NO_HANDLE && this.activities.itemOf(timeline.floorEntry).feed === feed) timeline.keepFloorAsReference();
    };
    for (const timeline of this.timelines.values()) {
      if (timeline.held) timeline.held.push(removeAll);
      else if (marked) {
        timeline.removeMarked(marked);
        if (marked[timeline.floorEntry] === 1) timeline.keepFloorAsReference();
      }
      timeline.pulledEdges?.delete(feed);
    }
    this.discard(feed);
    this.marks.delete(feed);
    this.hidden.delete(feed);
    for (const counts of this.producerPosts.values()) counts.forget(feed);
  }

  async hiddenOf(reader: FeedId): Promise<HiddenActivities | undefined> {
    return this.hidden.get(reader);
  }

  async notificationMarks(reader: FeedId): Promise<NotificationMarks | undefined> {
    return this.marks.get(reader);
  }

  /** Takes a feed's entries out of a reader's timeline (those addressed to the reader stay), and forgets its hybrid edge. */
  private forgetFeed(reader: FeedId, feed: FeedId): void {
    const timeline = this.timelines.get(reader);
    if (!timeline) return;
    this.change(timeline, removingFeed(feed));
    timeline.pulledEdges?.delete(feed);
  }

  private readonly insertCounted = (timeline: Materialized, handle: ActivityHandle): void => {
    if (timeline.insert(handle)) {
      this.delivered++;
      this.written++;
    }
  };

  /**
   * Whether a post reaches a `hybrid` reader's stored timeline, deciding its edge's side
   * first: a pushed edge whose reader has come to read too little per post is turned to
   * pull (its entries leave the stored timeline; reads take them from the feed), and a
   * pulled one whose reader reads enough is pushed from the next post on (this one and all
   * before it stay pulled, below a key above theirs). Both counts are taken at the post's
   * time.
   */
  private pushesPost(timeline: Materialized, delivered: DeliveredActivity): boolean {
    const { activity } = delivered;
    const policy = timeline.hybrid!;
    const producers = this.producerPostsOn(policy.windowMs);
    const posts = delivered.postCount(producers);
    const reads = timeline.reads!.valueAt(delivered.timeMs, policy.windowMs);
    const from = timeline.pulledEdges!.get(activity.feed);
    if (from === PULLED_WHOLE) {
      if (!shouldPush(reads, posts, false, policy)) return false;
      // Stored above the feed's greatest key delivered so far, this post's included: this
      // post and everything before it (even one with a newer time) stay with the pull path.
      timeline.pulledEdges!.set(activity.feed, justAbove(producers.newestKey(activity.feed, timeline.order)));
      return false;
    }
    if (!shouldPush(reads, posts, true, policy)) {
      timeline.removeFeed(activity.feed, timeline.reader);
      timeline.pulledEdges!.set(activity.feed, PULLED_WHOLE);
      return false;
    }
    // An activity older than the switch to push is read from the feed with the rest of them.
    return from === undefined || keyOfOrder(timeline.order)(activity) >= from;
  }

  /**
   * A `hybrid` reader's follow takes the side its counts give now. Pushed, a new or pushed
   * edge merges the feed's newest activities as a `ring` timeline does, and a pulled one
   * turns to push above the feed's greatest key, as at a post; pulled, the edge stores
   * nothing. A large backfill comes in several pieces, and the counts may change between
   * them: each piece leaves a timeline that is exact whatever the one before it chose.
   */
  private followHybrid(timeline: Materialized, target: FeedId, recent: readonly Activity[], exhausted: boolean): void {
    const policy = timeline.hybrid!;
    const producers = this.producerPostsOn(policy.windowMs);
    // The newest the feed holds, by either order: a switch to push starts above it.
    for (const activity of recent) producers.saw(activity);
    const now = this.now();
    const from = timeline.pulledEdges!.get(target);
    // A new edge and a pushed one look alike here: both take the side the ratio gives.
    const pushedNow = from === undefined ? undefined : from !== PULLED_WHOLE;
    if (!shouldPush(timeline.reads!.valueAt(now, policy.windowMs), producers.valueAt(target, now), pushedNow, policy)) {
      timeline.removeFeed(target, timeline.reader);
      timeline.pulledEdges!.set(target, PULLED_WHOLE);
    } else if (from === undefined) {
      this.mergeFeed(timeline, recent, exhausted);
    } else if (from === PULLED_WHOLE) {
      timeline.pulledEdges!.set(target, justAbove(producers.newestKey(target, timeline.order)));
    } else {
      this.mergeAboveBound(timeline, recent, exhausted, from);
    }
  }

  /**
   * A switched edge keeps its bound: below it the feed is pulled, and merging there would
   * store it twice. At and above it the timeline must hold the feed, and a follow's backfill
   * may bring what fan-out never delivered there: what the feed posted while an unfollow that
   * kept the edge stood. A backfill piece of the follow that switched the edge holds nothing
   * above the bound, which was set above it.
   */
  private mergeAboveBound(timeline: Materialized, recent: readonly Activity[], exhausted: boolean, bound: SortKey): void {
    const keyOf = keyOfOrder(timeline.order);
    const above = recent.filter((activity) => keyOf(activity) >= bound);
    // Newest first: when some fell below the bound, the part above it came whole.
    this.mergeFeed(timeline, above, exhausted || above.length < recent.length);
  }

  /** Whether a `hybrid` reader takes a bumped activity from its feed; its producer's newest key takes the bump in. */
  private bumpIsPulled(timeline: Materialized, delivered: DeliveredActivity): boolean {
    delivered.bumpOnce(this.producerPostsOn(timeline.hybrid!.windowMs));
    const from = timeline.pulledEdges!.get(delivered.activity.feed);
    if (from === undefined) return false;
    return from === PULLED_WHOLE || keyOfOrder(timeline.order)(delivered.activity) < from;
  }

  private producerPostsOn(windowMs: number): ProducerPosts {
    let counts = this.producerPosts.get(windowMs);
    if (!counts) this.producerPosts.set(windowMs, (counts = new ProducerPosts(windowMs)));
    return counts;
  }

  private holdActivity(held: Array<(timeline: Materialized) => void>, activity: Activity, apply: (timeline: Materialized, handle: ActivityHandle) => void): void {
    held.push((built) => this.applyHeld(built, activity, apply));
  }

  /** Applies a held change: the activity is interned as the change is applied, not before. */
  private applyHeld(timeline: Materialized, activity: Activity, apply: (timeline: Materialized, handle: ActivityHandle) => void): void {
    const delivered = new DeliveredActivity(this.activities, activity);
    apply(timeline, delivered.handleFor(timeline));
    delivered.release();
  }

  private mergeFeed(timeline: Materialized, recent: readonly Activity[], exhausted: boolean): void {
    if (recent.length === 0) return; // most follows of an import: nothing to merge
    const delivered = recent.map((activity) => new DeliveredActivity(this.activities, activity));
    this.written += timeline.mergeFeed(
      delivered.map((one) => one.handleFor(timeline)),
      exhausted,
    );
    for (const one of delivered) one.release();
  }

  /** Applies a change now, or once the build in progress has merged what it pulled. */
  private change(timeline: Materialized, apply: (timeline: Materialized) => void): void {
    if (timeline.held) timeline.held.push(apply);
    else apply(timeline);
  }

  /** Forgets a reader's timeline, giving up what it holds of the table. */
  private discard(reader: FeedId): void {
    const timeline = this.timelines.get(reader);
    if (!timeline) return;
    this.dropTimeline(reader);
    timeline.clear();
  }

  private dropTimeline(reader: FeedId): void {
    if (this.timelines.delete(reader)) this.timelinesChanged++;
  }

  /**
   * The timeline of each of `readers`, in order (undefined where none is kept). A frozen
   * list (fan-out's follower lists) is looked up once while no timeline was added or dropped
   * since, then taken as it was; a timeline a delivery starts (an addressed activity's reader)
   * changes the count, so the next post looks its list up again. Any other list is looked up
   * every time: it could change while kept, and one decoded from a message is never handed
   * again anyway.
   */
  private timelinesOf(readers: readonly FeedId[]): ReadonlyArray<Materialized | undefined> {
    const frozen = Object.isFrozen(readers);
    const known = frozen ? this.resolvedReaders.get(readers) : undefined;
    if (known && known.changes === this.timelinesChanged) return known.timelines;
    const timelines = new Array<Materialized | undefined>(readers.length);
    for (let at = 0; at < readers.length; at++) timelines[at] = this.timelines.get(readers[at]!);
    if (frozen) this.resolvedReaders.set(readers, { changes: this.timelinesChanged, timelines });
    return timelines;
  }

  async readPage(reader: FeedId, before: SortKey | undefined, limit: number, pull: PullPath): Promise<TimelinePage> {
    const policy = this.policyOf(reader);
    if (policy.model === 'cache') await this.buildOnRead(reader, policy, pull);
    const timeline = this.timelines.get(reader);
    if (timeline?.pulledEdges) {
      timeline.reads!.add(this.now(), timeline.hybrid!.windowMs);
      return readHybridPage(timeline, timeline.pulledEdges, before, limit, pull, keyOf(policy));
    }
    return readTimelinePage(timeline, before, limit, pull, keyOf(policy));
  }

  /**
   * Builds a reader's cache from the pull path. The cache exists (and takes deliveries)
   * before the pull starts, so a change delivered meanwhile is not missed: it is held and
   * applied after the pulled entries, which may predate it. Concurrent readers wait for
   * the same build.
   */
  private async buildOnRead(reader: FeedId, policy: TimelinePolicy, pull: PullPath): Promise<void> {
    const existing = this.timelines.get(reader);
    if (existing) {
      existing.lastReadAt = this.now();
      await existing.building;
      return;
    }
    const timeline = this.materialize(reader, policy);
    timeline.held = [];
    timeline.building = (async () => {
      const recent = await pull(undefined, policy.cap + 1);
      // A follow may have discarded this timeline meanwhile: it must then take no holds.
      if (this.timelines.get(reader) !== timeline) return;
      this.mergeFeed(timeline, recent, recent.length <= policy.cap);
      for (const apply of timeline.held!) apply(timeline);
      timeline.held = undefined;
    })();
    try {
      await timeline.building;
    } catch (error) {
      if (this.timelines.get(reader) === timeline) this.discard(reader);
      throw error;
    } finally {
      timeline.building = undefined;
    }
  }

  /**
   * The timeline of a reader that follows nothing yet, started by an activity addressed to it
   * as a first follow starts it: from then on it holds every entry, from before only what it
   * pulls. A `cache` is built by its next read, and `pull` stores nothing.
   */
  private materializeAddressed(reader: FeedId, activity: Activity): Materialized | undefined {
    if (!isAddressedTo(activity, reader)) return undefined;
    const policy = this.policyOf(reader);
    return materializesOnFollow(policy) ? this.materialize(reader, policy) : undefined;
  }

  private materialize(reader: FeedId, policy: TimelinePolicy): Materialized {
    let timeline = this.timelines.get(reader);
    if (!timeline) {
      this.timelines.set(reader, (timeline = new Materialized(reader, policy, this.activities, policy.embed === false, this.now(), this.entryCount)));
      this.timelinesChanged++;
    }
    return timeline;
  }

  /** Drops `cache` timelines nobody read for their group's inactivity period. */
  private sweepIdleCaches(): void {
    const now = this.now();
    if (now - this.lastSweep < SWEEP_INTERVAL_MS) return;
    this.lastSweep = now;
    for (const [reader, timeline] of this.timelines) {
      const policy = this.policyOf(reader);
      if (policy.model === 'cache' && !timeline.building && now - timeline.lastReadAt > policy.inactivityMs) this.discard(reader);
    }
  }

  async size(reader: FeedId): Promise<number> {
    return this.timelines.get(reader)?.size ?? 0;
  }

  /** Activity versions stored (copies and references), each once whatever the readers holding it. */
  storedVersions(): number {
    return this.activities.size;
  }

  async counters(): Promise<TimelineCounters> {
    return { timelines: this.timelines.size, entries: this.entryCount.entries, delivered: this.delivered, entriesWritten: this.written };
  }
}

/**
 * One delivered activity's handles in the table, its copy and its reference, each interned
 * at first use and held until {@link release}: a reader's trim or replacement can then never
 * free a handle the delivery still gives to other readers.
 */
class DeliveredActivity {
  private copy = NO_HANDLE;
  private reference = NO_HANDLE;
  /** For `hybrid` readers: its producer's post count with it, counted at the first of them. */
  private posts = -1;
  private time = NaN;

  constructor(
    private readonly table: ActivityTable,
    readonly activity: Activity,
  ) {}

  /**
   * Milliseconds of the activity's time, when a `hybrid` edge's counts are taken; a time
   * given in the future counts as now, or one such post would age every count it meets.
   */
  get timeMs(): number {
    if (Number.isNaN(this.time)) this.time = Math.min(Date.parse(this.activity.time), Date.now());
    return this.time;
  }

  /** Counts the post once for all of the delivery's readers; returns its producer's count. */
  postCount(producers: ProducerPosts): number {
    if (this.posts < 0) this.posts = producers.count(this.activity, this.timeMs);
    return this.posts;
  }

  /** Tells the producers of a bump once for all of the delivery's readers. */
  bumpOnce(producers: ProducerPosts): void {
    if (this.posts >= 0) return;
    this.posts = 0;
    producers.saw(this.activity);
  }

  /** What the reader's group stores of the activity: the copy, or the reference. */
  handleFor(timeline: Materialized): ActivityHandle {
    if (timeline.links) {
      if (this.reference === NO_HANDLE) this.table.hold((this.reference = this.table.internReference(this.activity)));
      return this.reference;
    }
    if (this.copy === NO_HANDLE) this.table.hold((this.copy = this.table.intern(this.activity)));
    return this.copy;
  }

  /** Gives up the delivery's holds: a handle no reader took is freed. */
  release(): void {
    if (this.copy !== NO_HANDLE) this.table.release(this.copy);
    if (this.reference !== NO_HANDLE) this.table.release(this.reference);
  }
}

/** By relevance a bumped entry moves up; by time it keeps its place with the new copy. */
function applyBump(timeline: Materialized, handle: ActivityHandle): void {
  if (timeline.order === 'relevance') timeline.insert(handle);
  else timeline.replace(handle);
}

/** An update: the new version takes the place of the one held (its key is the same), in every order. */
function replaceHeld(timeline: Materialized, handle: ActivityHandle): void {
  timeline.replace(handle);
}

function removing(id: string): (timeline: Materialized) => void {
  return (timeline) => timeline.remove(id);
}

function removingFeed(feed: FeedId): (timeline: Materialized) => void {
  return (timeline) => timeline.removeFeed(feed, timeline.reader);
}

type InsertDelivery = Extract<TimelineDelivery, { kind: 'insert' }>;

/** Where the run of consecutive inserts starting at `from` ends (`from` when there is none), and how many entries it holds. */
function insertRunAt(deliveries: readonly TimelineDelivery[], from: number): { end: number; entries: number } {
  let entries = 0;
  let end = from;
  while (end < deliveries.length && deliveries[end]!.kind === 'insert') entries += (deliveries[end++] as InsertDelivery).readers.length;
  return { end, entries };
}

/** Models whose timeline exists from the first follow on; in memory they share one shape. */
function materializesOnFollow(policy: TimelinePolicy): boolean {
  return policy.model === 'ring' || policy.model === 'time-buckets' || policy.model === 'size-buckets' || policy.model === 'hybrid';
}

/** A reader's order: by relevance when its group says so, else by time. */
function keyOf(policy: TimelinePolicy): KeyOf {
  return policy.relevancy ? relevanceKeyOf : sortKeyOf;
}

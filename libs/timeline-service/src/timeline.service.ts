import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EVENT_LOG, withTimeout, type EventLog } from '@feedmill/event-log';
import {
  FeedmillError,
  feedOwner,
  keyOfOrder,
  relevanceKeyOf,
  sortKeyOf,
  partitionedSubjects,
  partitionOfDeliveries,
  partitionSubject,
  subjects,
  TimelinePartitioning,
  type ServiceStatus,
  type TimelineItem,
  type Activity,
  type ActivityPage,
  type WrittenActivityPage,
  type EdgeBound,
  type DeliverReply,
  type DeliverRequest,
  type FeedConfig,
  type RebuildStatus,
  type FeedId,
  type ReplyOf,
  type RequestOf,
  type Subject,
  type ReadTimelineRequest,
  type SortKey,
  type TimelineOrder,
  type GroupPage,
  type MarkReply,
  type MarkRequest,
  type ReadGroupsRequest,
  type HiddenPage,
  type HiddenPageRequest,
  type HideReply,
  type HideRequest,
  type WatchReply,
  type WatchRequest,
} from '@feedmill/contracts';
import { newerThan, newestKeyOf, type PullPath, type PullScope } from '@feedmill/feed-models';
import { AggregatedReads } from './aggregated-reads.js';
import { hydrate } from './hydrate.js';
import { HidingActivities, readFullPage } from './hidden-activities.js';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { FEED_CONFIG_LOADER, REALTIME_OPTIONS, STORE_FACTORY, TIMELINE_PARTITIONING, type RealtimeOptions, type StoreFactory } from '@feedmill/runtime';
import { allEdges, parseRequest, REALTIME_BUS, recentActivities, SERVICE_CLIENT, SUBJECT_SERVER, writeHeldPage, type RealtimeBus, type ServiceClient, type SubjectServer } from '@feedmill/transport';
import { RealtimeHub } from './realtime/realtime-hub.js';
import type { TimelineStore } from '@feedmill/stores';
import { FixedPartitions, PARTITION_OWNERSHIP, type PartitionOwnership } from './partition-ownership.js';
import { TimelineRebuild } from './timeline-rebuild.js';
import { scrapeSources, type TimelineHoldings } from '@feedmill/observability';
import { ReaderDeadLetters } from './reader-isolation/reader-dead-letters.js';
import { READER_RETRY_POLICY, ReaderIsolation, type ReaderRetryPolicy } from './reader-isolation/reader-isolation.js';
import { TIMELINE_REPLICAS, type CopiedStore, type TimelineReplicas } from './replicas/timeline-replicas.js';

interface PositionWaiter {
  position: number;
  resolve: (reached: boolean) => void;
  timer: ReturnType<typeof setTimeout>;
}

/** A partition this process holds: its store, and the waits for its position. */
interface HeldPartition {
  store: TimelineStore;
  readonly waiters: Set<PositionWaiter>;
  /** Feeds read by pulls since it was taken, summed over reads: the read side of fan-out's work. */
  feedsQueried: number;
  /** Takes over a request the store fails, so that one reader's failure stays that reader's. */
  readonly readers: ReaderIsolation;
  /** Stops answering its subjects. */
  stopAnswering?: () => void;
  /**
   * The log's head when it was taken. A store opened behind it (empty, or from an older
   * snapshot) is replayed by fan-out: until it gets there its pages would miss the newest
   * entries, so it says it is not ready, and reads wait for it.
   */
  readonly caughtUpAt: number;
  caughtUp: boolean;
}

/** How long a read waits for its partition to be replayed to where the log stood when the partition was taken, before a 503. */
const CATCH_UP_READ_WAIT_MS = 5_000;

/** How long a marking waits for the reader's partition to apply it, so that the counts it answers include it. */
const MARKS_WAIT_MS = 5_000;

/** How long a status waits for each partition before it says that one does not answer. */
const PARTITION_STATUS_TIMEOUT_MS = 2_000;

/**
 * Materialized timelines: receives deliveries from fan-out, serves merged reads, rebuilds.
 *
 * Timelines may be split into partitions by a hash of the reader (`TIMELINE_PARTITIONS`).
 * Each partition this process holds has a store of its own, with its own position, and
 * answers subjects of its own (`feed.timeline.p<n>.deliver`, `read`, `reach`, `status`,
 * `rebuild`, `rebuild-status`).
 * The plain subjects, which any timeline process answers, go to the reader's partition (a
 * read), wait for every partition (a reach), or sum them up (a status). With one partition
 * (the default) there are no partition subjects: the plain ones are partition 0's.
 */
@Injectable()
export class TimelineService implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('timeline');
  private readonly rebuild: TimelineRebuild;
  private readonly held = new Map<number, HeldPartition>();
  private readonly ownership: PartitionOwnership;
  /** Where a reader's failed delivery is kept, for the reader isolation of each partition. */
  private readonly readerDeadLetters: ReaderDeadLetters;
  /** Realtime streams of the feeds this process holds; none without a bus to publish on. */
  private readonly realtime: RealtimeHub | undefined;
  /** Takes this service's gauges out of `/metrics` when it stops. */
  private readonly unscraped: Array<() => void> = [];

  constructor(
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private groups: FeedGroups,
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(STORE_FACTORY) private readonly stores: StoreFactory,
    @Inject(FEED_CONFIG_LOADER) loadConfig: () => FeedConfig,
    @Optional() @Inject(READER_RETRY_POLICY) private readonly readerRetry?: ReaderRetryPolicy,
    @Optional() @Inject(TIMELINE_PARTITIONING) private readonly partitioning: TimelinePartitioning = new TimelinePartitioning(),
    @Optional() @Inject(SUBJECT_SERVER) private readonly subjectServer?: SubjectServer | null,
    @Optional() @Inject(PARTITION_OWNERSHIP) ownership?: PartitionOwnership | null,
    @Optional() @Inject(REALTIME_BUS) bus?: RealtimeBus | null,
    @Optional() @Inject(REALTIME_OPTIONS) realtime?: RealtimeOptions,
    @Optional() @Inject(TIMELINE_REPLICAS) private readonly replicas?: TimelineReplicas | null,
  ) {
    this.readerDeadLetters = new ReaderDeadLetters(log);
    // A process that stops answers what it holds within the shutdown grace: a wait for the
    // timelines to reach a position (a mark's or a hiding's, up to MARKS_WAIT_MS) ends now,
    // as a timeout would, with the write already acknowledged by the log.
    subjectServer?.stopping.addEventListener('abort', () => this.endWaits(), { once: true });
    if (bus && realtime) this.realtime = this.realtimeHub(bus, log, realtime);
    // Shared (MongoDB) timelines belong to no process: every one answers every partition.
    this.ownership = ownership && !stores.sharedTimelines ? ownership : new FixedPartitions(this.partitioning.all);
    this.rebuild = new TimelineRebuild(
      log,
      stores,
      client,
      loadConfig,
      (rebuilt) => {
        // A partition let go meanwhile is left to whoever holds it now.
        for (const [partition, store] of rebuilt.stores) {
          const held = this.held.get(partition);
          if (held) held.store = store;
        }
        this.groups = rebuilt.groups;
        this.replicas?.startOver();
      },
      this.partitioning,
      () => this.heldPartitions(),
    );
  }

  async onModuleInit(): Promise<void> {
    if (!this.partitioning.partitioned) await this.open(0);
    if (this.replicas) {
      if (this.partitioning.partitioned) throw new Error('copies of the timelines in HTTP workers need the timelines in one partition');
      // Copied once caught up with the log: until then its reads wait (see readPageIn), and a copy's would not.
      this.replicas.bind(() => {
        const held = this.held.get(0);
        return held?.caughtUp ? { store: held.store as CopiedStore, config: this.groups.config } : undefined;
      });
    }
    this.unscraped.push(
      scrapeSources.timelines.add(() => this.holdings()),
      scrapeSources.rebuilds.add(() => this.rebuild.status()),
    );
  }

  onApplicationBootstrap(): void {
    if (!this.partitioning.partitioned) return;
    if (!this.subjectServer) throw new Error(`timelines in ${this.partitioning.count} partitions need a server for their subjects`);
    this.ownership.start({
      take: (partition) =>
        this.take(partition).catch((error: unknown) => {
          // It stays without an owner here: readiness says so, and a lease lets another take it.
          this.logger.error(`cannot take timeline partition ${partition}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
          throw error;
        }),
      release: (partition) => this.release(partition),
    });
  }

  async onModuleDestroy(): Promise<void> {
    for (const remove of this.unscraped.splice(0)) remove();
    await this.realtime?.stop();
    await this.ownership.stop();
    for (const partition of [...this.held.keys()]) await this.release(partition);
    await this.rebuild.stop();
  }

  /** The partitions this process holds now, in order. */
  heldPartitions(): number[] {
    return [...this.held.keys()].sort((a, b) => a - b);
  }

  /**
   * Takes a partition on: opens its store (empty, or from its snapshot; fan-out replays the
   * log from where it stands) and answers its subjects.
   */
  private async take(partition: number): Promise<void> {
    if (this.held.has(partition)) return;
    await this.open(partition);
    const held = this.held.get(partition)!;
    const answering = await Promise.all(partitionedSubjects.map((subject) => this.subjectServer!.answer(partitionSubject(subject, partition), (payload) => this.answerPartition(partition, subject, payload))));
    held.stopAnswering = () => answering.forEach((handle) => handle.stop());
    this.logger.log(`holds timeline partition ${partition} of ${this.partitioning.count}, at position ${await held.store.position()}`);
  }

  private async open(partition: number): Promise<void> {
    const store = await this.stores.timeline((reader) => this.groups.timelinePolicyOf(reader), {
      policies: this.groups.fingerprint,
      groupModels: this.groups.timelineModels,
      notificationGroups: this.groups.notificationGroups,
      partition: { index: partition, of: this.partitioning.count },
    });
    // A timeline given no log (a benchmark's, which is only delivered to) has nothing to be replayed.
    const log = this.log as EventLog | null;
    const caughtUpAt = log ? await log.headPosition() : 0;
    const caughtUp = (await store.position()) >= caughtUpAt;
    this.held.set(partition, { store, waiters: new Set(), feedsQueried: 0, readers: new ReaderIsolation(this.readerDeadLetters, this.readerRetry), caughtUpAt, caughtUp });
  }

  /** Lets a partition go: its subjects first, then the waits for it, then its store. */
  private async release(partition: number): Promise<void> {
    const held = this.held.get(partition);
    if (!held) return;
    held.stopAnswering?.();
    this.held.delete(partition);
    if (!this.stores.sharedTimelines) this.realtime?.forget((feed) => this.partitioning.partitionOf(feed) !== partition);
    for (const waiter of held.waiters) this.stopWaiting(held, waiter, false);
  }

  private answerPartition(partition: number, subject: (typeof partitionedSubjects)[number], payload: unknown): Promise<unknown> {
    switch (subject) {
      case subjects.timeline.read:
        return this.readIn(partition, parseRequest(subject, payload));
      case subjects.timeline.readWritten:
        return this.readWrittenIn(partition, parseRequest(subject, payload));
      case subjects.timeline.readGroups:
        return this.readGroupsIn(partition, parseRequest(subject, payload));
      case subjects.timeline.mark:
        return this.markIn(partition, parseRequest(subject, payload));
      case subjects.timeline.hide:
        return this.hideIn(partition, parseRequest(subject, payload));
      case subjects.timeline.hidden:
        return this.hiddenIn(partition, parseRequest(subject, payload));
      case subjects.timeline.deliver:
        return this.deliverIn(partition, parseRequest(subject, payload));
      case subjects.timeline.reach: {
        const { position, timeoutMs } = parseRequest(subject, payload);
        return this.reachIn(partition, position, timeoutMs);
      }
      case subjects.timeline.status:
        return this.statusOf(partition);
      // The process that holds the partition rebuilds every partition it holds, once.
      case subjects.timeline.rebuild:
        return this.rebuild.start();
      case subjects.timeline.rebuildStatus:
        return Promise.resolve(this.rebuild.status());
      case subjects.timeline.watch:
        return this.watchHere(parseRequest(subject, payload));
      case subjects.timeline.renewWatches:
        return this.renewHere(parseRequest(subject, payload));
      case subjects.timeline.unwatch:
        return this.unwatchHere(parseRequest(subject, payload));
    }
  }

  /**
   * A gateway opens a stream on a feed: answered by the process holding the feed's
   * partition (its reads and deliveries are there), with the events the stream starts with.
   */
  watch(request: WatchRequest): Promise<WatchReply> {
    return this.routed(subjects.timeline.watch, request, () => this.watchHere(request));
  }

  /** A gateway's streams still open: each feed's watch goes on, in its partition. */
  async renewWatches(request: { feeds: FeedId[]; watcher: string }): Promise<{ renewed: number }> {
    if (!this.partitioning.partitioned) return this.renewHere(request);
    const byPartition = new Map<number, FeedId[]>();
    for (const feed of request.feeds) {
      const partition = this.partitioning.partitionOf(feed);
      byPartition.set(partition, [...(byPartition.get(partition) ?? []), feed]);
    }
    const replies = await Promise.all(
      [...byPartition].map(([partition, feeds]) =>
        this.held.has(partition) ? this.renewHere({ feeds, watcher: request.watcher }) : this.client.request(subjects.timeline.renewWatches, { feeds, watcher: request.watcher }, { partition }),
      ),
    );
    return { renewed: replies.reduce((sum, reply) => sum + reply.renewed, 0) };
  }

  unwatch(request: { feed: FeedId; watcher: string }): Promise<Record<string, never>> {
    return this.routed(subjects.timeline.unwatch, request, () => this.unwatchHere(request)) as Promise<Record<string, never>>;
  }

  private async watchHere(request: WatchRequest): Promise<WatchReply> {
    return { events: await this.hub().watch(request.feed, request.watcher, request.lastEventId) };
  }

  private async renewHere(request: { feeds: FeedId[]; watcher: string }): Promise<{ renewed: number }> {
    return { renewed: await this.hub().renew(request.feeds, request.watcher) };
  }

  private unwatchHere(request: { feed: FeedId; watcher: string }): Promise<Record<string, never>> {
    this.hub().unwatch(request.feed, request.watcher);
    return Promise.resolve({});
  }

  private hub(): RealtimeHub {
    if (!this.realtime) throw new FeedmillError('unavailable', 'realtime streams are not served by this deployment');
    return this.realtime;
  }

  private realtimeHub(bus: RealtimeBus, log: EventLog, options: RealtimeOptions): RealtimeHub {
    return new RealtimeHub({
      options,
      bus,
      log,
      isTimeline: (feed) => this.groups.isTimeline(feed),
      keyOf: (feed) => (this.groups.isTimeline(feed) && this.groups.timelinePolicyOf(feed).relevancy ? relevanceKeyOf : sortKeyOf),
      readFirstPage: (feed, limit, atLeast) =>
        this.groups.isTimeline(feed) ? this.read({ feed, limit }) : this.client.request(subjects.content.recent, { feeds: [feed], limit, atLeast }),
      isAggregated: (feed) => this.groups.aggregateRuleOf(feed) !== undefined,
      readFirstGroups: (feed, limit) => this.aggregatedReadsOf(this.partitioning.partitioned ? this.partitioning.partitionOf(feed) : 0).firstGroups(feed, limit),
      timelinePosition: async (feed) => this.held.get(this.partitioning.partitionOf(feed))?.store.position(),
      timelineReaches: async (feed, position, timeoutMs) => {
        const partition = this.partitioning.partitionOf(feed);
        if (this.held.has(partition)) await this.reachIn(partition, position, timeoutMs);
      },
      following: (feed) => allEdges(this.client, 'following', feed),
      warn: (message) => this.logger.warn(message),
    });
  }

  private heldPartition(partition: number): HeldPartition {
    const held = this.held.get(partition);
    if (!held) throw new FeedmillError('unavailable', `timeline partition ${partition} is not held by this process (it moved): try again`);
    return held;
  }

  /**
   * Starts a rebuild of the timelines. With memory timelines in partitions, every partition
   * is asked, and each process rebuilds those it holds; shared (MongoDB) timelines are all
   * held here, and rebuilt here in one generation.
   */
  async startRebuild(): Promise<RebuildStatus> {
    if (!this.partitioning.partitioned || this.stores.sharedTimelines) return this.rebuild.start();
    return combinedRebuildStatus(await Promise.all(this.partitioning.all.map((partition) => this.client.request(subjects.timeline.rebuild, {}, { partition }))));
  }

  /** How the rebuild goes: with memory timelines in partitions, as every partition's process says. */
  async rebuildStatus(): Promise<RebuildStatus> {
    if (!this.partitioning.partitioned || this.stores.sharedTimelines) return this.rebuild.status();
    return combinedRebuildStatus(await Promise.all(this.partitioning.all.map((partition) => this.client.request(subjects.timeline.rebuildStatus, {}, { partition }))));
  }

  /** A delivery on the plain subject: partition 0's when there is one; partitioned ones go to their partition's subject. */
  deliver(request: DeliverRequest): Promise<DeliverReply> {
    if (!this.partitioning.partitioned) return this.deliverIn(0, request);
    const partition = partitionOfDeliveries(request, this.partitioning.count);
    throw new FeedmillError(
      'invalid_request',
      `timelines are in ${this.partitioning.count} partitions: deliveries go to their partition's subject (${partitionSubject(subjects.timeline.deliver, partition ?? 0)})`,
      'deliveries',
    );
  }

  private async deliverIn(partition: number, request: DeliverRequest): Promise<DeliverReply> {
    const held = this.heldPartition(partition);
    const store = held.store;
    let reply: DeliverReply;
    try {
      reply = await store.deliver(request);
      if (reply.applied) this.replicas?.applied(store, request);
    } catch (failure) {
      try {
        reply = await held.readers.deliverReaderByReader(store, request, failure);
      } finally {
        // Applied reader by reader, some of it perhaps not at all: the copies start over from the store.
        this.replicas?.startOver();
      }
    }
    if (reply.applied) {
      this.reached(held, reply.position);
      this.realtime?.delivered(readersOf(request), reply.position);
    }
    return reply;
  }

  /**
   * Resolves once the timelines have applied the log up to `position` (an unfollow, say,
   * whose entries must be gone from the reader's next page), or after `timeoutMs` with
   * `reached: false`. With partitions, once every one has: the reader's is among them.
   */
  async reach(position: number, timeoutMs: number): Promise<{ reached: boolean; position: number }> {
    if (!this.partitioning.partitioned) return this.reachIn(0, position, timeoutMs);
    const replies = await Promise.all(this.partitioning.all.map((partition) => this.client.request(subjects.timeline.reach, { position, timeoutMs }, { partition })));
    return { reached: replies.every((reply) => reply.reached), position: Math.min(...replies.map((reply) => reply.position)) };
  }

  private reachIn(partition: number, position: number, timeoutMs: number): Promise<{ reached: boolean; position: number }> {
    return this.reachHeld(this.heldPartition(partition), position, timeoutMs);
  }

  private async reachHeld(held: HeldPartition, position: number, timeoutMs: number): Promise<{ reached: boolean; position: number }> {
    const startedAt = Date.now();
    // Waiting before looking: a delivery applied while the position is read still wakes it.
    let waiter!: PositionWaiter;
    const reached = new Promise<boolean>((resolve) => {
      waiter = { position, resolve, timer: setTimeout(() => this.stopWaiting(held, waiter, false), timeoutMs) };
      held.waiters.add(waiter);
    });
    if (this.subjectServer?.stopping.aborted) this.stopWaiting(held, waiter, false);
    else if ((await held.store.position()) >= position) this.stopWaiting(held, waiter, true);
    const own = await reached;
    // The copies in HTTP workers too, whose pages a reader may be served next.
    const copied = own && this.replicas ? await this.replicas.reach(position, Math.max(0, startedAt + timeoutMs - Date.now())) : true;
    return { reached: own && copied, position: await held.store.position() };
  }

  private endWaits(): void {
    for (const held of this.held.values()) for (const waiter of held.waiters) this.stopWaiting(held, waiter, false);
  }

  private reached(held: HeldPartition, position: number): void {
    if (!held.caughtUp && position >= held.caughtUpAt) {
      held.caughtUp = true;
      this.logger.log(`a timeline partition caught up with the log at position ${position}`);
      this.replicas?.startOver();
    }
    for (const waiter of held.waiters) if (waiter.position <= position) this.stopWaiting(held, waiter, true);
  }

  private stopWaiting(held: HeldPartition, waiter: PositionWaiter, reached: boolean): void {
    clearTimeout(waiter.timer);
    held.waiters.delete(waiter);
    waiter.resolve(reached);
  }

  /** A read on the plain subject: answered here when this process holds the reader's partition, else by the one that does. */
  read(request: ReadTimelineRequest): Promise<ActivityPage> {
    return this.routed(subjects.timeline.read, request, (partition) => this.readIn(partition, request));
  }

  /**
   * A read answered with the page written as JSON, which a gateway in another process frames
   * as it is instead of parsing the activities and writing them again (each activity is
   * written once, see `activityJson`).
   */
  readWritten(request: ReadTimelineRequest): Promise<WrittenActivityPage> {
    return this.routed(subjects.timeline.readWritten, request, (partition) => this.readWrittenIn(partition, request));
  }

  private async readWrittenIn(partition: number, request: ReadTimelineRequest): Promise<WrittenActivityPage> {
    return writeHeldPage(await this.readIn(partition, request));
  }

  /**
   * Answers a request about one reader's timeline in the reader's partition: here when this
   * process holds it (always, with one partition), else by the process that does.
   */
  private routed<S extends Subject>(subject: S, request: RequestOf<S> & { feed: FeedId }, here: (partition: number) => Promise<ReplyOf<S>>): Promise<ReplyOf<S>> {
    if (!this.partitioning.partitioned) return here(0);
    const partition = this.partitioning.partitionOf(request.feed);
    return this.held.has(partition) ? here(partition) : this.client.request(subject, request, { partition });
  }

  private async readIn(partition: number, request: ReadTimelineRequest): Promise<ActivityPage> {
    return this.readPageIn(this.heldPartition(partition), request);
  }

  /**
   * The reader's page as its reader may see it: hydrated, without what it hid or may no
   * longer read, still full (see `readFullPage`); with `after`, the newest entries above that
   * cursor (newer-than polling).
   */
  private async readPageIn(held: HeldPartition, request: ReadTimelineRequest): Promise<ActivityPage> {
    if (!held.caughtUp) await this.caughtUp(held);
    const order = this.groups.timelinePolicyOf(request.feed).relevancy ? 'relevance' : 'time';
    const keyOf = keyOfOrder(order);
    const pull: PullPath = (before, limit, scope) => this.pull(held, request.feed, before, limit, order, scope);
    // A reader who hid nothing has no set: its read costs one map lookup more.
    const hidden = await held.store.hiddenOf(request.feed);
    const read = (before: SortKey | undefined, limit: number) => held.store.readPage(request.feed, before, limit, pull);
    const keep = async (items: TimelineItem[]) => this.readableBy(request.feed, await this.hydrate(hidden ? items.filter((item) => !hidden.has(item.id)) : items));
    if (request.after !== undefined) {
      if (request.before !== undefined) throw new FeedmillError('invalid_request', 'after: cannot be used with before', 'after');
      // The first page and one more entry the reader sees, through the model's ordinary read
      // (see newerThan): an entry left out must not take the place of the one that says more
      // newer entries wait below the page.
      const top = await readFullPage(read, keep, undefined, request.limit + 1, request.after);
      const page = newerThan(top.items, request.after, request.limit, keyOf);
      // Cut short before it found the one more entry or reached the cursor: newer entries may wait below it.
      if (page.next === null && top.items.length <= request.limit && top.next !== null && top.next > request.after) page.next = top.next;
      return { ...page, newest: newestKeyOf(page.items, keyOf) };
    }
    const page = await readFullPage(read, keep, request.before, request.limit);
    return { items: page.items, next: page.next, newest: newestKeyOf(page.items, keyOf) };
  }

  /** Waits until a partition being replayed stands where the log stood when it was taken; a 503 after a while. */
  private async caughtUp(held: HeldPartition): Promise<void> {
    const { reached, position } = await this.reachHeld(held, held.caughtUpAt, CATCH_UP_READ_WAIT_MS);
    if (!reached) throw new FeedmillError('unavailable', `the reader's timelines are being rebuilt from the log (at position ${position} of ${held.caughtUpAt}): ask again shortly`);
  }

  /** A page of an aggregated timeline's groups, answered by the reader's partition. */
  readGroups(request: ReadGroupsRequest): Promise<GroupPage> {
    return this.routed(subjects.timeline.readGroups, request, (partition) => this.readGroupsIn(partition, request));
  }

  private readGroupsIn(partition: number, request: ReadGroupsRequest): Promise<GroupPage> {
    return this.aggregatedReadsOf(partition).page(request);
  }

  /** Marks a notification feed's groups seen or read, answered by the reader's partition. */
  mark(request: MarkRequest): Promise<MarkReply> {
    return this.routed(subjects.timeline.mark, request, (partition) => this.markIn(partition, request));
  }

  private markIn(partition: number, request: MarkRequest): Promise<MarkReply> {
    return this.aggregatedReadsOf(partition).mark(request);
  }

  /** Hides an activity from a reader's timeline, or shows it again, answered by the reader's partition. */
  hide(request: HideRequest): Promise<HideReply> {
    return this.routed(subjects.timeline.hide, request, (partition) => this.hideIn(partition, request));
  }

  /** A page of what a reader hid, answered by the reader's partition. */
  hidden(request: HiddenPageRequest): Promise<HiddenPage> {
    return this.routed(subjects.timeline.hidden, request, (partition) => this.hiddenIn(partition, request));
  }

  private hideIn(partition: number, request: HideRequest): Promise<HideReply> {
    return this.hidingIn(partition).hide(request);
  }

  private hiddenIn(partition: number, request: HiddenPageRequest): Promise<HiddenPage> {
    return this.hidingIn(partition).page(request);
  }

  private hidingIn(partition: number): HidingActivities {
    const held = this.heldPartition(partition);
    return new HidingActivities(this.groups, this.log, this.client, held.store, (position) => this.reachIn(partition, position, MARKS_WAIT_MS));
  }

  private aggregatedReadsOf(partition: number): AggregatedReads {
    const held = this.heldPartition(partition);
    return new AggregatedReads(this.groups, this.log, held.store, (request) => this.readPageIn(held, request), (position) => this.reachIn(partition, position, MARKS_WAIT_MS), this.client);
  }

  /**
   * The items but those addressed to the reader from a feed its owner may no longer read (a
   * private feed that removed the owner's timeline from its followers): an entry arrives by
   * `to` only if its owner might read the feed then, and a read checks again. Entries that
   * came by a follow go with the follow. Graph is asked only about addressed entries of
   * other users' feeds, once per feed.
   */
  private async readableBy(reader: FeedId, items: Activity[]): Promise<Activity[]> {
    const owner = feedOwner(reader);
    let feeds: Set<FeedId> | undefined;
    for (const item of items) {
      if (item.to !== undefined && feedOwner(item.feed) !== owner && item.to.includes(reader)) (feeds ??= new Set()).add(item.feed);
    }
    if (!feeds) return items;
    const readers = this.groups.timelinesOf(owner);
    const refused = new Set<FeedId>();
    await Promise.all(
      [...feeds].map(async (feed) => {
        if (!(await this.client.request(subjects.graph.mayRead, { feed, readers })).allowed) refused.add(feed);
      }),
    );
    return refused.size === 0 ? items : items.filter((item) => !refused.has(item.feed) || !item.to?.includes(reader));
  }

  /**
   * Linked entries hold references: the page's activities come from content in one batched
   * query (seed 001's second round trip). One removed meanwhile is left out.
   */
  private hydrate(items: readonly TimelineItem[]): Promise<Activity[]> {
    return hydrate(items, (ids) => this.client.request(subjects.content.get, { ids }));
  }

  /**
   * The timelines' status. With partitions, every partition is asked: ready only when each
   * answers, at the position of the one furthest behind, with their counters summed.
   */
  async status(): Promise<ServiceStatus> {
    if (!this.partitioning.partitioned) return this.statusOf(0);
    const answers = await Promise.allSettled(this.partitioning.all.map((partition) => withTimeout(this.client.request(subjects.timeline.status, {}, { partition }), PARTITION_STATUS_TIMEOUT_MS)));
    const answered = answers.flatMap((answer) => (answer.status === 'fulfilled' ? [answer.value] : []));
    const counters: Record<string, number> = { partitions: this.partitioning.count, partitionsAnswering: answered.length };
    for (const status of answered) for (const [name, value] of Object.entries(status.counters ?? {})) counters[name] = (counters[name] ?? 0) + value;
    return {
      service: 'timeline',
      ready: answered.length === this.partitioning.count && answered.every((status) => status.ready),
      position: answered.length === 0 ? 0 : Math.min(...answered.map((status) => status.position)),
      counters,
    };
  }

  /**
   * What the partitions this process holds hold, for `/metrics`. Shared (MongoDB) timelines
   * are counted by partition 0 alone, as in {@link statusOf}: every process holds every
   * partition of them, so a cluster-wide sum counts their timelines as often as processes run.
   */
  private async holdings(): Promise<TimelineHoldings> {
    const sum: TimelineHoldings = { timelines: 0, entries: 0, delivered: 0 };
    for (const [partition, { store }] of this.held) {
      const counters = await store.counters();
      if (!this.stores.sharedTimelines || partition === 0) {
        sum.timelines += counters.timelines;
        sum.entries += counters.entries;
      }
      sum.delivered += counters.delivered;
    }
    return sum;
  }

  private async statusOf(partition: number): Promise<ServiceStatus> {
    const { store, feedsQueried, readers, caughtUp } = this.heldPartition(partition);
    const counters = await store.counters();
    // Shared (MongoDB) stores count what their collections hold, which every partition shares: partition 0 alone reports it, so that a sum counts it once.
    if (this.stores.sharedTimelines && partition !== 0) Object.assign(counters, { timelines: 0, entries: 0 });
    // The streams are the process's, not a partition's: counted once, with its first partition.
    const streams = this.realtime && partition === this.heldPartitions()[0] ? this.realtime.counters() : {};
    const position = await store.position();
    const copies: Record<string, number> = this.replicas ? { replicas: this.replicas.count, replicasBehind: this.replicas.behind(position) } : {};
    return { service: 'timeline', ready: caughtUp, position, counters: { ...counters, ...streams, ...copies, feedsQueried, readerDeadLettered: readers.deadLettered } };
  }

  /**
   * Fan-out on read: the newest activities of every feed the reader follows, and of the
   * feeds it unfollowed keeping their history, each within its edge's bound (a follow's
   * `since`, a kept history's end), as every stored model holds them. Graph and content
   * answer as of at least what this store holds or is taking in when the pull starts (with
   * several replicas, either may lag): a cache built from the pull then misses no follow
   * and no post that a delivery brought here before the cache existed.
   */
  private async pull(held: HeldPartition, reader: FeedId, before: SortKey | undefined, limit: number, order: TimelineOrder, scope?: PullScope): Promise<Activity[]> {
    const atLeast = await held.store.pullPosition();
    const boundsAsked = this.client.request(subjects.graph.edgeBounds, { feed: reader, atLeast });
    if (scope && 'only' in scope) {
      held.feedsQueried += scope.only.length;
      const { bounds } = await boundsAsked;
      return recentActivities(this.client, { feeds: scope.only as FeedId[], before, limit, atLeast, order, ...boundsOption(bounds) });
    }
    const [following, { bounds }] = await Promise.all([allEdges(this.client, 'following', reader, atLeast), boundsAsked]);
    // Kept edges are read with the followed feeds; a hybrid timeline may read one apart. Two
    // graph replicas may answer as of different positions: a feed is read once all the same.
    const kept = bounds.filter((bound) => bound.unfollowedAt !== undefined && !following.includes(bound.feed)).map((bound) => bound.feed);
    const followed = without(kept.length === 0 ? following : following.concat(kept), scope?.except);
    held.feedsQueried += followed.length;
    // The reader's own feed brings what was addressed to it (content indexes it there).
    const feeds = [reader, ...followed];
    return recentActivities(this.client, { feeds: feeds as FeedId[], before, limit, atLeast, order, ...boundsOption(bounds) });
  }
}

/** The readers a delivery request changes. */
function* readersOf(request: DeliverRequest): Iterable<FeedId> {
  for (const delivery of request.deliveries) {
    if ('readers' in delivery) yield* delivery.readers;
    else yield delivery.reader;
  }
}

/** The request's `bounds`, left out when there are none. */
function boundsOption(bounds: EdgeBound[]): { bounds?: EdgeBound[] } {
  return bounds.length === 0 ? {} : { bounds };
}

/** `feeds` less those of `left` (a hybrid reader's pulled edges, read apart). */
function without(feeds: FeedId[], left: readonly FeedId[] | undefined): FeedId[] {
  if (!left || left.length === 0) return feeds;
  const leaving = new Set(left);
  return feeds.filter((feed) => !leaving.has(feed));
}

/**
 * Rebuilds of several processes as one: failed if one failed, running while one runs, done
 * once all are; at the lowest position any reached.
 */
function combinedRebuildStatus(statuses: readonly RebuildStatus[]): RebuildStatus {
  const states = statuses.map((status) => status.state);
  const state = states.includes('failed') ? 'failed' : states.includes('running') ? 'running' : states.every((s) => s === 'done') ? 'done' : 'idle';
  const error = statuses.find((status) => status.error !== undefined)?.error;
  return {
    projection: 'timeline',
    state,
    position: Math.min(...statuses.map((status) => status.position)),
    head: Math.max(...statuses.map((status) => status.head)),
    events: Math.max(...statuses.map((status) => status.events)),
    ...(error !== undefined && { error }),
  };
}

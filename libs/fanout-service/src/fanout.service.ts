import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  DEAD_LETTER_STREAM,
  deadLetterEvents,
  decodeFeedEvents,
  hiddenStream,
  isTransientFailure,
  openDeadLetters,
  splitDeliveriesByPartition,
  subjects,
  TimelinePartitioning,
  type DeadLetter,
  type DeadLetterEvent,
  type DeadLetterList,
  type DeadLetterReplay,
  type FeedEvent,
  type FeedId,
  type PositionedEvent,
  type ServiceStatus,
  type TimelineDelivery,
} from '@feedmill/contracts';
import { EVENT_LOG, type EventLog, type RecordedEvent, type Subscription } from '@feedmill/event-log';
import {
  chunkDeliveries,
  cutAtPartitionPositions,
  deliverInOrder,
  deliveriesByReader,
  deliveryJobs,
  FollowerIndex,
  isLargeDelivery,
  planDeliveries,
  replanAsOfNow,
  segmentAroundLargeFanOuts,
  type DeliveryTarget,
  type FanOutSegment,
  type PlanLookups,
  type ReadersDelivery,
} from '@feedmill/feed-models';
import { FANOUT_CLUSTER, JobsStalledError, type FanoutCluster } from '@feedmill/fanout-cluster';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { SerialQueues, STORE_FACTORY, TIMELINE_PARTITIONING, type StoreFactory } from '@feedmill/runtime';
import { SERVICE_CLIENT, serviceDeliveryTarget, servicePlanLookups, type ServiceClient } from '@feedmill/transport';
import { metrics, scrapeSources, type FanoutLag } from '@feedmill/observability';
import { FanoutJobWorker } from './fanout-job.worker.js';
import { advanceFromLog } from './follower-index-from-log.js';
import { FollowerIndexSnapshots } from './follower-index-snapshot.js';

const eventDeadLetters = metrics.deadLetters.labels('event');

/**
 * Thrown from a batch when a timeline partition stands elsewhere than expected; fan-out
 * replays from the position of the partition furthest behind.
 */
class TimelineMovedError extends Error {
  override readonly name = 'TimelineMovedError';
  constructor(readonly position: number) {
    super(`timeline stands at position ${position}; replaying from there`);
  }
}

class FanoutStoppingError extends Error {
  override readonly name = 'FanoutStoppingError';
}

/** How fan-out retries what fails before it decides that an event cannot be delivered. */
export interface FanoutRetryPolicy {
  /** Attempts of a batch, and then of each of its events alone. @defaultValue 5 */
  attempts: number;
  /** Wait before the second attempt, doubled before each next one. @defaultValue 100 ms */
  firstBackoffMs: number;
}

export const FANOUT_RETRY_POLICY = Symbol('FanoutRetryPolicy');
const defaultRetryPolicy: FanoutRetryPolicy = { attempts: 5, firstBackoffMs: 100 };

/** How the planner shares large deliveries out as chunk jobs (cluster mode). */
export interface FanoutJobSettings {
  /**
   * A post, removal, bump or update by a feed with more followers than this is applied as
   * chunk jobs by every fan-out process, when another process than the planner waits for
   * work; smaller ones the planner delivers itself. @defaultValue 5,000
   */
  minReaders: number;
  /**
   * A post whose jobs are not done and get no fewer for this long is taken back from the
   * queue and delivered by the planner itself. @defaultValue 60,000 ms
   */
  stallMs: number;
}

export const FANOUT_JOB_SETTINGS = Symbol('FanoutJobSettings');
export const defaultJobSettings: FanoutJobSettings = { minReaders: 5_000, stallMs: 60_000 };

/**
 * Events per batch while fan-out catches up with the log (a start, a rewind): planned and
 * delivered together, a catch-up's posts reach timeline in requests large enough for the
 * memory store to apply them reader by reader. Following the head, batches stay as small as
 * the log's default.
 */
const CATCH_UP_BATCH = 8_192;
/** For how many stall times (`FANOUT_JOB_STALL_MS`) a planner whose jobs stalled, or whose job queue failed, delivers every event itself. */
const JOBS_PAUSE_STALLS = 5;

/** Requests that only the planner answers, by name. */
const REPLAY_DEAD_LETTERS = 'replay-dead-letters';
/** Under the services' request timeout, so that the caller hears why. */
const ASK_PLANNER_TIMEOUT_MS = 14_000;
/** How often a planner with nothing to deliver looks whether a timeline partition fell behind it. */
const TIMELINE_WATCH_MS = 2_000;

/**
 * One spell as planner. Its run names the jobs it publishes (a retry within it queues none
 * anew); ending it stops its subscription and aborts its waits.
 */
interface PlanningTerm {
  run: string;
  /**
   * Rewinds within the term. Jobs are named by the run and this count: after a rewind the
   * jobs of an event are published anew, since those published before it may have been
   * refused (timeline had restarted and stood elsewhere) and counted done; under their old
   * names the queue would drop the new ones as duplicates, and the event would be passed
   * with no deliveries.
   */
  rewinds: number;
  /**
   * Events whose jobs it took back (they stalled). Jobs are named by this count too: after a
   * withdrawal the queue would drop a retry's jobs as duplicates, count the event done, and
   * pass it with no deliveries.
   */
  withdrawals: number;
  ended: AbortController;
}

type Outcome = { ok: true } | { ok: false; error: unknown };

/**
 * Follows the log and sends each batch's deliveries ({@link planDeliveries}) to timeline.
 * It starts where timeline says it stands, and timeline moves its position only with the
 * last delivery of each batch (at-least-once, idempotent).
 *
 * Followers come from a {@link FollowerIndex} of its own, which takes in each batch's
 * follows once timeline has the batch, so that it always stands where fan-out does: no
 * batch asks graph anything. Where fan-out starts or rewinds to a position the index is not
 * at (a durable timeline resumes from its position), the index is brought there first by
 * reading the log's follows up to it.
 *
 * A batch that keeps failing is taken apart: its events are delivered one at a time, and
 * one that still fails alone while the services answer is a dead letter. It is appended to
 * the dead-letter stream of the log with its reason, and fan-out goes on past it. While a
 * service does not answer, times out or has not caught up, nothing is dead-lettered:
 * fan-out waits for it.
 *
 * In cluster mode several fan-out processes run, and the one that holds the planner lease
 * does all of the above; every process, the planner too, applies chunk jobs
 * ({@link FanoutJobWorker}). The planner cuts each batch around the posts, removals, bumps
 * and updates of feeds with many followers ({@link segmentAroundLargeFanOuts}): timeline is
 * moved to just before such an event, its delivery is published as jobs fenced at that
 * position, and timeline moves past it only once every job is done. Timeline applies a job only while it
 * stands at the job's fence, so a job late or twice (its worker died after applying it) is
 * harmless before, and refused after. A planner deposed mid-batch leaves timeline where it
 * got to; the next one starts from there.
 *
 * Timelines may be split into partitions by reader (`TIMELINE_PARTITIONS`), each with its
 * own position. Fan-out knows where each stands and follows the log from the one furthest
 * behind: it plans each batch once, splits its deliveries by the readers' partitions and
 * sends each partition its part (an empty part too, which moves its position), fenced at
 * that partition's position. A batch is cut wherever a partition stands inside it
 * ({@link cutAtPartitionPositions}), and a partition already past a segment is left out of
 * it. So a partition that answers another position than expected (a process took it over
 * empty, or from an older snapshot) is brought up by replaying the log from where it
 * stands, delivering to it alone, until it is in step with the others again: that replay is
 * how a partition moves between processes. A large delivery becomes jobs per partition
 * (and per chunk), each fenced at its partition's position.
 */
@Injectable()
export class FanoutService implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('fanout');
  private subscription?: Subscription;
  /** Set while this process plans (always, without a cluster). */
  private term?: PlanningTerm;
  /** Role changes one at a time: a deposition waits for the election before it. */
  private roleChanges: Promise<void> = Promise.resolve();
  private servingPlannerRequests?: { stop(): void };
  private jobsPublished = 0;
  /** Jobs of stalled events the planner took back and delivered itself. */
  private jobsWithdrawn = 0;
  /** Until when this planner delivers every event itself, after jobs stalled (see {@link JOBS_PAUSE_STALLS}). */
  private jobsPausedUntil = 0;
  private delivered = 0;
  private caughtUp = false;
  /** Where each timeline partition stands, as its last answer said; fan-out follows the log from the lowest. */
  private positions: number[];
  private stopping = false;
  private rewinding = false;
  private watchingTimeline = false;
  /** Positions of the dead letters not replayed yet. */
  private readonly deadLettered = new Set<number>();
  /** Batches and replays take turns: both move timeline from where fan-out stands. */
  private readonly turns = new SerialQueues();
  /** Every timeline's follows, as of where fan-out stands. */
  private followers: FollowerIndex;
  /** The follower index as the stores' snapshots keep it. */
  private readonly followerSnapshots: FollowerIndexSnapshots;
  private followersRestored = false;
  /** Planning asks content through the service client (and graph when replaying a dead letter). */
  private readonly lookups: PlanLookups;
  /** Each timeline partition as a delivery target. */
  private readonly timelines: DeliveryTarget[];
  private readonly retry: FanoutRetryPolicy;
  /** Aborts a read of the log for the follower index when the module stops. */
  private readonly stopped = new AbortController();
  /** How long the last batch's newest event had waited in the log when it was delivered, in seconds. */
  private lastBatchWaited = 0;
  /** Takes fan-out's lag out of `/metrics` when it stops. */
  private unscrape?: () => void;

  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) groups: FeedGroups,
    @Inject(STORE_FACTORY) private readonly stores: StoreFactory,
    private readonly worker: FanoutJobWorker,
    @Optional() @Inject(FANOUT_RETRY_POLICY) retry?: FanoutRetryPolicy,
    @Optional() @Inject(FANOUT_CLUSTER) private readonly cluster?: FanoutCluster,
    @Optional() @Inject(FANOUT_JOB_SETTINGS) private readonly jobSettings: FanoutJobSettings = defaultJobSettings,
    @Optional() @Inject(TIMELINE_PARTITIONING) private readonly partitioning: TimelinePartitioning = new TimelinePartitioning(),
  ) {
    this.followers = new FollowerIndex((follower) => groups.isTimeline(follower));
    this.followerSnapshots = new FollowerIndexSnapshots(
      () => this.followers,
      (index) => (this.followers = index),
      groups.fingerprint,
    );
    this.lookups = servicePlanLookups(client, groups);
    this.timelines = this.partitioning.all.map((partition) => serviceDeliveryTarget(client, this.partitioning.routeTo(partition)));
    this.positions = this.partitioning.all.map(() => 0);
    this.retry = retry ?? defaultRetryPolicy;
  }

  /**
   * Alone with the timelines it delivers to (the standalone, its timelines in one piece),
   * planning begins at module init, beside the projections of content and graph, so that a
   * start's replay reads the log once for all three (the file log paces them to each other
   * and decodes each record once) rather than fan-out replaying it again after them. Until
   * timeline has opened its store, fan-out waits for it as at any start.
   */
  onModuleInit(): void {
    if (this.plansAtInit) this.startPlanning();
  }

  /** Partitioned timelines are taken at bootstrap: fan-out waits for that there. */
  private get plansAtInit(): boolean {
    return !this.cluster && !this.partitioning.partitioned;
  }

  onApplicationBootstrap(): void {
    this.unscrape = scrapeSources.fanoutLag.add(() => this.lag());
    if (!this.cluster) {
      if (!this.plansAtInit) this.startPlanning();
      return;
    }
    this.cluster.election.campaign({
      elected: () => this.changeRole(async () => this.startPlanning()),
      deposed: () => this.changeRole(() => this.stopPlanning('the planner lease is lost')),
    });
  }

  async onModuleDestroy(): Promise<void> {
    this.unscrape?.();
    this.stopping = true;
    this.stopped.abort();
    await this.roleChanges;
    await this.stopPlanning();
    // Given up at once, so that another process plans without waiting for the lease to run out.
    await this.cluster?.election.stop();
  }

  /**
   * The planner answers for itself. A process that only works jobs answers for fan-out as a
   * whole: ready once a planner has caught up with the log, and at timeline's position,
   * which only the planner moves and which is where it stands.
   */
  async status(): Promise<ServiceStatus> {
    // The log's head, read before the position: once the position reaches it, every event
    // appended before this status was asked for is delivered (the other services' positions
    // do not say so: they may stand together behind the head). A log that does not answer
    // leaves it out rather than fail the status.
    const logHead = await this.log.headPosition().then(
      (head) => ({ logHead: head }),
      (error: unknown) => {
        this.logger.warn(`status without the log's head: reading it failed: ${String(error)}`);
        return {};
      },
    );
    if (!this.cluster) return { service: 'fanout', ready: this.caughtUp, position: this.delivered, counters: { ...logHead, deadLettered: this.deadLettered.size } };
    const jobs = { ...this.worker.counters(), jobsPublished: this.jobsPublished, jobsWithdrawn: this.jobsWithdrawn };
    if (this.term) return { service: 'fanout', ready: this.caughtUp, position: this.delivered, counters: { ...logHead, planner: 1, deadLettered: this.deadLettered.size, ...jobs } };
    const [planner, timeline] = await Promise.all([this.cluster.election.planner(), this.client.request(subjects.timeline.status, {})]);
    return { service: 'fanout', ready: planner?.caughtUp === true, position: timeline.position, counters: { ...logHead, planner: 0, ...jobs } };
  }

  /**
   * How far fan-out is behind the log, for `/metrics`: the positions between the log head
   * and what it delivered, and how long the last delivered event had waited (0 once caught
   * up). Only the planner follows the log; any other process says 0.
   */
  private async lag(): Promise<FanoutLag> {
    if (!this.term) return { events: 0, seconds: 0 };
    const events = Math.max(0, (await this.log.headPosition()) - this.delivered);
    return { events, seconds: events === 0 ? 0 : this.lastBatchWaited };
  }

  private changeRole(change: () => Promise<void>): void {
    this.roleChanges = this.roleChanges.then(change).catch((error: unknown) => this.logger.error(`changing role failed: ${String(error)}`));
  }

  private startPlanning(): void {
    if (this.term || this.stopping) return;
    const term: PlanningTerm = { run: randomUUID(), rewinds: 0, withdrawals: 0, ended: new AbortController() };
    this.term = term;
    if (this.cluster) {
      this.logger.log('planning fan-out: this process holds the planner lease');
      void this.cluster.plannerRequests.serve(REPLAY_DEAD_LETTERS, () => this.replayHere()).then(
        (serving) => {
          if (this.term === term) this.servingPlannerRequests = serving;
          else serving.stop();
        },
        (error: unknown) => this.logger.error(`cannot answer for the planner: ${String(error)}`),
      );
    }
    // Not awaited: fan-out follows the log for as long as it plans.
    void this.startFromTimeline(term);
    const watch = setInterval(() => void this.watchTimeline(term), TIMELINE_WATCH_MS);
    watch.unref();
    this.planningSignal().addEventListener('abort', () => clearInterval(watch), { once: true });
  }

  /**
   * A timeline process that restarted empty (memory stores) stands behind fan-out, which
   * learns it from the next delivery it refuses. With no write coming, the partition would
   * stay empty while every service reports ready: so a caught-up planner asks the partitions
   * where they stand, between batches, and replays to one found behind.
   */
  private async watchTimeline(term: PlanningTerm): Promise<void> {
    if (!this.plans(term) || !this.caughtUp || this.rewinding || this.watchingTimeline) return;
    this.watchingTimeline = true;
    try {
      await this.turns.run('timeline', async () => {
        if (!this.plans(term) || this.rewinding) return;
        const positions = await Promise.all(this.partitioning.all.map(async (partition) => (await this.client.request(subjects.timeline.status, {}, this.partitioning.routeTo(partition))).position));
        const lowest = Math.min(...positions);
        if (lowest >= this.delivered) return;
        this.positions = positions;
        this.rewind(lowest, term);
      });
    } catch {
      // A partition that does not answer now is looked at again, or found by the next delivery.
    } finally {
      this.watchingTimeline = false;
    }
  }

  /** Stops following the log; the batch in hand ends at its next step. Timeline stays where it got to. */
  private async stopPlanning(why?: string): Promise<void> {
    const term = this.term;
    if (!term) return;
    this.term = undefined;
    term.ended.abort();
    this.servingPlannerRequests?.stop();
    this.servingPlannerRequests = undefined;
    this.caughtUp = false;
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.stop();
    if (why) this.logger.warn(`stopped planning fan-out at position ${this.delivered}: ${why}`);
  }

  /** Whether `term` is still this process's spell as planner. */
  private plans(term: PlanningTerm): boolean {
    return this.term === term && !this.stopping;
  }

  /** Aborts when the module stops, or this spell as planner ends. */
  private planningSignal(): AbortSignal {
    return this.term ? AbortSignal.any([this.stopped.signal, this.term.ended.signal]) : this.stopped.signal;
  }

  /** The dead letters not replayed yet, oldest first. */
  async deadLetters(): Promise<DeadLetterList> {
    return { items: openDeadLetters(await this.log.readStream(DEAD_LETTER_STREAM)) };
  }

  /**
   * Delivers every open dead letter again, as the log stands now, between two batches. One
   * that fails again stays a dead letter; the others are marked replayed in the log. Only the
   * planner moves timeline: another process asks it.
   */
  async replayDeadLetters(): Promise<DeadLetterReplay> {
    if (this.cluster && !this.term) return (await this.cluster.plannerRequests.ask(REPLAY_DEAD_LETTERS, ASK_PLANNER_TIMEOUT_MS)) as DeadLetterReplay;
    return this.replayHere();
  }

  /** The reader's last hiding or showing of `id`, as its stream of the log holds them. */
  private async lastHiding(reader: FeedId, id: string): Promise<FeedEvent | undefined> {
    let last: FeedEvent | undefined;
    for (const { event } of decodeFeedEvents(await this.log.readStream(hiddenStream(reader)))) {
      if ((event.type === 'ActivityHidden' || event.type === 'ActivityShown') && event.data.id === id) last = event;
    }
    return last;
  }

  private replayHere(): Promise<DeadLetterReplay> {
    return this.turns.run('timeline', async () => {
      let replayed = 0;
      for (const letter of (await this.deadLetters()).items) {
        try {
          const event = (await this.log.readStream(letter.stream))[letter.revision];
          if (!event || event.position !== letter.position) throw new Error(`the log holds no event at position ${letter.position}`);
          // A batch event (an import) is replanned item by item.
          await this.followerIndexAt(this.delivered);
          const head = await this.log.headPosition();
          const deliveries: TimelineDelivery[] = [];
          for (const decoded of decodeFeedEvents([event])) deliveries.push(...(await replanAsOfNow(decoded, head, this.followers, this.lookups, (reader, id) => this.lastHiding(reader, id))));
          // One reader's letter (timeline delivered the event to every other reader) is replayed for that reader alone.
          const replaying = letter.reader ? (deliveriesByReader(deliveries).get(letter.reader) ?? []) : deliveries;
          await this.send(replaying, this.delivered);
          await this.appendDeadLetterEvent({ type: 'DeadLetterReplayed', data: { position: letter.position, ...(letter.reader && { reader: letter.reader }), time: new Date().toISOString() } });
          if (!letter.reader) this.deadLettered.delete(letter.position);
          replayed++;
          this.logger.log(`replayed the dead letter at position ${letter.position} (${letter.type}${letter.reader ? ` for ${letter.reader}` : ''})`);
        } catch (error) {
          this.logger.error(`the dead letter at position ${letter.position}${letter.reader ? ` for ${letter.reader}` : ''} failed again: ${String(error)}`);
        }
      }
      const { items } = await this.deadLetters();
      return { replayed, failed: items.length, items };
    });
  }

  private async startFromTimeline(term: PlanningTerm): Promise<void> {
    for (let attempt = 1; this.plans(term); attempt++) {
      try {
        for (const letter of (await this.deadLetters()).items) if (!letter.reader) this.deadLettered.add(letter.position);
        const positions = await Promise.all(this.partitioning.all.map(async (partition) => (await this.client.request(subjects.timeline.status, {}, this.partitioning.routeTo(partition))).position));
        const from = Math.min(...positions);
        await this.restoreFollowerIndex(from);
        await this.turns.run('timeline', () => this.followerIndexAt(from));
        this.positions = positions;
        if (this.plans(term)) this.followLogFrom(from, term);
        return;
      } catch (error) {
        if (!this.plans(term)) return;
        if (attempt % 10 === 1) this.logger.warn(`waiting for timeline: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /**
   * Restores the follower index from the newest snapshot at or before where timeline stands
   * (one past it would have to be rebuilt from the start of the log), once.
   */
  private async restoreFollowerIndex(timelinePosition: number): Promise<void> {
    if (this.followersRestored) return;
    await this.stores.restoreAndKeep(this.followerSnapshots, { atMost: timelinePosition });
    this.followersRestored = true;
  }

  private followLogFrom(position: number, term: PlanningTerm): void {
    this.delivered = position;
    this.caughtUp = false;
    const subscription = this.log.subscribeToAll({
      from: position,
      catchUpBatch: CATCH_UP_BATCH,
      // Beside content's and graph's projections at a standalone's start (see onModuleInit).
      catchUpTogether: true,
      onEvents: (events) => this.turns.run('timeline', () => this.fanOut(events)),
      onError: (error, attempt) => {
        if (error instanceof TimelineMovedError) return this.rewind(error.position, term);
        if (!(error instanceof FanoutStoppingError)) this.logger.error(`fan-out batch, or its read of the log, failed (attempt ${attempt}): ${String(error)}`);
      },
    });
    this.subscription = subscription;
    void subscription.caughtUp.then(() => {
      if (this.subscription === subscription) {
        this.caughtUp = true;
        this.logger.log(`caught up at position ${this.delivered}`);
        void this.cluster?.election.report(true).catch(() => undefined);
      }
    });
  }

  private rewind(position: number, term: PlanningTerm): void {
    if (this.rewinding || !this.plans(term)) return;
    this.rewinding = true;
    term.rewinds++;
    const behind = this.partitioning.partitioned ? ` (partitions at ${this.positions.join(', ')})` : '';
    this.logger.warn(`timeline stands at ${position}${behind}, fan-out at ${this.delivered}: replaying from ${position}`);
    // The other processes say fan-out is not ready until it has caught up again.
    void this.cluster?.election.report(false).catch(() => undefined);
    const previous = this.subscription;
    this.subscription = undefined;
    setImmediate(() => {
      void previous?.stop().then(() => {
        this.rewinding = false;
        if (this.plans(term)) this.followLogFrom(position, term);
      });
    });
  }

  /**
   * Brings the follower index to `position`: forward by reading the log's follows from where
   * it stands, or, where fan-out rewinds behind it, anew from the start of the log.
   */
  private async followerIndexAt(position: number): Promise<void> {
    if (this.followers.position === position) return;
    if (this.followers.position > position) this.followers = new FollowerIndex(this.followers.keeps);
    const started = performance.now();
    const from = this.followers.position;
    const signal = this.planningSignal();
    await advanceFromLog(this.log, this.followers, position, signal);
    if (signal.aborted) throw new FanoutStoppingError('fan-out stopped planning');
    const ms = Math.round(performance.now() - started);
    this.logger.log(`follower index read from the log between positions ${from} and ${position} in ${ms} ms: ${this.followers.edges} follow edges`);
  }

  private async fanOut(events: readonly RecordedEvent[]): Promise<void> {
    await this.fanOutBatch(events);
    this.lastBatchWaited = Math.max(0, (Date.now() - Date.parse(events[events.length - 1]!.recordedAt)) / 1000);
  }

  private async fanOutBatch(events: readonly RecordedEvent[]): Promise<void> {
    await this.followerIndexAt(this.delivered);
    if ((await this.withRetries(() => this.deliverEvents(events))).ok) return;
    // The batch keeps failing: one event at a time, so that only what fails alone stops.
    for (const event of events) {
      for (;;) {
        const outcome = await this.withRetries(() => this.deliverEvents([event]));
        if (outcome.ok) break;
        if (!isTransientFailure(outcome.error) && (await this.servicesAnswer())) {
          await this.deadLetter(event, outcome.error);
          break;
        }
        this.logger.warn(`waiting for the services before retrying position ${event.position}: ${describe(outcome.error)}`);
        await this.pause(this.retry.firstBackoffMs * 2 ** this.retry.attempts);
      }
    }
  }

  /**
   * Plans and sends the events' deliveries; timeline, and then the follower index, stand at
   * the last one's position. In cluster mode the batch goes in segments, each large delivery
   * as jobs in one of its own; a retry resumes after the segments already delivered.
   */
  private async deliverEvents(events: readonly RecordedEvent[]): Promise<void> {
    this.assertNoPartitionBehind();
    const rest = events[0]!.position > this.delivered ? events : events.filter((event) => event.position > this.delivered);
    if (rest.length === 0) return;
    const last = rest[rest.length - 1]!.position;
    for (const cut of cutAtPartitionPositions(decodeFeedEvents(rest), this.delivered, last, this.positions)) {
      const segments: FanOutSegment[] = this.cluster
        ? segmentAroundLargeFanOuts(cut.events, cut.to, (feed) => this.followers.followerCount(feed), this.jobSettings.minReaders)
        : [cut];
      for (const segment of segments) await this.deliverSegment(segment);
    }
  }

  private async deliverSegment({ events, to }: FanOutSegment): Promise<void> {
    const deliveries = await planDeliveries(events, this.followers, this.lookupsFor(this.partitionsBehind(to))).catch((error: unknown) => {
      throw new Error(`planning failed: ${describe(error)}`, { cause: error });
    });
    const [only] = deliveries;
    // Shared out only when another process waits for work: on its own the planner delivers faster itself.
    const asJobs =
      this.cluster &&
      events.length === 1 &&
      deliveries.length === 1 &&
      isLargeDelivery(only!, this.jobSettings.minReaders) &&
      Date.now() >= this.jobsPausedUntil &&
      (await this.idleWorkers()) > 1;
    const delivering = asJobs ? this.deliverAsJobs(only as ReadersDelivery, events[0]!.position, to) : this.send(deliveries, to);
    await delivering.catch((error: unknown) => {
      if (error instanceof TimelineMovedError || error instanceof FanoutStoppingError) throw error;
      throw new Error(`delivering to ${subjects.timeline.deliver} failed: ${describe(error)}`, { cause: error });
    });
    this.followers.advance(events, to);
  }

  /**
   * Publishes a large delivery as jobs, each to one partition and fenced where that partition
   * stands (just before its event), waits until every job of the event is done, by whichever
   * process, then moves every partition to `to`: from then on a late or repeated job of it is
   * refused.
   */
  private async deliverAsJobs(delivery: ReadersDelivery, position: number, to: number): Promise<void> {
    const term = this.term;
    if (!term || !this.plans(term)) throw new FanoutStoppingError('fan-out stopped planning');
    const parts = this.byPartition([delivery]);
    const jobs = this.partitionsBehind(to).flatMap((partition) => parts.get(partition)?.flatMap((part) => deliveryJobs(part as ReadersDelivery, this.positions[partition]!)) ?? []);
    let done: boolean;
    try {
      await this.cluster!.jobs.publish(position, jobs, `${term.run}.${term.rewinds}.${term.withdrawals}`);
      this.jobsPublished += jobs.length;
      done = await this.cluster!.jobs.untilDone(position, { stallMs: this.jobSettings.stallMs, signal: this.planningSignal() });
    } catch (error) {
      if (error instanceof FanoutStoppingError) throw error;
      if (!(error instanceof JobsStalledError)) {
        // The job queue failed (JetStream refused a job, or its API did not answer). Jobs only
        // share the work out: the planner delivers the event itself, as the batch's own retry
        // would, rather than count it a failure of the event and dead-letter it in the end.
        // Jobs published before the failure are fenced where their partitions stood: once the
        // planner has moved them past the event, they are refused.
        this.pauseJobs(`the job queue failed (${describe(error)}): delivers the event here`);
        await this.send([delivery], to);
        return;
      }
      // Jobs that no worker gets done. After a NATS server's restart a job can stay in the
      // queue without its consumer ever handing it out again (and a retry would only wait for
      // it anew, its republished twin being a duplicate): the planner takes the event's jobs
      // back and delivers it itself. What a job applied before is delivered again, which a
      // delivery allows; a failure is the batch's, retried and dead-lettered like any other.
      // Only while the lease is still this process's: a deposed planner that did not know it
      // yet would take back its successor's jobs, which would then count as done. When the
      // lease's store or the queue does not answer, the jobs stay where they are: the
      // planner's own delivery moves the partitions past them, and they are refused.
      if (!this.plans(term)) throw new FanoutStoppingError('fan-out stopped planning');
      const holds = await this.cluster!.election.holds().catch(() => undefined);
      if (holds === false) throw new FanoutStoppingError('fan-out stopped planning');
      term.withdrawals++;
      const withdrawn = holds ? await this.cluster!.jobs.withdraw(position).catch(() => 0) : 0;
      // What kept one event's jobs from being handed out may keep the next ones too (after a
      // NATS server's restart, every job was seen to stall, one after another): a while
      // without jobs costs only fan-out's share of other processes' cores.
      this.pauseJobs(`${error.message}: took ${withdrawn} back, and delivers the event here`);
      this.jobsWithdrawn += withdrawn;
      await this.send([delivery], to);
      return;
    }
    if (!done) throw new FanoutStoppingError('fan-out stopped planning');
    await this.send([], to);
  }

  /** The fan-out processes waiting for jobs; none when the job queue does not answer, so that the planner delivers itself. */
  private async idleWorkers(): Promise<number> {
    try {
      return await this.cluster!.jobs.idleWorkers();
    } catch (error) {
      this.pauseJobs(`the job queue does not answer (${describe(error)}): delivers the event here`);
      return 0;
    }
  }

  /** The planner delivers every event itself for a while, saying why (`what`). */
  private pauseJobs(what: string): void {
    const pauseMs = JOBS_PAUSE_STALLS * this.jobSettings.stallMs;
    this.jobsPausedUntil = Date.now() + pauseMs;
    this.logger.warn(`${what}, and every event for the next ${Math.round(pauseMs / 1000)} s`);
  }

  /**
   * Sends each partition short of `position` its part of `deliveries`, in chunks from where
   * it stands; the last chunk moves it to `position` (an empty part too). Partitions answer
   * at once, each on its own; one that stands elsewhere than fan-out thought refuses, and
   * fan-out replays from the lowest position any partition stands at.
   */
  private async send(deliveries: readonly TimelineDelivery[], position: number): Promise<void> {
    const parts = this.byPartition(deliveries);
    // A dead letter replayed between batches goes to every partition where it stands, moving none.
    const inPlace = position === this.delivered;
    if (!inPlace) this.assertNoPartitionBehind();
    const sent = await Promise.allSettled(
      (inPlace ? this.partitioning.all : this.partitionsBehind(position)).map(async (partition) => {
        const from = this.positions[partition]!;
        const target = this.timelines[partition]!;
        const reply = await deliverInOrder(target, chunkDeliveries(parts.get(partition) ?? [], target.requestBudgetBytes), from, inPlace ? from : position);
        this.positions[partition] = reply.position;
        return reply;
      }),
    );
    const failed = sent.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const lowest = Math.min(...this.positions);
    if (sent.some((outcome) => outcome.status === 'fulfilled' && !outcome.value.applied)) throw new TimelineMovedError(lowest);
    this.delivered = lowest;
  }

  /**
   * Fails with {@link TimelineMovedError} when a partition answered a position behind where
   * fan-out stands (to a dead letter's replay, say, which does not rewind): moving it on from
   * there would skip what lies between, so fan-out replays from it first.
   */
  private assertNoPartitionBehind(): void {
    const lowest = Math.min(...this.positions);
    if (lowest < this.delivered) throw new TimelineMovedError(lowest);
  }

  /** The partitions that do not stand at `position` yet (all of them, or none, but for a partition replayed apart). */
  private partitionsBehind(position: number): number[] {
    return this.partitioning.all.filter((partition) => this.positions[partition]! < position);
  }

  /**
   * Planning's lookups for a segment that goes to `partitions` only (a partition replayed
   * apart): the follows of other partitions' readers are not backfilled, since their
   * deliveries would go nowhere, and a replay asks content only what the partition needs.
   */
  private lookupsFor(partitions: readonly number[]): PlanLookups {
    if (partitions.length === this.partitioning.count) return this.lookups;
    const taking = new Set(partitions);
    return { ...this.lookups, isTimeline: (feed) => this.lookups.isTimeline(feed) && taking.has(this.partitioning.partitionOf(feed)) };
  }

  /** Deliveries by partition; with a single one, all of them to it. */
  private byPartition(deliveries: readonly TimelineDelivery[]): Map<number, TimelineDelivery[]> {
    return this.partitioning.partitioned ? splitDeliveriesByPartition(deliveries, this.partitioning.count) : new Map([[0, [...deliveries]]]);
  }

  /** Runs `attempt` until it succeeds or has failed the policy's number of times, waiting longer each time. */
  private async withRetries(attempt: () => Promise<void>): Promise<Outcome> {
    let error: unknown;
    for (let tries = 1; tries <= this.retry.attempts; tries++) {
      if (this.stopping || !this.term) throw new FanoutStoppingError('fan-out stopped planning');
      try {
        await attempt();
        return { ok: true };
      } catch (failure) {
        if (failure instanceof TimelineMovedError || failure instanceof FanoutStoppingError) throw failure;
        error = failure;
        if (tries < this.retry.attempts) await this.pause(this.retry.firstBackoffMs * 2 ** (tries - 1));
      }
    }
    return { ok: false, error };
  }

  /** Whether timeline, content and graph answer: if one does not, a failure is an outage, not a dead letter. */
  private async servicesAnswer(): Promise<boolean> {
    const statuses = [subjects.timeline.status, subjects.content.status, subjects.graph.status].map((subject) => this.client.request(subject, {}));
    return (await Promise.allSettled(statuses)).every((status) => status.status === 'fulfilled');
  }

  /** Keeps the event as a dead letter in the log, then moves timeline past it. */
  private async deadLetter(event: RecordedEvent, error: unknown): Promise<void> {
    const letter: DeadLetter = {
      position: event.position,
      stream: event.stream,
      revision: event.revision,
      type: event.type,
      reason: describe(error),
      attempts: this.retry.attempts,
      time: new Date().toISOString(),
    };
    await this.appendDeadLetterEvent({ type: 'DeliveryDeadLettered', data: letter });
    await this.send([], event.position);
    // Its follow or unfollow holds in the log (and in graph) all the same.
    this.followers.advance(decodedOrNothing(event), event.position);
    this.deadLettered.add(event.position);
    eventDeadLetters.inc();
    this.logger.error(`dead-lettered ${event.type} at position ${event.position} after ${letter.attempts} attempts: ${letter.reason}`);
  }

  private async appendDeadLetterEvent(event: DeadLetterEvent): Promise<void> {
    await this.log.appendToStream(DEAD_LETTER_STREAM, [deadLetterEvents.encode(event)]);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/** The event decoded, or nothing if it does not decode (which may be why it is a dead letter). */
function decodedOrNothing(event: RecordedEvent): PositionedEvent[] {
  try {
    return decodeFeedEvents([event]);
  } catch {
    return [];
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

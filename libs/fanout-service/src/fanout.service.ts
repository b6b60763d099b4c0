import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import {
  DEAD_LETTER_STREAM,
  deadLetterEvents,
  decodeFeedEvents,
  FeedmillError,
  openDeadLetters,
  subjects,
  type DeadLetter,
  type DeadLetterEvent,
  type DeadLetterList,
  type DeadLetterReplay,
  type PositionedEvent,
  type ServiceStatus,
  type TimelineDelivery,
} from '@feedmill/contracts';
import { EVENT_LOG, type EventLog, type RecordedEvent, type Subscription } from '@feedmill/event-log';
import { chunkDeliveries, deliverInOrder, FollowerIndex, planDeliveries, replanAsOfNow, type DeliveryTarget, type PlanLookups } from '@feedmill/feed-models';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { SerialQueues, STORE_FACTORY, type StoreFactory } from '@feedmill/runtime';
import { SERVICE_CLIENT, serviceDeliveryTarget, servicePlanLookups, type ServiceClient } from '@feedmill/transport';
import { advanceFromLog } from './follower-index-from-log.js';
import { FollowerIndexSnapshots } from './follower-index-snapshot.js';

/** Thrown from a batch when timeline stands elsewhere than expected; the batch is replayed from there. */
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
 */
@Injectable()
export class FanoutService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('fanout');
  private subscription?: Subscription;
  private delivered = 0;
  private caughtUp = false;
  private stopping = false;
  private rewinding = false;
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
  private readonly timeline: DeliveryTarget;
  private readonly retry: FanoutRetryPolicy;
  /** Aborts a read of the log for the follower index when the module stops. */
  private readonly stopped = new AbortController();

  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) groups: FeedGroups,
    @Inject(STORE_FACTORY) private readonly stores: StoreFactory,
    @Optional() @Inject(FANOUT_RETRY_POLICY) retry?: FanoutRetryPolicy,
  ) {
    this.followers = new FollowerIndex((follower) => groups.isTimeline(follower));
    this.followerSnapshots = new FollowerIndexSnapshots(
      () => this.followers,
      (index) => (this.followers = index),
      groups.fingerprint,
    );
    this.lookups = servicePlanLookups(client, groups);
    this.timeline = serviceDeliveryTarget(client);
    this.retry = retry ?? defaultRetryPolicy;
  }

  onApplicationBootstrap(): void {
    // Not awaited: fan-out follows the log for as long as the process runs.
    void this.startFromTimeline();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    this.stopped.abort();
    await this.subscription?.stop();
  }

  status(): ServiceStatus {
    return { service: 'fanout', ready: this.caughtUp, position: this.delivered, counters: { deadLettered: this.deadLettered.size } };
  }

  /** The dead letters not replayed yet, oldest first. */
  async deadLetters(): Promise<DeadLetterList> {
    return { items: openDeadLetters(await this.log.readStream(DEAD_LETTER_STREAM)) };
  }

  /**
   * Delivers every open dead letter again, as the log stands now, between two batches. One
   * that fails again stays a dead letter; the others are marked replayed in the log.
   */
  replayDeadLetters(): Promise<DeadLetterReplay> {
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
          for (const decoded of decodeFeedEvents([event])) deliveries.push(...(await replanAsOfNow(decoded, head, this.followers, this.lookups)));
          await this.send(chunkDeliveries(deliveries), this.delivered);
          await this.appendDeadLetterEvent({ type: 'DeadLetterReplayed', data: { position: letter.position, time: new Date().toISOString() } });
          this.deadLettered.delete(letter.position);
          replayed++;
          this.logger.log(`replayed the dead letter at position ${letter.position} (${letter.type})`);
        } catch (error) {
          this.logger.error(`the dead letter at position ${letter.position} failed again: ${String(error)}`);
        }
      }
      const { items } = await this.deadLetters();
      return { replayed, failed: items.length, items };
    });
  }

  private async startFromTimeline(): Promise<void> {
    for (const letter of (await this.deadLetters()).items) this.deadLettered.add(letter.position);
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        const timeline = await this.client.request(subjects.timeline.status, {});
        await this.restoreFollowerIndex(timeline.position);
        await this.turns.run('timeline', () => this.followerIndexAt(timeline.position));
        this.followLogFrom(timeline.position);
        return;
      } catch (error) {
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

  private followLogFrom(position: number): void {
    this.delivered = position;
    this.caughtUp = false;
    const subscription = this.log.subscribeToAll({
      from: position,
      onEvents: (events) => this.turns.run('timeline', () => this.fanOut(events)),
      onError: (error, attempt) => {
        if (error instanceof TimelineMovedError) return this.rewind(error.position);
        if (!(error instanceof FanoutStoppingError)) this.logger.error(`fan-out batch failed (attempt ${attempt}): ${String(error)}`);
      },
    });
    this.subscription = subscription;
    void subscription.caughtUp.then(() => {
      if (this.subscription === subscription) {
        this.caughtUp = true;
        this.logger.log(`caught up at position ${this.delivered}`);
      }
    });
  }

  private rewind(position: number): void {
    if (this.rewinding) return;
    this.rewinding = true;
    this.logger.warn(`timeline stands at ${position}, fan-out at ${this.delivered}: replaying from ${position}`);
    const previous = this.subscription;
    this.subscription = undefined;
    setImmediate(() => {
      void previous?.stop().then(() => {
        this.rewinding = false;
        if (!this.stopping) this.followLogFrom(position);
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
    await advanceFromLog(this.log, this.followers, position, this.stopped.signal);
    if (this.stopping) throw new FanoutStoppingError('fan-out is stopping');
    const ms = Math.round(performance.now() - started);
    this.logger.log(`follower index read from the log between positions ${from} and ${position} in ${ms} ms: ${this.followers.edges} follow edges`);
  }

  private async fanOut(events: readonly RecordedEvent[]): Promise<void> {
    await this.followerIndexAt(this.delivered);
    if ((await this.withRetries(() => this.deliverEvents(events))).ok) return;
    // The batch keeps failing: one event at a time, so that only what fails alone stops.
    for (const event of events) {
      for (;;) {
        const outcome = await this.withRetries(() => this.deliverEvents([event]));
        if (outcome.ok) break;
        if (!isTransient(outcome.error) && (await this.servicesAnswer())) {
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
   * the last one's position.
   */
  private async deliverEvents(events: readonly RecordedEvent[]): Promise<void> {
    const last = events[events.length - 1]!.position;
    const decoded = decodeFeedEvents(events);
    const deliveries = await planDeliveries(decoded, this.followers, this.lookups).catch((error: unknown) => {
      throw new Error(`planning failed: ${describe(error)}`, { cause: error });
    });
    await this.send(chunkDeliveries(deliveries), last).catch((error: unknown) => {
      if (error instanceof TimelineMovedError) throw error;
      throw new Error(`delivering to ${subjects.timeline.deliver} failed: ${describe(error)}`, { cause: error });
    });
    this.followers.advance(decoded, last);
  }

  /** Sends chunks from where fan-out stands; the last one moves timeline to `position`. */
  private async send(chunks: TimelineDelivery[][], position: number): Promise<void> {
    const reply = await deliverInOrder(this.timeline, chunks, this.delivered, position);
    if (!reply.applied) throw new TimelineMovedError(reply.position);
    this.delivered = position;
  }

  /** Runs `attempt` until it succeeds or has failed the policy's number of times, waiting longer each time. */
  private async withRetries(attempt: () => Promise<void>): Promise<Outcome> {
    let error: unknown;
    for (let tries = 1; tries <= this.retry.attempts; tries++) {
      if (this.stopping) throw new FanoutStoppingError('fan-out is stopping');
      try {
        await attempt();
        return { ok: true };
      } catch (failure) {
        if (failure instanceof TimelineMovedError) throw failure;
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
    await this.send([[]], event.position);
    // Its follow or unfollow holds in the log (and in graph) all the same.
    this.followers.advance(decodedOrNothing(event), event.position);
    this.deadLettered.add(event.position);
    this.logger.error(`dead-lettered ${event.type} at position ${event.position} after ${letter.attempts} attempts: ${letter.reason}`);
  }

  private async appendDeadLetterEvent(event: DeadLetterEvent): Promise<void> {
    await this.log.appendToStream(DEAD_LETTER_STREAM, [deadLetterEvents.encode(event)]);
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, ms));
  }
}

/**
 * A failure that says a service is unreachable, timed out or not caught up yet: it passes
 * with time, so it is waited out, never dead-lettered.
 */
function isTransient(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof FeedmillError) return cause.code === 'unavailable' || cause.code === 'not_ready';
  }
  return false;
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

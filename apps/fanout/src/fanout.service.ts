import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { subjects, type DeliverReply, type DeliverRequest, type ServiceStatus } from '@feedmill/contracts';
import { EVENT_LOG, type EventLog, type RecordedEvent, type Subscription } from '@feedmill/event-log';
import { FEED_GROUPS, FeedGroups, SERVICE_CLIENT, type ServiceClient } from '@feedmill/platform';
import { chunkDeliveries } from './delivery-chunks.js';
import { planDeliveries, type PlanLookups } from './delivery-plan.js';
import { servicePlanLookups } from './plan-lookups.js';

/** Thrown from a batch when timeline stands elsewhere than expected; the batch is replayed from there. */
class TimelineMovedError extends Error {
  override readonly name = 'TimelineMovedError';
  constructor(readonly position: number) {
    super(`timeline stands at position ${position}; replaying from there`);
  }
}

/**
 * Follows the log and sends each batch's deliveries ({@link planDeliveries}) to timeline.
 * It starts where timeline says it stands, and timeline moves its position only with the
 * last delivery of each batch (at-least-once, idempotent).
 */
@Injectable()
export class FanoutService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('fanout');
  private subscription?: Subscription;
  private delivered = 0;
  private caughtUp = false;
  private stopping = false;
  private rewinding = false;
  /** Planning asks graph and content through the service client. */
  private readonly lookups: PlanLookups;

  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) groups: FeedGroups,
  ) {
    this.lookups = servicePlanLookups(client, groups);
  }

  onApplicationBootstrap(): void {
    // Not awaited: fan-out follows the log for as long as the process runs.
    void this.startFromTimeline();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopping = true;
    await this.subscription?.stop();
  }

  status(): ServiceStatus {
    return { service: 'fanout', ready: this.caughtUp, position: this.delivered };
  }

  private async startFromTimeline(): Promise<void> {
    for (let attempt = 1; !this.stopping; attempt++) {
      try {
        const timeline = await this.client.request<ServiceStatus>(subjects.timeline.status, {});
        this.followLogFrom(timeline.position);
        return;
      } catch (error) {
        if (attempt % 10 === 1) this.logger.warn(`waiting for timeline: ${String(error)}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  private followLogFrom(position: number): void {
    this.delivered = position;
    this.caughtUp = false;
    const subscription = this.log.subscribeToAll({
      from: position,
      onEvents: (events) => this.fanOut(events),
      onError: (error, attempt) => {
        if (error instanceof TimelineMovedError) return this.rewind(error.position);
        this.logger.error(`fan-out batch failed (attempt ${attempt}): ${String(error)}`);
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

  private async fanOut(events: readonly RecordedEvent[]): Promise<void> {
    const last = events[events.length - 1]!.position;
    const chunks = chunkDeliveries(await planDeliveries(events, this.lookups));
    if (chunks.length === 0) chunks.push([]);
    for (const [index, deliveries] of chunks.entries()) {
      const request: DeliverRequest = { after: this.delivered, position: index === chunks.length - 1 ? last : this.delivered, deliveries };
      const reply = await this.client.request<DeliverReply>(subjects.timeline.deliver, request);
      if (!reply.applied) throw new TimelineMovedError(reply.position);
    }
    this.delivered = last;
  }


}

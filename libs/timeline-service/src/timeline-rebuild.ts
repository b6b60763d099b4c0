import { Logger } from '@nestjs/common';
import { decodeFeedEvents, splitDeliveriesByPartition, TimelinePartitioning, type DeliverReply, type DeliverRequest, type FeedConfig, type RebuildStatus } from '@feedmill/contracts';
import type { EventLog, Subscription } from '@feedmill/event-log';
import { fanOutBatch, FollowerIndex, type DeliveryTarget, type PlanLookups } from '@feedmill/feed-models';
import { FeedGroups } from '@feedmill/config';
import { type StoreFactory } from '@feedmill/runtime';
import { servicePlanLookups, type ServiceClient } from '@feedmill/transport';
import type { TimelineStore } from '@feedmill/stores';

/** What a finished rebuild hands over: the new store of each partition rebuilt, and the config they were built with. */
export interface RebuiltTimelines {
  stores: ReadonlyMap<number, TimelineStore>;
  groups: FeedGroups;
}

/**
 * Rebuilds the timeline projection beside the live one: reads the feed config again, replays
 * the whole log into new stores (planning deliveries as fan-out does, with a follower index
 * of its own that the replay builds as it goes), and once it has caught up hands them over.
 * The live stores serve reads until then; fan-out's next batch is refused by a new store and
 * fan-out goes on from where that store stands.
 *
 * With timelines in partitions it rebuilds those this process holds, one new store each, in
 * one replay whose deliveries are split by partition, all in one generation.
 */
export class TimelineRebuild {
  private readonly logger = new Logger('timeline-rebuild');
  private current: RebuildStatus = { projection: 'timeline', state: 'idle', position: 0, head: 0, events: 0 };
  private subscription?: Subscription;

  constructor(
    private readonly log: EventLog,
    private readonly stores: StoreFactory,
    private readonly client: ServiceClient,
    private readonly loadConfig: () => FeedConfig,
    private readonly handOver: (rebuilt: RebuiltTimelines) => void,
    private readonly partitioning: TimelinePartitioning = new TimelinePartitioning(),
    /** The partitions this process holds now. @defaultValue partition 0 */
    private readonly heldPartitions: () => number[] = () => [0],
  ) {}

  status(): RebuildStatus {
    return { ...this.current };
  }

  async start(): Promise<RebuildStatus> {
    if (this.current.state === 'running') return this.status();
    const groups = new FeedGroups(this.loadConfig());
    // A generation of its own (durable stores keep it in separate collections), never one an
    // earlier rebuild, in this process or another, may have left behind.
    const generation = Date.now();
    const held = this.heldPartitions();
    const stores = new Map<number, TimelineStore>();
    for (const partition of held) {
      const options = { generation, policies: groups.fingerprint, groupModels: groups.timelineModels, notificationGroups: groups.notificationGroups, partition: { index: partition, of: this.partitioning.count } };
      stores.set(partition, await this.stores.timeline((reader) => groups.timelinePolicyOf(reader), options));
    }
    const store = this.partitioning.partitioned ? new PartitionSplit(stores, this.partitioning) : stores.get(0)!;
    const lookups = heldReadersOnly(servicePlanLookups(this.client, groups), this.partitioning, held);
    const followers = new FollowerIndex((follower) => groups.isTimeline(follower));
    this.current = { projection: 'timeline', state: 'running', position: 0, head: await this.log.headPosition(), events: 0 };
    this.logger.log(`rebuilding timelines from the log (${this.current.head} events)`);
    let position = 0;
    const subscription = this.log.subscribeToAll({
      onEvents: async (events) => {
        const last = events[events.length - 1]!.position;
        const reply = await fanOutBatch(decodeFeedEvents(events), followers, lookups, store, position, last);
        if (!reply.applied) throw new Error(`the new timelines stand at ${reply.position}, not at ${position}: not empty`);
        position = last;
        this.current.position = last;
        this.current.events += events.length;
      },
      onError: (error, attempt) => this.logger.error(`rebuild batch, or its read of the log, failed (attempt ${attempt}): ${String(error)}`),
    });
    this.subscription = subscription;
    void subscription.caughtUp
      .then(async () => {
        await subscription.stop();
        await this.stores.activateTimeline(generation);
        this.handOver({ stores, groups });
        this.current.state = 'done';
        this.logger.log(`rebuilt timelines from ${this.current.events} events; reads now use them`);
      })
      .catch((error: unknown) => {
        this.current = { ...this.current, state: 'failed', error: String(error) };
      });
    return this.status();
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }
}

/**
 * New partition stores as one delivery target: each request's deliveries are split by
 * partition, and every store takes its part (an empty one too), so that they move together.
 */
class PartitionSplit implements DeliveryTarget {
  constructor(
    private readonly stores: ReadonlyMap<number, TimelineStore>,
    private readonly partitioning: TimelinePartitioning,
  ) {}

  async deliver(request: DeliverRequest): Promise<DeliverReply> {
    const parts = splitDeliveriesByPartition(request.deliveries, this.partitioning.count);
    for (const [partition, store] of this.stores) {
      const reply = await store.deliver({ ...request, deliveries: parts.get(partition) ?? [] });
      if (!reply.applied) return reply;
    }
    return { applied: true, position: request.position };
  }
}

/** Planning's lookups that backfill only the follows of the readers of `held` partitions: the others' deliveries would go nowhere. */
function heldReadersOnly(lookups: PlanLookups, partitioning: TimelinePartitioning, held: readonly number[]): PlanLookups {
  if (held.length === partitioning.count) return lookups;
  const holding = new Set(held);
  return { ...lookups, isTimeline: (feed) => lookups.isTimeline(feed) && holding.has(partitioning.partitionOf(feed)) };
}

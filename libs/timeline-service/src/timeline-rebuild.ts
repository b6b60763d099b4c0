import { Logger } from '@nestjs/common';
import { decodeFeedEvents, type FeedConfig, type RebuildStatus } from '@feedmill/contracts';
import type { EventLog, Subscription } from '@feedmill/event-log';
import { fanOutBatch, FollowerIndex } from '@feedmill/feed-models';
import { FeedGroups } from '@feedmill/config';
import { type StoreFactory } from '@feedmill/runtime';
import { servicePlanLookups, type ServiceClient } from '@feedmill/transport';
import type { TimelineStore } from '@feedmill/stores';

/** What a finished rebuild hands over: the new store and the config it was built with. */
export interface RebuiltTimelines {
  store: TimelineStore;
  groups: FeedGroups;
}

/**
 * Rebuilds the timeline projection beside the live one: reads the feed config again, replays
 * the whole log into a new store (planning deliveries as fan-out does, with a follower index
 * of its own that the replay builds as it goes), and once it has caught up hands the new
 * store over. The live store serves reads until then; fan-out's next batch is refused by the
 * new store and fan-out goes on from where that store stands.
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
    const store = await this.stores.timeline((reader) => groups.timelinePolicyOf(reader), { generation, policies: groups.fingerprint, groupModels: groups.timelineModels });
    const lookups = servicePlanLookups(this.client, groups);
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
      onError: (error, attempt) => this.logger.error(`rebuild batch failed (attempt ${attempt}): ${String(error)}`),
    });
    this.subscription = subscription;
    void subscription.caughtUp
      .then(async () => {
        await subscription.stop();
        await this.stores.activateTimeline(generation);
        this.handOver({ store, groups });
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

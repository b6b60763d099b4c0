import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { TimelinePartitioning, type FeedConfig } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { SERVICE_CLIENT, SUBJECT_SERVER, type ServiceClient, type SubjectServer } from '@feedmill/transport';
import { memoryStores, STORE_FACTORY, type StoreFactory } from './store-factory.js';

export interface CoreOptions {
  feedConfig: FeedConfig;
  /** Reads the feed config again (a rebuild applies a changed one). @defaultValue returns `feedConfig` */
  reloadFeedConfig?: () => FeedConfig;
  /** The log, for services that append or project. */
  eventLog?: EventLog;
  /** The client to other services, for those that call them. */
  client?: ServiceClient;
  /** @defaultValue memory stores */
  stores?: StoreFactory;
  /** How many partitions timelines are split into (`TIMELINE_PARTITIONS`). @defaultValue 1 */
  timelinePartitions?: number;
  /** Where a service answers subjects it takes on while it runs (timeline partitions). @defaultValue none */
  subjectServer?: SubjectServer;
}

/** Injection token of the {@link TimelinePartitioning} every process of a cluster shares. */
export const TIMELINE_PARTITIONING = Symbol('TimelinePartitioning');

/** Injection token of a function that reads the feed config again. */
export const FEED_CONFIG_LOADER = Symbol('FeedConfigLoader');

/** The shared infrastructure every service module injects: log, client, feed groups. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(options: CoreOptions): DynamicModule {
    const providers = [
      { provide: FEED_GROUPS, useValue: new FeedGroups(options.feedConfig) },
      { provide: FEED_CONFIG_LOADER, useValue: options.reloadFeedConfig ?? (() => options.feedConfig) },
      { provide: EVENT_LOG, useValue: options.eventLog ?? null },
      { provide: SERVICE_CLIENT, useValue: options.client ?? null },
      { provide: STORE_FACTORY, useValue: options.stores ?? memoryStores },
      { provide: TIMELINE_PARTITIONING, useValue: new TimelinePartitioning(options.timelinePartitions) },
      { provide: SUBJECT_SERVER, useValue: options.subjectServer ?? null },
      CoreShutdown,
    ];
    return { module: CoreModule, providers, exports: [FEED_GROUPS, FEED_CONFIG_LOADER, EVENT_LOG, SERVICE_CLIENT, STORE_FACTORY, TIMELINE_PARTITIONING, SUBJECT_SERVER] };
  }
}

/** Closes the client, the log and the stores, after the services stopped using them. */
class CoreShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog | null,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient | null,
    @Inject(STORE_FACTORY) private readonly stores: StoreFactory,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client?.close();
    await this.log?.close();
    await this.stores.close();
  }
}

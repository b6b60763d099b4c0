import { Global, Inject, Logger, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { TimelinePartitioning, type FeedConfig } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups, type RuntimeConfig } from '@feedmill/config';
import { REALTIME_BUS, SERVICE_CLIENT, SUBJECT_SERVER, type RealtimeBus, type ServiceClient, type SubjectServer } from '@feedmill/transport';
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
  /** Where stream events travel from timeline to the gateways that hold streams. @defaultValue none: no streams */
  realtimeBus?: RealtimeBus;
  /** How streams behave. @defaultValue {@link DEFAULT_REALTIME_OPTIONS} */
  realtime?: Partial<RealtimeOptions>;
}

/** How realtime streams behave; the runtime config's `REALTIME_*` keys set them. */
export interface RealtimeOptions {
  /** How long a feed whose last stream closed keeps being followed (tier 2). @defaultValue 300,000 ms */
  graceMs: number;
  /** Events kept per feed for resumes. @defaultValue 256 */
  ringSize: number;
  /** Between heartbeat comments. @defaultValue 15,000 ms */
  heartbeatMs: number;
  /** Entries of the first page a stream reports changes of. @defaultValue 25 */
  pageSize: number;
  /** How long a gateway's watch of a feed lasts unless renewed (renewed three times per lease). @defaultValue 30,000 ms */
  leaseMs: number;
}

export const DEFAULT_REALTIME_OPTIONS: RealtimeOptions = { graceMs: 300_000, ringSize: 256, heartbeatMs: 15_000, pageSize: 25, leaseMs: 30_000 };

/** The realtime options the runtime config sets. */
export function realtimeOptionsOf(
  config: Pick<RuntimeConfig, 'REALTIME_GRACE_SECONDS' | 'REALTIME_RING' | 'REALTIME_HEARTBEAT_SECONDS' | 'REALTIME_PAGE_SIZE' | 'REALTIME_LEASE_SECONDS'>,
): Partial<RealtimeOptions> {
  return {
    leaseMs: config.REALTIME_LEASE_SECONDS * 1000,
    graceMs: config.REALTIME_GRACE_SECONDS * 1000,
    ringSize: config.REALTIME_RING,
    heartbeatMs: config.REALTIME_HEARTBEAT_SECONDS * 1000,
    pageSize: config.REALTIME_PAGE_SIZE,
  };
}

/** Injection token of the {@link RealtimeOptions}. */
export const REALTIME_OPTIONS = Symbol('RealtimeOptions');

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
      { provide: REALTIME_BUS, useValue: options.realtimeBus ?? null },
      { provide: REALTIME_OPTIONS, useValue: { ...DEFAULT_REALTIME_OPTIONS, ...options.realtime } },
      CoreShutdown,
    ];
    return {
      module: CoreModule,
      providers,
      exports: [FEED_GROUPS, FEED_CONFIG_LOADER, EVENT_LOG, SERVICE_CLIENT, STORE_FACTORY, TIMELINE_PARTITIONING, SUBJECT_SERVER, REALTIME_BUS, REALTIME_OPTIONS],
    };
  }
}

/** Closes the client, the log and the stores, after the services stopped using them. */
class CoreShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog | null,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient | null,
    @Inject(STORE_FACTORY) private readonly stores: StoreFactory,
    @Inject(REALTIME_BUS) private readonly bus: RealtimeBus | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    // Each step runs whatever became of the one before: the stores' last snapshots are
    // written even when NATS is gone. A step that throws would end this hook there (Nest
    // logs the rejection and goes on with other modules' hooks, not with these steps).
    const steps: Array<[string, () => Promise<void> | undefined]> = [
      ['the realtime bus', () => this.bus?.close()],
      ['the service client', () => this.client?.close()],
      ['the log', () => this.log?.close()],
      ['the stores', () => this.stores.close()],
    ];
    for (const [what, close] of steps) {
      try {
        await close();
      } catch (error) {
        new Logger('shutdown').warn(`closing ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }
}

import { Global, Inject, Module, type DynamicModule, type OnApplicationShutdown } from '@nestjs/common';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import type { FeedConfig } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from './config/feed-groups.js';
import { SERVICE_CLIENT, type ServiceClient } from './rpc/service-client.js';

export interface CoreOptions {
  feedConfig: FeedConfig;
  /** The log, for services that append or project. */
  eventLog?: EventLog;
  /** The client to other services, for those that call them. */
  client?: ServiceClient;
}

/** The shared infrastructure every service module injects: log, client, feed groups. */
@Global()
@Module({})
export class CoreModule {
  static forRoot(options: CoreOptions): DynamicModule {
    const providers = [
      { provide: FEED_GROUPS, useValue: new FeedGroups(options.feedConfig) },
      { provide: EVENT_LOG, useValue: options.eventLog ?? null },
      { provide: SERVICE_CLIENT, useValue: options.client ?? null },
      CoreShutdown,
    ];
    return { module: CoreModule, providers, exports: [FEED_GROUPS, EVENT_LOG, SERVICE_CLIENT] };
  }
}

/** Closes the client and then the log, after the services stopped using them. */
class CoreShutdown implements OnApplicationShutdown {
  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog | null,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient | null,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    await this.client?.close();
    await this.log?.close();
  }
}

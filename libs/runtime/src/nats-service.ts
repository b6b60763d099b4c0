import { Logger, type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ServerNats } from '@nestjs/microservices';
import { loadFeedConfig, loadRuntimeConfig } from '@feedmill/config';
import { natsClient, natsRealtimeBus, NatsSubjectServer } from '@feedmill/transport';
import { openEventLog } from './event-log-factory.js';
import { configureLogging } from './logging.js';
import { rootModule } from './root-module.js';
import { realtimeOptionsOf } from './core.module.js';
import { openStores } from './store-factory.js';

export interface NatsServiceOptions {
  /** Also the NATS queue group, so replicas share requests. */
  name: string;
  feature: Type | DynamicModule;
  /** Opens the event log (JetStream unless `LOG=file`). */
  usesLog: boolean;
  /** Gives the service a client to call the others. */
  callsServices: boolean;
  /** Publishes realtime stream events over NATS (timeline). @defaultValue false */
  publishesStreams?: boolean;
}

/** Runs one service as its own process, answering requests over NATS. */
export async function runNatsService(options: NatsServiceOptions): Promise<void> {
  const config = loadRuntimeConfig();
  const logger = configureLogging(config.LOG_LEVEL);
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const eventLog = options.usesLog ? await openEventLog(config, 'jetstream') : undefined;
  const client = options.callsServices ? natsClient(config.NATS_URL) : undefined;
  const stores = await openStores(config);
  const queue = `feedmill-${options.name}`;
  const server = new ServerNats({ servers: [config.NATS_URL], queue });
  const subjectServer = new NatsSubjectServer(server, queue);
  const module = rootModule([options.feature], {
    feedConfig,
    reloadFeedConfig: () => loadFeedConfig(config.FEED_CONFIG),
    eventLog,
    client,
    stores,
    timelinePartitions: config.TIMELINE_PARTITIONS,
    subjectServer,
    ...(options.publishesStreams && { realtimeBus: await natsRealtimeBus(config.NATS_URL), realtime: realtimeOptionsOf(config) }),
  });
  const app = await NestFactory.createMicroservice(module, { strategy: server, logger });
  app.enableShutdownHooks();
  await app.listen();
  subjectServer.listens();
  new Logger(options.name).log(`listening on ${config.NATS_URL}`);
}

import { Logger, type DynamicModule, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { loadFeedConfig, loadRuntimeConfig } from '@feedmill/config';
import { natsClient } from '@feedmill/transport';
import { openEventLog } from './event-log-factory.js';
import { configureLogging } from './logging.js';
import { rootModule } from './root-module.js';
import { openStores } from './store-factory.js';

export interface NatsServiceOptions {
  /** Also the NATS queue group, so replicas share requests. */
  name: string;
  feature: Type | DynamicModule;
  /** Opens the event log (JetStream unless `LOG=file`). */
  usesLog: boolean;
  /** Gives the service a client to call the others. */
  callsServices: boolean;
}

/** Runs one service as its own process, answering requests over NATS. */
export async function runNatsService(options: NatsServiceOptions): Promise<void> {
  const config = loadRuntimeConfig();
  const logger = configureLogging(config.LOG_LEVEL);
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const eventLog = options.usesLog ? await openEventLog(config, 'jetstream') : undefined;
  const client = options.callsServices ? natsClient(config.NATS_URL) : undefined;
  const stores = await openStores(config);
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(rootModule([options.feature], { feedConfig, reloadFeedConfig: () => loadFeedConfig(config.FEED_CONFIG), eventLog, client, stores }), {
    transport: Transport.NATS,
    options: { servers: [config.NATS_URL], queue: `feedmill-${options.name}` },
    logger,
  });
  app.enableShutdownHooks();
  await app.listen();
  new Logger(options.name).log(`listening on ${config.NATS_URL}`);
}

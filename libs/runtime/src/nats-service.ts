import { Logger, type DynamicModule, type INestMicroservice, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadFeedConfig, loadRuntimeConfig } from '@feedmill/config';
import type { ServiceStatus } from '@feedmill/contracts';
import { DrainingNatsServer, natsClient, natsRealtimeBus, NatsSubjectServer } from '@feedmill/transport';
import { scrapeSources } from '@feedmill/observability';
import { openEventLog } from './event-log-factory.js';
import { configureLogging } from './logging.js';
import { rootModule } from './root-module.js';
import { realtimeOptionsOf } from './core.module.js';
import { StatusServer } from './status-server.js';
import { openStores } from './store-factory.js';

/** A service whose status says whether it has caught up with the log. */
export interface ReportsStatus {
  status(): ServiceStatus | Promise<ServiceStatus>;
}

export interface NatsServiceOptions {
  /** Also the NATS queue group, so replicas share requests. */
  name: string;
  feature: Type | DynamicModule;
  /** Opens the event log (JetStream unless `LOG=file`). */
  usesLog: boolean;
  /** Gives the service a client to call the others. */
  callsServices: boolean;
  /** The provider whose status `/readyz` of the status port (`STATUS_PORT`) reports. */
  status: Type<ReportsStatus>;
  /** Publishes realtime stream events over NATS (timeline). @defaultValue false */
  publishesStreams?: boolean;
}

/** Runs one service as its own process, answering requests over NATS. */
export async function runNatsService(options: NatsServiceOptions): Promise<void> {
  const config = loadRuntimeConfig();
  const logger = configureLogging(config.LOG_LEVEL, options.name);
  // Open before the log is replayed, which can take minutes: liveness holds through it, readiness waits for it.
  const started: { app?: INestMicroservice } = {};
  const statusServer =
    config.STATUS_PORT === undefined
      ? undefined
      : await StatusServer.listen(config.STATUS_PORT, async () => (started.app ? started.app.get(options.status, { strict: false }).status() : { service: options.name, ready: false, position: -1 }));
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const eventLog = options.usesLog ? await openEventLog(config, 'jetstream') : undefined;
  const client = options.callsServices ? natsClient(config.NATS_URL) : undefined;
  const stores = await openStores(config);
  const queue = `feedmill-${options.name}`;
  // On close the server drains every subject it answers, then gives the requests it holds up to the grace period to answer.
  const server = new DrainingNatsServer({ servers: [config.NATS_URL], queue, graceMs: config.SHUTDOWN_GRACE_MS });
  const subjectServer = new NatsSubjectServer(server);
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
  await app.listen();
  subjectServer.listens();
  started.app = app;
  reportPositionOnScrape(app.get(options.status, { strict: false }));
  stopOnSignals(app, server, statusServer, new Logger(options.name));
  new Logger(options.name).log(`listening on ${config.NATS_URL}${statusServer ? `, status on port ${statusServer.port}` : ''}`);
}

/** Gives `/metrics` the service's position and readiness, read from its status on each scrape. */
function reportPositionOnScrape(service: ReportsStatus): void {
  scrapeSources.services.add(async () => {
    const { service: name, ready, position } = await service.status();
    return { service: name, ready, position };
  });
}

/**
 * On SIGTERM or SIGINT: readiness goes to 503, the NATS server drains every subject it
 * answers (the controllers' and the timeline partitions') and lets the requests it took
 * finish, up to the grace period (each write is answered only after its append was
 * acknowledged by the log), and only then do the services stop and the log, the stores and
 * the client close. Nest's own shutdown hooks would stop the services first, while requests
 * still arrive.
 */
function stopOnSignals(app: INestMicroservice, server: DrainingNatsServer, statusServer: StatusServer | undefined, logger: Logger): void {
  let stopping = false;
  const stop = async (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.log(`${signal}: stopping`);
    try {
      statusServer?.stopTakingWork();
      await server.close();
      await app.close();
      await statusServer?.close();
      process.exit(0);
    } catch (error) {
      logger.error(`stopping failed: ${String(error)}`);
      process.exit(1);
    }
  };
  for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, (received) => void stop(received));
}

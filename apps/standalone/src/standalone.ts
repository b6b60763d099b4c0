import { NestFactory } from '@nestjs/core';
import type { INestMicroservice, DynamicModule } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ContentModule } from '@feedmill/content-service';
import { FanoutModule, type FanoutRetryPolicy } from '@feedmill/fanout-service';
import { createHttpApp, GatewayModule, httpAppOptions } from '@feedmill/gateway-http';
import { GraphModule } from '@feedmill/graph-service';
import { loadFeedConfig, type RuntimeConfig } from '@feedmill/config';
import { processLogger, openEventLog, openStores, realtimeOptionsOf, rootModule, type StoreFactory } from '@feedmill/runtime';
import { InProcessRealtimeBus, InProcessServer, InProcessServiceClient, LinkedRealtimeBus, type RealtimeBus, InProcessSubjectServer, LinkedServiceClient, type ServiceClient } from '@feedmill/transport';
import { CopyReadingClient, TimelineCopy, TimelineModule, TimelineReplicas, type PartitionOwnership, type ReaderRetryPolicy } from '@feedmill/timeline-service';

/**
 * The embedded default: the four services in one process, calling each other in-process
 * through the same message controllers the cluster serves over NATS, with the file log
 * and memory stores restored from their snapshots and the log's tail at start. HTTP is
 * answered in that process ({@link createStandaloneApp}) or by worker processes in front of
 * it ({@link createServicesApp} and {@link createHttpWorkerApp}, see `http-workers.ts`).
 */
export interface StandaloneOptions {
  /** @defaultValue the stores `config` names */
  stores?: StoreFactory;
  /** @defaultValue fan-out's own */
  fanoutRetry?: FanoutRetryPolicy;
  /** @defaultValue timeline's own */
  readerRetry?: ReaderRetryPolicy;
  /** Which timeline partitions the process holds, when `TIMELINE_PARTITIONS` splits them (tests move them). @defaultValue all of them */
  timelineOwnership?: PartitionOwnership;
}

interface Services {
  module: DynamicModule;
  server: InProcessServer;
  /** The in-process client to the services. */
  client: ServiceClient;
  /** Where timeline publishes stream events, for HTTP workers to receive (see `serveRealtimeLink`). */
  realtimeBus: RealtimeBus;
  /** The copies of the timelines HTTP workers hold, when they hold them (see {@link timelinesCopied}). */
  replicas: TimelineReplicas | undefined;
}

/**
 * Whether HTTP workers hold copies of the timelines to read from (`HTTP_WORKER_READS=copy`):
 * only of memory timelines in one partition, which the services' process can snapshot whole.
 */
export function timelinesCopied(config: RuntimeConfig): boolean {
  return config.HTTP_WORKERS > 0 && config.HTTP_WORKER_READS === 'copy' && config.STORE === 'memory' && config.TIMELINE_PARTITIONS === 1;
}

async function services(config: RuntimeConfig, options: StandaloneOptions, gateway: boolean, replicas?: TimelineReplicas): Promise<Services> {
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const eventLog = await openEventLog(config, 'file');
  const server = new InProcessServer();
  const client = new InProcessServiceClient(server);
  const realtimeBus = new InProcessRealtimeBus();
  const fanout = options.fanoutRetry ? FanoutModule.withRetryPolicy(options.fanoutRetry) : FanoutModule;
  const timeline = options.readerRetry || options.timelineOwnership || replicas ? TimelineModule.configured({ readerRetry: options.readerRetry, ownership: options.timelineOwnership, replicas }) : TimelineModule;
  const module = rootModule([ContentModule, GraphModule, timeline, fanout, ...(gateway ? [GatewayModule] : [])], {
    feedConfig,
    reloadFeedConfig: () => loadFeedConfig(config.FEED_CONFIG),
    eventLog,
    client,
    stores: options.stores ?? (await openStores(config, { fileLog: (config.LOG ?? 'file') === 'file' ? eventLog : undefined })),
    // One process holds every partition; they are only split when TIMELINE_PARTITIONS says so.
    timelinePartitions: config.TIMELINE_PARTITIONS,
    subjectServer: new InProcessSubjectServer(server),
    realtimeBus,
    realtime: realtimeOptionsOf(config),
  });
  return { module, server, client, realtimeBus, replicas };
}

/** The services and HTTP in one process. */
export async function createStandaloneApp(config: RuntimeConfig, options: StandaloneOptions = {}): Promise<NestFastifyApplication> {
  const { module, server } = await services(config, options, true);
  const app = await createHttpApp(module, httpAppOptions(config));
  app.connectMicroservice({ strategy: server });
  server.callControllersOf(app);
  await app.startAllMicroservices();
  return app;
}

/** The services alone, for HTTP workers to call: `client` answers them (see `serveLink`). */
export async function createServicesApp(
  config: RuntimeConfig,
  options: StandaloneOptions = {},
): Promise<{ app: INestMicroservice; client: ServiceClient; realtimeBus: RealtimeBus; replicas: TimelineReplicas | undefined }> {
  const { module, server, client, realtimeBus, replicas } = await services(config, options, false, timelinesCopied(config) ? new TimelineReplicas() : undefined);
  const app = await NestFactory.createMicroservice(module, { strategy: server, logger: processLogger(config.LOG_LEVEL) });
  server.callControllersOf(app);
  return { app, client, realtimeBus, replicas };
}

/** The gateway alone, calling the services of the process that forked this one. */
export async function createHttpWorkerApp(config: RuntimeConfig): Promise<NestFastifyApplication> {
  if (!process.send) throw new Error('an HTTP worker runs as a cluster worker of the standalone, with an IPC channel');
  const link = { send: (message: unknown) => process.send!(message), on: (event: 'message', listener: (message: unknown) => void) => process.on(event, listener) };
  const services = new LinkedServiceClient(link);
  let client: ServiceClient = services;
  if (timelinesCopied(config)) {
    const copy = new TimelineCopy(link, services);
    copy.join();
    client = new CopyReadingClient(services, copy);
  }
  const core = {
    feedConfig: loadFeedConfig(config.FEED_CONFIG),
    client,
    timelinePartitions: config.TIMELINE_PARTITIONS,
    realtimeBus: new LinkedRealtimeBus(link),
    realtime: realtimeOptionsOf(config),
  };
  return createHttpApp(rootModule([GatewayModule], core), httpAppOptions(config));
}

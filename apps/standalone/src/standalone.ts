import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ContentModule } from '@feedmill/content-service';
import { FanoutModule, type FanoutRetryPolicy } from '@feedmill/fanout-service';
import { createHttpApp, GatewayModule } from '@feedmill/gateway-http';
import { GraphModule } from '@feedmill/graph-service';
import { loadFeedConfig, type RuntimeConfig } from '@feedmill/config';
import { openEventLog, openStores, rootModule, type StoreFactory } from '@feedmill/runtime';
import { InProcessServer, InProcessServiceClient } from '@feedmill/transport';
import { TimelineModule } from '@feedmill/timeline-service';

/**
 * The embedded default: gateway and the four services in one process, calling each other
 * in-process through the same message controllers the cluster serves over NATS, with the
 * file log and memory stores restored from their snapshots and the log's tail at start.
 */
export interface StandaloneOptions {
  /** @defaultValue the stores `config` names */
  stores?: StoreFactory;
  /** @defaultValue fan-out's own */
  fanoutRetry?: FanoutRetryPolicy;
}

export async function createStandaloneApp(config: RuntimeConfig, options: StandaloneOptions = {}): Promise<NestFastifyApplication> {
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const eventLog = await openEventLog(config, 'file');
  const server = new InProcessServer();
  const client = new InProcessServiceClient(server);
  const app = await createHttpApp(
    rootModule([ContentModule, GraphModule, TimelineModule, options.fanoutRetry ? FanoutModule.withRetryPolicy(options.fanoutRetry) : FanoutModule, GatewayModule], {
      feedConfig,
      reloadFeedConfig: () => loadFeedConfig(config.FEED_CONFIG),
      eventLog,
      client,
      stores: options.stores ?? (await openStores(config, { fileLog: (config.LOG ?? 'file') === 'file' ? eventLog : undefined })),
    }),
    { bodyLimit: config.BODY_LIMIT, logLevel: config.LOG_LEVEL },
  );
  app.connectMicroservice({ strategy: server });
  await app.startAllMicroservices();
  return app;
}

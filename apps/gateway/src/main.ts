import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadFeedConfig, loadRuntimeConfig } from '@feedmill/config';
import { configureLogging, realtimeOptionsOf, rootModule, runMain } from '@feedmill/runtime';
import { natsClient, natsRealtimeBus } from '@feedmill/transport';
import { createHttpApp, GatewayModule, httpAppOptions } from '@feedmill/gateway-http';

runMain(async () => {
  const config = loadRuntimeConfig();
  configureLogging(config.LOG_LEVEL, 'gateway');
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const core = {
    feedConfig,
    client: natsClient(config.NATS_URL),
    timelinePartitions: config.TIMELINE_PARTITIONS,
    realtimeBus: await natsRealtimeBus(config.NATS_URL),
    realtime: realtimeOptionsOf(config),
  };
  const app = await createHttpApp(rootModule([GatewayModule], core), httpAppOptions(config));
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
  new Logger('gateway').log(`HTTP on port ${config.PORT}, services over ${config.NATS_URL}`);
});

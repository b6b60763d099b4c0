import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadFeedConfig, loadRuntimeConfig } from '@feedmill/config';
import { configureLogging, rootModule, runMain } from '@feedmill/runtime';
import { natsClient } from '@feedmill/transport';
import { createHttpApp, GatewayModule, httpAppOptions } from '@feedmill/gateway-http';

runMain(async () => {
  const config = loadRuntimeConfig();
  configureLogging(config.LOG_LEVEL);
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const app = await createHttpApp(rootModule([GatewayModule], { feedConfig, client: natsClient(config.NATS_URL), timelinePartitions: config.TIMELINE_PARTITIONS }), httpAppOptions(config));
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
  new Logger('gateway').log(`HTTP on port ${config.PORT}, services over ${config.NATS_URL}`);
});

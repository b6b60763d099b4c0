import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadFeedConfig, loadRuntimeConfig } from '@feedmill/config';
import { configureLogging, realtimeOptionsOf, rootModule, runMain, servicesStatus, StatusServer } from '@feedmill/runtime';
import { natsClient, natsRealtimeBus } from '@feedmill/transport';
import { createHttpApp, GatewayModule, httpAppOptions } from '@feedmill/gateway-http';

runMain(async () => {
  const config = loadRuntimeConfig();
  configureLogging(config.LOG_LEVEL, 'gateway', config.REQUEST_IDS);
  const feedConfig = loadFeedConfig(config.FEED_CONFIG);
  const core = {
    feedConfig,
    client: natsClient(config.NATS_URL),
    timelinePartitions: config.TIMELINE_PARTITIONS,
    realtimeBus: await natsRealtimeBus(config.NATS_URL),
    realtime: realtimeOptionsOf(config),
  };
  // `/metrics` is served here alone, never on the public HTTP port; `/readyz` is ready when every service answers and has caught up, as the HTTP port's is.
  const statusServer = config.STATUS_PORT === undefined ? undefined : await StatusServer.listen(config.STATUS_PORT, () => servicesStatus(core.client, 'gateway'));
  const app = await createHttpApp(rootModule([GatewayModule], core), httpAppOptions(config));
  // Nest's shutdown hooks close the HTTP app and end the process; the status port's readiness turns 503 first.
  if (statusServer) for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => statusServer.stopTakingWork());
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
  new Logger('gateway').log(`HTTP on port ${config.PORT}${statusServer ? `, status on port ${statusServer.port}` : ''}, services over ${config.NATS_URL}`);
});

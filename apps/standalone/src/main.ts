import 'reflect-metadata';
import cluster from 'node:cluster';
import { Logger } from '@nestjs/common';
import { loadRuntimeConfig } from '@feedmill/config';
import { configureLogging, reportServicesOnScrape, runMain, servicesStatus, StatusServer } from '@feedmill/runtime';
import { SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { runHttpWorker, runServicesPrimary } from './http-workers.js';
import { createStandaloneApp } from './standalone.js';

runMain(async () => {
  const config = loadRuntimeConfig();
  const httpWorker = config.HTTP_WORKERS > 0 && !cluster.isPrimary;
  configureLogging(config.LOG_LEVEL, httpWorker ? 'standalone-http' : 'standalone');
  if (config.HTTP_WORKERS > 0) return cluster.isPrimary ? runServicesPrimary(config) : runHttpWorker(config);
  // Open before the log is replayed, which can take minutes: liveness holds through it, readiness waits for it.
  const started: { client?: ServiceClient } = {};
  const statusServer = config.STATUS_PORT === undefined ? undefined : await StatusServer.listen(config.STATUS_PORT, async () => (started.client ? servicesStatus(started.client) : { service: 'standalone', ready: false, position: -1 }));
  const app = await createStandaloneApp(config);
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
  started.client = app.get<symbol, ServiceClient>(SERVICE_CLIENT, { strict: false });
  reportServicesOnScrape(started.client);
  new Logger('feedmill').log(`standalone on http://127.0.0.1:${config.PORT}${statusServer ? `, status on port ${statusServer.port}` : ''} (data in ${config.FEEDMILL_DATA_DIR})`);
});

import 'reflect-metadata';
import cluster from 'node:cluster';
import { Logger } from '@nestjs/common';
import { loadRuntimeConfig } from '@feedmill/config';
import { configureLogging, runMain } from '@feedmill/runtime';
import { runHttpWorker, runServicesPrimary } from './http-workers.js';
import { createStandaloneApp } from './standalone.js';

runMain(async () => {
  const config = loadRuntimeConfig();
  configureLogging(config.LOG_LEVEL);
  if (config.HTTP_WORKERS > 0) return cluster.isPrimary ? runServicesPrimary(config) : runHttpWorker(config);
  const app = await createStandaloneApp(config);
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
  new Logger('feedmill').log(`standalone on http://127.0.0.1:${config.PORT} (data in ${config.FEEDMILL_DATA_DIR})`);
});

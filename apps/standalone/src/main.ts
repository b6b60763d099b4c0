import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadRuntimeConfig } from '@feedmill/config';
import { configureLogging, runMain } from '@feedmill/runtime';
import { createStandaloneApp } from './standalone.js';

runMain(async () => {
  const config = loadRuntimeConfig();
  configureLogging(config.LOG_LEVEL);
  const app = await createStandaloneApp(config);
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
  new Logger('feedmill').log(`standalone on http://127.0.0.1:${config.PORT} (data in ${config.FEEDMILL_DATA_DIR})`);
});

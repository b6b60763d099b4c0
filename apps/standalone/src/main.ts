import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { configureLogging, loadRuntimeConfig, runMain } from '@feedmill/platform';
import { createStandaloneApp } from './standalone.js';

runMain(async () => {
  const config = loadRuntimeConfig();
  configureLogging(config.LOG_LEVEL);
  const app = await createStandaloneApp(config);
  await app.listen({ port: config.PORT, host: '0.0.0.0' });
  new Logger('feedmill').log(`standalone on http://127.0.0.1:${config.PORT} (data in ${config.FEEDMILL_DATA_DIR})`);
});

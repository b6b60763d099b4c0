import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadRuntimeConfig } from '@feedmill/platform';
import { createStandaloneApp } from './standalone.js';

const config = loadRuntimeConfig();
const app = await createStandaloneApp(config);
await app.listen({ port: config.PORT, host: '0.0.0.0' });
new Logger('feedmill').log(`standalone on http://127.0.0.1:${config.PORT} (data in ${config.FEEDMILL_DATA_DIR})`);

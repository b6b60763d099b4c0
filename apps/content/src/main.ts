import 'reflect-metadata';
import { runNatsService } from '@feedmill/platform';
import { ContentModule } from './content.module.js';

await runNatsService({ name: 'content', feature: ContentModule, usesLog: true, callsServices: false });

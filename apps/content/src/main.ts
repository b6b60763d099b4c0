import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/platform';
import { ContentModule } from './content.module.js';

runMain(() => runNatsService({ name: 'content', feature: ContentModule, usesLog: true, callsServices: false }));

import 'reflect-metadata';
import { runNatsService } from '@feedmill/platform';
import { TimelineModule } from './timeline.module.js';

await runNatsService({ name: 'timeline', feature: TimelineModule, usesLog: false, callsServices: true });

import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/platform';
import { TimelineModule } from './timeline.module.js';

runMain(() => runNatsService({ name: 'timeline', feature: TimelineModule, usesLog: true, callsServices: true }));

import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/platform';
import { FanoutModule } from './fanout.module.js';

runMain(() => runNatsService({ name: 'fanout', feature: FanoutModule, usesLog: true, callsServices: true }));

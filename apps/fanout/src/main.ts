import 'reflect-metadata';
import { runNatsService } from '@feedmill/platform';
import { FanoutModule } from './fanout.module.js';

await runNatsService({ name: 'fanout', feature: FanoutModule, usesLog: true, callsServices: true });

import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/runtime';
import { FanoutModule } from '@feedmill/fanout-service';

runMain(() => runNatsService({ name: 'fanout', feature: FanoutModule, usesLog: true, callsServices: true }));

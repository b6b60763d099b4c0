import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/platform';
import { GraphModule } from './graph.module.js';

runMain(() => runNatsService({ name: 'graph', feature: GraphModule, usesLog: true, callsServices: false }));

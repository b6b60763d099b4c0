import 'reflect-metadata';
import { runNatsService } from '@feedmill/platform';
import { GraphModule } from './graph.module.js';

await runNatsService({ name: 'graph', feature: GraphModule, usesLog: true, callsServices: false });

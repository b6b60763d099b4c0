import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/runtime';
import { GraphModule, GraphService } from '@feedmill/graph-service';

runMain(() => runNatsService({ name: 'graph', feature: GraphModule, usesLog: true, callsServices: false, status: GraphService }));

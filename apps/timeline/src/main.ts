import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/runtime';
import { TimelineModule } from '@feedmill/timeline-service';

runMain(() => runNatsService({ name: 'timeline', feature: TimelineModule, usesLog: true, callsServices: true }));

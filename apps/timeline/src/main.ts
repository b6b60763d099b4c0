import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/platform';
import { TimelineModule } from '@feedmill/timeline-service';

runMain(() => runNatsService({ name: 'timeline', feature: TimelineModule, usesLog: true, callsServices: true }));

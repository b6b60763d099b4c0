import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/platform';
import { ContentModule } from '@feedmill/content-service';

runMain(() => runNatsService({ name: 'content', feature: ContentModule, usesLog: true, callsServices: false }));

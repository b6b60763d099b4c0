import 'reflect-metadata';
import { runMain, runNatsService } from '@feedmill/runtime';
import { ContentModule, ContentService } from '@feedmill/content-service';

runMain(() => runNatsService({ name: 'content', feature: ContentModule, usesLog: true, callsServices: false, status: ContentService }));

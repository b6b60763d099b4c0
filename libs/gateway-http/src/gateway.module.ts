import { Module } from '@nestjs/common';
import { FeedsHttpController } from './feeds.http.controller.js';
import { RefsHttpController } from './refs.http.controller.js';
import { AdminHttpController } from './admin.http.controller.js';
import { BulkHttpController } from './bulk.http.controller.js';
import { HealthHttpController } from './health.http.controller.js';
import { HotRoutes } from './hot-routes.js';
import { FeedStreams } from './streams/feed-streams.js';
import { ApiDocsHttpController } from './api-docs/api-docs.http.controller.js';
import { ActivityTargets } from './auth/activity-targets.js';
import { FeedAccess } from './auth/feed-access.js';

@Module({ controllers: [FeedsHttpController, RefsHttpController, BulkHttpController, HealthHttpController, AdminHttpController, ApiDocsHttpController], providers: [HotRoutes, FeedStreams, FeedAccess, ActivityTargets] })
export class GatewayModule {}

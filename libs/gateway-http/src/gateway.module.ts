import { Module } from '@nestjs/common';
import { FeedsHttpController } from './feeds.http.controller.js';
import { AdminHttpController } from './admin.http.controller.js';
import { BulkHttpController } from './bulk.http.controller.js';
import { HealthHttpController } from './health.http.controller.js';
import { HotRoutes } from './hot-routes.js';
import { FeedAccess } from './auth/feed-access.js';

@Module({ controllers: [FeedsHttpController, BulkHttpController, HealthHttpController, AdminHttpController], providers: [HotRoutes, FeedAccess] })
export class GatewayModule {}

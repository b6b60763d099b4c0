import { Module } from '@nestjs/common';
import { FeedsHttpController } from './feeds.http.controller.js';
import { HealthHttpController } from './health.http.controller.js';

@Module({ controllers: [FeedsHttpController, HealthHttpController] })
export class GatewayModule {}

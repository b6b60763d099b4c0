import { Module } from '@nestjs/common';
import { FanoutMessageController } from './fanout.message.controller.js';
import { FanoutService } from './fanout.service.js';

@Module({ controllers: [FanoutMessageController], providers: [FanoutService] })
export class FanoutModule {}

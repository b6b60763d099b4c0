import { Module, type DynamicModule } from '@nestjs/common';
import { FanoutMessageController } from './fanout.message.controller.js';
import { FANOUT_RETRY_POLICY, FanoutService, type FanoutRetryPolicy } from './fanout.service.js';

@Module({ controllers: [FanoutMessageController], providers: [FanoutService] })
export class FanoutModule {
  /** Fan-out with its own retry policy (tests shorten it). */
  static withRetryPolicy(retry: FanoutRetryPolicy): DynamicModule {
    return { module: FanoutModule, providers: [{ provide: FANOUT_RETRY_POLICY, useValue: retry }] };
  }
}

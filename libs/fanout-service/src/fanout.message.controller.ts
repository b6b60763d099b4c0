import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern } from '@nestjs/microservices';
import { subjects } from '@feedmill/contracts';
import { RpcErrorFilter, type MessageHandlers } from '@feedmill/transport';
import { FanoutService } from './fanout.service.js';

@Controller()
@UseFilters(RpcErrorFilter)
export class FanoutMessageController implements MessageHandlers<typeof subjects.fanout> {
  constructor(private readonly fanout: FanoutService) {}

  @MessagePattern(subjects.fanout.status)
  status() {
    return this.fanout.status();
  }

  @MessagePattern(subjects.fanout.deadLetters)
  deadLetters() {
    return this.fanout.deadLetters();
  }

  @MessagePattern(subjects.fanout.replayDeadLetters)
  replayDeadLetters() {
    return this.fanout.replayDeadLetters();
  }
}

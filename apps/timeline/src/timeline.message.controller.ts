import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { deliverRequestSchema, readTimelineRequestSchema, subjects } from '@feedmill/contracts';
import { parseInput, RpcErrorFilter } from '@feedmill/platform';
import { TimelineService } from './timeline.service.js';

@Controller()
@UseFilters(RpcErrorFilter)
export class TimelineMessageController {
  constructor(private readonly timeline: TimelineService) {}

  @MessagePattern(subjects.timeline.read)
  read(@Payload() payload: unknown) {
    return this.timeline.read(parseInput(readTimelineRequestSchema, payload));
  }

  @MessagePattern(subjects.timeline.deliver)
  deliver(@Payload() payload: unknown) {
    return this.timeline.deliver(parseInput(deliverRequestSchema, payload));
  }

  @MessagePattern(subjects.timeline.rebuild)
  rebuild() {
    return this.timeline.startRebuild();
  }

  @MessagePattern(subjects.timeline.rebuildStatus)
  rebuildStatus() {
    return this.timeline.rebuildStatus();
  }

  @MessagePattern(subjects.timeline.status)
  status() {
    return this.timeline.status();
  }
}

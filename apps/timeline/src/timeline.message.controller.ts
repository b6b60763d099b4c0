import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { readTimelineRequestSchema, subjects, type DeliverRequest } from '@feedmill/contracts';
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

  /** Sent only by fan-out, which builds it from events already validated at the edge. */
  @MessagePattern(subjects.timeline.deliver)
  deliver(@Payload() payload: DeliverRequest) {
    return this.timeline.deliver(payload);
  }

  @MessagePattern(subjects.timeline.status)
  status() {
    return this.timeline.status();
  }
}

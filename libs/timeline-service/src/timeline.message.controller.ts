import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { subjects } from '@feedmill/contracts';
import { parseRequest, RpcErrorFilter, type MessageHandlers } from '@feedmill/transport';
import { TimelineService } from './timeline.service.js';

@Controller()
@UseFilters(RpcErrorFilter)
export class TimelineMessageController implements MessageHandlers<typeof subjects.timeline> {
  constructor(private readonly timeline: TimelineService) {}

  @MessagePattern(subjects.timeline.read)
  read(@Payload() payload: unknown) {
    return this.timeline.read(parseRequest(subjects.timeline.read, payload));
  }

  @MessagePattern(subjects.timeline.readWritten)
  readWritten(@Payload() payload: unknown) {
    return this.timeline.readWritten(parseRequest(subjects.timeline.readWritten, payload));
  }

  @MessagePattern(subjects.timeline.readGroups)
  readGroups(@Payload() payload: unknown) {
    return this.timeline.readGroups(parseRequest(subjects.timeline.readGroups, payload));
  }

  @MessagePattern(subjects.timeline.mark)
  mark(@Payload() payload: unknown) {
    return this.timeline.mark(parseRequest(subjects.timeline.mark, payload));
  }

  @MessagePattern(subjects.timeline.hide)
  hide(@Payload() payload: unknown) {
    return this.timeline.hide(parseRequest(subjects.timeline.hide, payload));
  }

  @MessagePattern(subjects.timeline.hidden)
  hidden(@Payload() payload: unknown) {
    return this.timeline.hidden(parseRequest(subjects.timeline.hidden, payload));
  }

  @MessagePattern(subjects.timeline.deliver)
  deliver(@Payload() payload: unknown) {
    return this.timeline.deliver(parseRequest(subjects.timeline.deliver, payload));
  }

  @MessagePattern(subjects.timeline.reach)
  reach(@Payload() payload: unknown) {
    const { position, timeoutMs } = parseRequest(subjects.timeline.reach, payload);
    return this.timeline.reach(position, timeoutMs);
  }

  @MessagePattern(subjects.timeline.rebuild)
  rebuild() {
    return this.timeline.startRebuild();
  }

  @MessagePattern(subjects.timeline.rebuildStatus)
  rebuildStatus() {
    return this.timeline.rebuildStatus();
  }

  @MessagePattern(subjects.timeline.watch)
  watch(@Payload() payload: unknown) {
    return this.timeline.watch(parseRequest(subjects.timeline.watch, payload));
  }

  @MessagePattern(subjects.timeline.renewWatches)
  renewWatches(@Payload() payload: unknown) {
    return this.timeline.renewWatches(parseRequest(subjects.timeline.renewWatches, payload));
  }

  @MessagePattern(subjects.timeline.unwatch)
  unwatch(@Payload() payload: unknown) {
    return this.timeline.unwatch(parseRequest(subjects.timeline.unwatch, payload));
  }

  @MessagePattern(subjects.timeline.status)
  status() {
    return this.timeline.status();
  }
}

import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { subjects, type ReplyOf } from '@feedmill/contracts';
import { parseRequest, RpcErrorFilter, type MessageHandlers } from '@feedmill/transport';
import { ContentService } from './content.service.js';

@Controller()
@UseFilters(RpcErrorFilter)
export class ContentMessageController implements MessageHandlers<typeof subjects.content> {
  constructor(private readonly content: ContentService) {}

  @MessagePattern(subjects.content.add)
  add(@Payload() payload: unknown) {
    return this.content.add(parseRequest(subjects.content.add, payload));
  }

  @MessagePattern(subjects.content.addMany)
  addMany(@Payload() payload: unknown) {
    return this.content.addMany(parseRequest(subjects.content.addMany, payload));
  }

  @MessagePattern(subjects.content.remove)
  async remove(@Payload() payload: unknown): Promise<ReplyOf<typeof subjects.content.remove>> {
    await this.content.remove(parseRequest(subjects.content.remove, payload));
    return { removed: true };
  }

  @MessagePattern(subjects.content.erase)
  erase(@Payload() payload: unknown) {
    return this.content.erase(parseRequest(subjects.content.erase, payload));
  }

  @MessagePattern(subjects.content.positions)
  positions(@Payload() payload: unknown) {
    return this.content.positions(parseRequest(subjects.content.positions, payload));
  }

  @MessagePattern(subjects.content.get)
  get(@Payload() payload: unknown) {
    return this.content.get(parseRequest(subjects.content.get, payload));
  }

  @MessagePattern(subjects.content.bump)
  bump(@Payload() payload: unknown) {
    return this.content.bump(parseRequest(subjects.content.bump, payload));
  }

  @MessagePattern(subjects.content.update)
  update(@Payload() payload: unknown) {
    return this.content.update(parseRequest(subjects.content.update, payload));
  }

  @MessagePattern(subjects.content.recent)
  recent(@Payload() payload: unknown) {
    return this.content.recent(parseRequest(subjects.content.recent, payload));
  }

  @MessagePattern(subjects.content.recentEach)
  recentEach(@Payload() payload: unknown) {
    return this.content.recentEach(parseRequest(subjects.content.recentEach, payload));
  }

  @MessagePattern(subjects.content.slice)
  slice(@Payload() payload: unknown) {
    return this.content.slice(parseRequest(subjects.content.slice, payload));
  }

  @MessagePattern(subjects.content.status)
  status() {
    return this.content.status();
  }
}

import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import {
  addActivityRequestSchema,
  bumpActivityRequestSchema,
  getActivitiesRequestSchema,
  recentActivitiesRequestSchema,
  removeActivityRequestSchema,
  subjects,
} from '@feedmill/contracts';
import { parseInput, RpcErrorFilter } from '@feedmill/platform';
import { ContentService } from './content.service.js';

@Controller()
@UseFilters(RpcErrorFilter)
export class ContentMessageController {
  constructor(private readonly content: ContentService) {}

  @MessagePattern(subjects.content.add)
  add(@Payload() payload: unknown) {
    return this.content.add(parseInput(addActivityRequestSchema, payload));
  }

  @MessagePattern(subjects.content.remove)
  async remove(@Payload() payload: unknown) {
    await this.content.remove(parseInput(removeActivityRequestSchema, payload));
    return { removed: true };
  }

  @MessagePattern(subjects.content.get)
  get(@Payload() payload: unknown) {
    return this.content.get(parseInput(getActivitiesRequestSchema, payload));
  }

  @MessagePattern(subjects.content.bump)
  bump(@Payload() payload: unknown) {
    return this.content.bump(parseInput(bumpActivityRequestSchema, payload));
  }

  @MessagePattern(subjects.content.recent)
  recent(@Payload() payload: unknown) {
    return this.content.recent(parseInput(recentActivitiesRequestSchema, payload));
  }

  @MessagePattern(subjects.content.status)
  status() {
    return this.content.status();
  }
}

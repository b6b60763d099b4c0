import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { countsRequestSchema, edgePageRequestSchema, followRequestSchema, subjects } from '@feedmill/contracts';
import { parseInput, RpcErrorFilter } from '@feedmill/platform';
import { GraphService } from './graph.service.js';

@Controller()
@UseFilters(RpcErrorFilter)
export class GraphMessageController {
  constructor(private readonly graph: GraphService) {}

  @MessagePattern(subjects.graph.follow)
  async follow(@Payload() payload: unknown) {
    await this.graph.follow(parseInput(followRequestSchema, payload));
    return { following: true };
  }

  @MessagePattern(subjects.graph.unfollow)
  async unfollow(@Payload() payload: unknown) {
    await this.graph.unfollow(parseInput(followRequestSchema, payload));
    return { following: false };
  }

  @MessagePattern(subjects.graph.followers)
  followers(@Payload() payload: unknown) {
    return this.graph.followers(parseInput(edgePageRequestSchema, payload));
  }

  @MessagePattern(subjects.graph.following)
  following(@Payload() payload: unknown) {
    return this.graph.following(parseInput(edgePageRequestSchema, payload));
  }

  @MessagePattern(subjects.graph.counts)
  counts(@Payload() payload: unknown) {
    return this.graph.counts(parseInput(countsRequestSchema, payload).feed);
  }

  @MessagePattern(subjects.graph.status)
  status() {
    return this.graph.status();
  }
}

import { Controller, UseFilters } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { subjects } from '@feedmill/contracts';
import { parseRequest, RpcErrorFilter, type MessageHandlers } from '@feedmill/transport';
import { GraphService } from './graph.service.js';

@Controller()
@UseFilters(RpcErrorFilter)
export class GraphMessageController implements MessageHandlers<typeof subjects.graph> {
  constructor(private readonly graph: GraphService) {}

  @MessagePattern(subjects.graph.follow)
  async follow(@Payload() payload: unknown) {
    await this.graph.follow(parseRequest(subjects.graph.follow, payload));
    return { following: true };
  }

  @MessagePattern(subjects.graph.followMany)
  async followMany(@Payload() payload: unknown) {
    return { count: await this.graph.followMany(parseRequest(subjects.graph.followMany, payload)) };
  }

  @MessagePattern(subjects.graph.unfollow)
  async unfollow(@Payload() payload: unknown) {
    await this.graph.unfollow(parseRequest(subjects.graph.unfollow, payload));
    return { following: false };
  }

  @MessagePattern(subjects.graph.followers)
  followers(@Payload() payload: unknown) {
    return this.graph.followers(parseRequest(subjects.graph.followers, payload));
  }

  @MessagePattern(subjects.graph.following)
  following(@Payload() payload: unknown) {
    return this.graph.following(parseRequest(subjects.graph.following, payload));
  }

  @MessagePattern(subjects.graph.counts)
  counts(@Payload() payload: unknown) {
    return this.graph.counts(parseRequest(subjects.graph.counts, payload).feed);
  }

  @MessagePattern(subjects.graph.status)
  status() {
    return this.graph.status();
  }
}

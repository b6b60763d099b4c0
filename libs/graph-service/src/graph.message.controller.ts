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
  follow(@Payload() payload: unknown) {
    return this.graph.follow(parseRequest(subjects.graph.follow, payload));
  }

  @MessagePattern(subjects.graph.followMany)
  async followMany(@Payload() payload: unknown) {
    return { count: await this.graph.followMany(parseRequest(subjects.graph.followMany, payload)) };
  }

  @MessagePattern(subjects.graph.unfollow)
  unfollow(@Payload() payload: unknown) {
    return this.graph.unfollow(parseRequest(subjects.graph.unfollow, payload));
  }

  @MessagePattern(subjects.graph.approve)
  approve(@Payload() payload: unknown) {
    return this.graph.approve(parseRequest(subjects.graph.approve, payload));
  }

  @MessagePattern(subjects.graph.reject)
  reject(@Payload() payload: unknown) {
    return this.graph.reject(parseRequest(subjects.graph.reject, payload));
  }

  @MessagePattern(subjects.graph.removeFollower)
  removeFollower(@Payload() payload: unknown) {
    return this.graph.removeFollower(parseRequest(subjects.graph.removeFollower, payload));
  }

  @MessagePattern(subjects.graph.requests)
  requests(@Payload() payload: unknown) {
    return this.graph.requests(parseRequest(subjects.graph.requests, payload));
  }

  @MessagePattern(subjects.graph.settings)
  settings(@Payload() payload: unknown) {
    return this.graph.settings(parseRequest(subjects.graph.settings, payload).feed);
  }

  @MessagePattern(subjects.graph.mayRead)
  async mayRead(@Payload() payload: unknown) {
    const { feed, readers, current } = parseRequest(subjects.graph.mayRead, payload);
    return { allowed: await this.graph.mayRead(feed, readers, current === true) };
  }

  @MessagePattern(subjects.graph.putSettings)
  putSettings(@Payload() payload: unknown) {
    return this.graph.putSettings(parseRequest(subjects.graph.putSettings, payload));
  }

  @MessagePattern(subjects.graph.followers)
  followers(@Payload() payload: unknown) {
    return this.graph.followers(parseRequest(subjects.graph.followers, payload));
  }

  @MessagePattern(subjects.graph.following)
  following(@Payload() payload: unknown) {
    return this.graph.following(parseRequest(subjects.graph.following, payload));
  }

  @MessagePattern(subjects.graph.edgeBounds)
  edgeBounds(@Payload() payload: unknown) {
    return this.graph.edgeBounds(parseRequest(subjects.graph.edgeBounds, payload));
  }

  @MessagePattern(subjects.graph.counts)
  counts(@Payload() payload: unknown) {
    const { feed, atLeast } = parseRequest(subjects.graph.counts, payload);
    return this.graph.counts(feed, atLeast);
  }

  @MessagePattern(subjects.graph.status)
  status() {
    return this.graph.status();
  }
}

import { Controller, Get, HttpCode, Inject, Param, Post, Query, UseFilters } from '@nestjs/common';
import { FeedmillError, subjects, type DeadLetterList, type DeadLetterReplay, type RebuildStatus } from '@feedmill/contracts';
import { SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { HttpErrorFilter } from './http-errors.js';
import { parseNoQuery } from './feed-params.js';
import { RequestCaller } from './auth/authenticate.js';
import { requireAdmin, type Caller } from './auth/caller.js';

/** Operations: rebuilding the timelines after a change to their config, and fan-out's dead letters. */
@Controller('v1/admin')
@UseFilters(HttpErrorFilter)
export class AdminHttpController {
  constructor(@Inject(SERVICE_CLIENT) private readonly client: ServiceClient) {}

  /** 202 with the rebuild's status; the live timelines serve reads until it has caught up. */
  @Post('rebuild/:projection')
  @HttpCode(202)
  start(@RequestCaller() caller: Caller, @Param('projection') projection: string): Promise<RebuildStatus> {
    requireAdmin(caller, 'rebuild projections');
    this.rebuildable(projection);
    return this.client.request(subjects.timeline.rebuild, {});
  }

  @Get('rebuild/:projection')
  status(@RequestCaller() caller: Caller, @Param('projection') projection: string, @Query() query: unknown): Promise<RebuildStatus> {
    requireAdmin(caller, 'see rebuilds');
    this.rebuildable(projection);
    parseNoQuery(query);
    return this.client.request(subjects.timeline.rebuildStatus, {});
  }

  /** The deliveries fan-out gave up on, with their reasons, until they are replayed. */
  @Get('deadletters')
  deadLetters(@RequestCaller() caller: Caller, @Query() query: unknown): Promise<DeadLetterList> {
    requireAdmin(caller, 'see dead letters');
    parseNoQuery(query);
    return this.client.request(subjects.fanout.deadLetters, {});
  }

  /** Delivers every dead letter again as the log now stands; those that fail again stay. */
  @Post('deadletters/replay')
  @HttpCode(200)
  replayDeadLetters(@RequestCaller() caller: Caller): Promise<DeadLetterReplay> {
    requireAdmin(caller, 'replay dead letters');
    return this.client.request(subjects.fanout.replayDeadLetters, {});
  }

  private rebuildable(projection: string): void {
    if (projection !== 'timeline') {
      throw new FeedmillError('not_found', `projection "${projection}" is not rebuilt on demand (content and graph rebuild from the log at start); "timeline" is`, 'projection');
    }
  }
}

import { Controller, Get, HttpCode, Inject, Param, Post, UseFilters } from '@nestjs/common';
import { FeedmillError, subjects, type RebuildStatus } from '@feedmill/contracts';
import { SERVICE_CLIENT, type ServiceClient } from '@feedmill/platform';
import { HttpErrorFilter } from './http-errors.js';

/** Operations on the projections: rebuilding the timelines after a change to their config. */
@Controller('v1/admin')
@UseFilters(HttpErrorFilter)
export class AdminHttpController {
  constructor(@Inject(SERVICE_CLIENT) private readonly client: ServiceClient) {}

  /** 202 with the rebuild's status; the live timelines serve reads until it has caught up. */
  @Post('rebuild/:projection')
  @HttpCode(202)
  start(@Param('projection') projection: string): Promise<RebuildStatus> {
    this.rebuildable(projection);
    return this.client.request<RebuildStatus>(subjects.timeline.rebuild, {});
  }

  @Get('rebuild/:projection')
  status(@Param('projection') projection: string): Promise<RebuildStatus> {
    this.rebuildable(projection);
    return this.client.request<RebuildStatus>(subjects.timeline.rebuildStatus, {});
  }

  private rebuildable(projection: string): void {
    if (projection !== 'timeline') {
      throw new FeedmillError('not_found', `projection "${projection}" is not rebuilt on demand (content and graph rebuild from the log at start); "timeline" is`, 'projection');
    }
  }
}

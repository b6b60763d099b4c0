import { Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import type { EventLog } from '@feedmill/event-log';
import { ProjectionHost, ProjectionWriter, type RevisionedProjection } from '@feedmill/projections';

/**
 * A Nest service that decides on its own projection and appends to the log: the projection
 * catches up before the service answers, and stops with it.
 */
export abstract class ProjectedService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly host: ProjectionHost;
  protected readonly writer: ProjectionWriter;

  protected constructor(log: EventLog, projection: RevisionedProjection) {
    this.host = new ProjectionHost(log, projection, new Logger(projection.name));
    this.writer = new ProjectionWriter(log, projection);
  }

  onApplicationBootstrap(): Promise<void> {
    return this.host.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.host.stop();
  }

  status() {
    return this.host.status();
  }
}

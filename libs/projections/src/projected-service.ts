import type { OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { EventLog } from '@feedmill/event-log';
import { ProjectionHost } from './projection-host.js';
import { ProjectionWriter, type RevisionedProjection } from './projection-writer.js';

/**
 * A service that decides on its own projection and appends to the log: the projection
 * catches up before the service answers, and stops with it.
 */
export abstract class ProjectedService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly host: ProjectionHost;
  protected readonly writer: ProjectionWriter;

  protected constructor(log: EventLog, projection: RevisionedProjection) {
    this.host = new ProjectionHost(log, projection);
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

import { Logger, type OnApplicationBootstrap, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import type { EventLog } from '@feedmill/event-log';
import { ProjectionHost, ProjectionWriter, type RevisionedProjection } from '@feedmill/projections';

/**
 * A Nest service that decides on its own projection and appends to the log: the projection
 * catches up before the service answers, and stops with it. Every module's projection
 * begins at module init and is waited for at bootstrap, so that the services of one process
 * (the standalone's content and graph) catch up together rather than one after the other.
 */
export abstract class ProjectedService implements OnModuleInit, OnApplicationBootstrap, OnModuleDestroy {
  private readonly host: ProjectionHost;
  protected readonly writer: ProjectionWriter;

  protected constructor(log: EventLog, projection: RevisionedProjection) {
    this.host = new ProjectionHost(log, projection, new Logger(projection.name));
    this.writer = new ProjectionWriter(log, projection);
  }

  onModuleInit(): void {
    this.host.begin();
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

import type { EventLog } from '@feedmill/event-log';
import type { Projection } from '@feedmill/stores';
import { runProjection, type RunningProjection } from './projection-runner.js';

/** Where a host reports progress and failures: the application's logger. */
export interface ProjectionLogger {
  log(message: string): void;
  error(message: string): void;
}

/** Starts a service's projection, waits for it to catch up, and reports readiness. */
export class ProjectionHost {
  private running?: RunningProjection;
  private caughtUp = false;

  constructor(
    private readonly log: EventLog,
    private readonly projection: Projection,
    private readonly logger: ProjectionLogger,
  ) {}

  get ready(): boolean {
    return this.caughtUp;
  }

  async start(): Promise<void> {
    const started = Date.now();
    this.running = await runProjection(this.log, this.projection, (error, attempt) =>
      this.logger.error(`projection batch failed (attempt ${attempt}): ${String(error)}`),
    );
    await this.running.caughtUp;
    this.caughtUp = true;
    this.logger.log(`caught up at position ${await this.projection.position()} in ${Date.now() - started} ms`);
  }

  async stop(): Promise<void> {
    await this.running?.stop();
  }

  async status(): Promise<{ service: string; ready: boolean; position: number }> {
    return { service: this.projection.name, ready: this.caughtUp, position: await this.projection.position() };
  }
}

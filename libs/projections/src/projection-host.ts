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
  private running?: Promise<RunningProjection>;
  private began = 0;
  private caughtUp = false;

  constructor(
    private readonly log: EventLog,
    private readonly projection: Projection,
    private readonly logger: ProjectionLogger,
  ) {}

  get ready(): boolean {
    return this.caughtUp;
  }

  /**
   * Starts following the log without waiting for the projection to catch up (once). Hosts
   * begun together catch up side by side, a batch each in turn, so that the log decodes each
   * record once for all of them and its objects die young.
   */
  begin(): void {
    if (this.running) return;
    this.began = Date.now();
    this.running = runProjection(this.log, this.projection, (error, attempt) =>
      this.logger.error(`projection batch, or its read of the log, failed (attempt ${attempt}): ${String(error)}`),
    );
    // Heard by start(); not left unhandled when the application stops before it.
    this.running.catch(() => undefined);
  }

  /** Begins (unless {@link begin} did) and waits until the projection has caught up with the log. */
  async start(): Promise<void> {
    this.begin();
    await (await this.running!).caughtUp;
    this.caughtUp = true;
    this.logger.log(`caught up at position ${await this.projection.position()} in ${Date.now() - this.began} ms`);
  }

  async stop(): Promise<void> {
    await (await this.running?.catch(() => undefined))?.stop();
  }

  async status(): Promise<{ service: string; ready: boolean; position: number }> {
    return { service: this.projection.name, ready: this.caughtUp, position: await this.projection.position() };
  }
}

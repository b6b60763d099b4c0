import type { EventLog, Subscription } from '@feedmill/event-log';
import type { Projection } from '@feedmill/stores';

export interface RunningProjection {
  /** Resolves once the projection has applied everything that was in the log at start. */
  readonly caughtUp: Promise<void>;
  stop(): Promise<void>;
}

/**
 * Feeds a projection from the log, from the position it already holds (0 for a memory
 * store, which is rebuilt at every start). A failed batch is retried, never skipped.
 */
export async function runProjection(
  log: EventLog,
  projection: Projection,
  onError: (error: unknown, attempt: number) => void = () => undefined,
): Promise<RunningProjection> {
  const subscription: Subscription = log.subscribeToAll({
    from: await projection.position(),
    onEvents: (events) => projection.apply(events),
    onError,
    // The services of one process (the standalone's) replay the log side by side.
    catchUpTogether: true,
  });
  return { caughtUp: subscription.caughtUp, stop: () => subscription.stop() };
}

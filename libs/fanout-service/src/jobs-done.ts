import type { FanoutJobQueue } from '@feedmill/fanout-cluster';

/** The jobs of a large delivery stopped getting done: no worker can apply them, or none runs. */
export class JobsStalledError extends Error {
  override readonly name = 'JobsStalledError';
  constructor(
    readonly position: number,
    readonly remaining: number,
    readonly stallMs: number,
  ) {
    super(`${remaining} chunk jobs of the fan-out at position ${position} got no fewer in ${stallMs} ms`);
  }
}

/** First look soon (a small fan-out is done in milliseconds), then less often. */
const FIRST_POLL_MS = 5;
const LONGEST_POLL_MS = 50;

/**
 * Waits until no job of the event at `position` is left in the queue. Resolves true once
 * every job is done, false if `signal` aborts first; fails with {@link JobsStalledError} when
 * the count has not fallen for `stallMs`.
 */
export async function untilJobsDone(queue: Pick<FanoutJobQueue, 'remaining'>, position: number, options: { stallMs: number; signal: AbortSignal }): Promise<boolean> {
  let fewest = Number.POSITIVE_INFINITY;
  let progressAt = Date.now();
  let pollMs = FIRST_POLL_MS;
  while (!options.signal.aborted) {
    const remaining = await queue.remaining(position);
    if (remaining === 0) return true;
    if (remaining < fewest) {
      fewest = remaining;
      progressAt = Date.now();
    } else if (Date.now() - progressAt > options.stallMs) {
      throw new JobsStalledError(position, remaining, options.stallMs);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
    pollMs = Math.min(LONGEST_POLL_MS, pollMs * 2);
  }
  return false;
}

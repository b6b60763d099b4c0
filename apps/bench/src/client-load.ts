import type { HttpLoadResult } from './http-load.js';
import { Latencies } from './latency.js';

/** One call a client makes: what it measures (`post`, `read`, `follow`) and the call itself. */
export interface PlannedCall {
  kind: string;
  run: () => Promise<unknown>;
}

export interface ClientLoadResult extends HttpLoadResult {
  /** The first failure's message, for the report. */
  firstError?: string;
}

/**
 * Drives a system with `clients` concurrent loops in this process, each making one call at
 * a time, as autocannon's connections do over HTTP. Each loop asks `next` for its next
 * call, so one run can mix kinds; latencies are kept per kind. Either runs `amount` calls
 * (or until `next` has none) or for `seconds`.
 */
export async function runClientLoad(options: {
  clients: number;
  next: () => PlannedCall | undefined;
  amount?: number;
  seconds?: number;
  /**
   * At most this many calls per second, spread evenly: a call waits for its slot, so that
   * the rate is the same whatever the system, as long as it keeps up with `clients` in flight.
   * Slots missed while every client waited on the system are dropped, not caught up.
   */
  pace?: number;
  onProgress?: (done: number) => void;
}): Promise<ClientLoadResult> {
  const byKind: Record<string, { ok: number; failed: number; latency: Latencies }> = {};
  const perSecond: Array<Record<string, number>> = [];
  const started = performance.now();
  const deadline = options.amount === undefined ? started + (options.seconds ?? 10) * 1000 : Number.POSITIVE_INFINITY;
  let issued = 0;
  /** When the next paced call may start. */
  let nextSlot = started;
  let done = 0;
  let errors = 0;
  let firstError: string | undefined;

  const client = async () => {
    while (issued < (options.amount ?? Number.POSITIVE_INFINITY) && performance.now() < deadline) {
      let wait = 0;
      if (options.pace !== undefined) {
        const slot = Math.max(nextSlot, performance.now());
        nextSlot = slot + 1000 / options.pace;
        wait = slot - performance.now();
      }
      issued++;
      if (wait > 0) {
        await new Promise((resolve) => setTimeout(resolve, wait));
        if (performance.now() >= deadline) return;
      }
      const call = options.next();
      if (!call) return;
      const stats = (byKind[call.kind] ??= { ok: 0, failed: 0, latency: new Latencies() });
      const t = performance.now();
      try {
        await call.run();
        const now = performance.now();
        stats.ok++;
        stats.latency.recordMs(now - t);
        const bucket = (perSecond[Math.floor((now - started) / 1000)] ??= {});
        bucket[call.kind] = (bucket[call.kind] ?? 0) + 1;
      } catch (error) {
        stats.failed++;
        errors++;
        firstError ??= `${call.kind}: ${(error as Error).message}`;
      }
      if (++done % 500 === 0) options.onProgress?.(done);
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  options.onProgress?.(done);
  const seconds = (performance.now() - started) / 1000;
  for (let i = 0; i < perSecond.length; i++) perSecond[i] ??= {};
  // The last second is only partly covered: left in, it would read as a drop.
  if (perSecond.length > Math.floor(seconds)) perSecond.length = Math.floor(seconds);
  return { seconds, byKind, perSecond, errors, ...(firstError === undefined ? {} : { firstError }) };
}

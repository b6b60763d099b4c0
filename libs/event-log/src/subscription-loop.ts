import type { RecordedEvent, SubscribeOptions, Subscription } from './event-log.port.js';

/**
 * The delivery loop both adapters share: read a batch after the current position, hand it
 * to the handler, advance only once the handler succeeded (at-least-once), and retry a
 * failed batch with capped backoff. `readAfter` returns [] when there is nothing new, after
 * which the loop waits on `waitForMore`.
 */
export function runSubscription(
  options: SubscribeOptions,
  source: {
    readAfter(position: number, max: number): Promise<readonly RecordedEvent[]> | readonly RecordedEvent[];
    headPosition(): Promise<number> | number;
    waitForMore(position: number, signal: AbortSignal): Promise<void>;
  },
): Subscription {
  const maxBatch = options.maxBatch ?? 512;
  const abort = new AbortController();
  let position = options.from ?? 0;
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const loop = (async () => {
    const target = await source.headPosition();
    if (position >= target) markCaughtUp();
    let attempt = 0;
    while (!abort.signal.aborted) {
      try {
        const batch = await source.readAfter(position, maxBatch);
        if (abort.signal.aborted) break;
        if (batch.length === 0) {
          await source.waitForMore(position, abort.signal);
          continue;
        }
        await options.onEvents(batch);
        attempt = 0;
        position = batch[batch.length - 1]!.position;
        if (position >= target) markCaughtUp();
      } catch (error) {
        attempt += 1;
        options.onError?.(error, attempt);
        await sleep(Math.min(50 * 2 ** attempt, 5_000), abort.signal);
      }
    }
  })();

  return {
    caughtUp,
    get position() {
      return position;
    },
    async stop() {
      abort.abort();
      await loop.catch(() => undefined);
    },
  };
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

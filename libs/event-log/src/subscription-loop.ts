import type { RecordedEvent, SubscribeOptions, Subscription } from './event-log.port.js';
import { PushStreamEndedError, PushStreamStalledError } from './errors.js';

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
  const catchUpBatch = options.catchUpBatch ?? maxBatch;
  const abort = new AbortController();
  let position = options.from ?? 0;
  let markCaughtUp!: () => void;
  const caughtUp = new Promise<void>((resolve) => (markCaughtUp = resolve));

  const loop = (async () => {
    let attempt = 0;
    // The head it begins at is asked for until the log answers (a server may be down at
    // start): without it the subscription can never say it has caught up.
    let target: number | undefined;
    while (target === undefined && !abort.signal.aborted) {
      try {
        target = await source.headPosition();
      } catch (error) {
        attempt += 1;
        tell(options, error, attempt);
        await sleep(backoffMs(attempt), abort.signal);
      }
    }
    if (target === undefined) return;
    if (position >= target) markCaughtUp();
    attempt = 0;
    while (!abort.signal.aborted) {
      try {
        const batch = await source.readAfter(position, position < target ? catchUpBatch : maxBatch);
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
        tell(options, error, attempt);
        await sleep(backoffMs(attempt), abort.signal);
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

/** Tells `onError` of a failure; a handler that throws stops no retry. */
function tell(options: SubscribeOptions, error: unknown, attempt: number): void {
  try {
    options.onError?.(error, attempt);
  } catch {
    // The retry goes on: what the handler failed to record is not the subscription's to decide.
  }
}

/** How long to wait before the `attempt`th retry: doubling from 100 ms, at most 5 s. */
const backoffMs = (attempt: number) => Math.min(50 * 2 ** attempt, 5_000);

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

/**
 * How long a push stream may give nothing while the log's head stands past what it gave
 * before it is taken for stalled, closed and opened again. A client library can lose a push
 * stream without ending or failing it: after a NATS server's restart, a nats.js ordered
 * consumer now and then neither recreates its consumer nor reports an error.
 */
export const PUSH_STREAM_QUIET_MS = 5_000;

/**
 * A subscription fed by a server push stream (JetStream, KurrentDB): a pump copies the
 * stream into a buffer, pausing while the handler is far behind, and the shared loop reads
 * the buffer by position, so that a failed batch is read again rather than lost. A push
 * stream that cannot be opened (its server is down or restarting), that ends or fails
 * before the subscription is stopped, or, given `quietMs`, that stalls is opened again after
 * the last event it gave, with the loop's backoff; each failure is told to `onError`.
 *
 * Stalled means quiet for `quietMs` while the log's head stands past the stream, and still so
 * at the next look, half a `quietMs` later: an event appended just before a look is on its
 * way, and gone from the reckoning by the next. The watch asks the log's head every half
 * `quietMs` while the stream is quiet, so an adapter opts in where its client needs it.
 */
export function bufferedSubscription(
  options: SubscribeOptions,
  source: {
    /** The events after `from`, in order, for as long as the subscription runs. */
    open(from: number): Promise<{ events: AsyncIterable<RecordedEvent>; close(): Promise<void> }>;
    headPosition(): Promise<number>;
    /** How long a stream may be quiet before it is looked at for a stall; without it, it is not watched. */
    quietMs?: number;
  },
): Subscription {
  const from = options.from ?? 0;
  const quietMs = source.quietMs;
  const buffer: RecordedEvent[] = [];
  const waiters = new Set<() => void>();
  const stopping = new AbortController();
  let closeStream: (() => Promise<void>) | undefined;
  /** When the open push stream last gave an event (or opened, or the handler made room). */
  let heardAt = Date.now();
  /** Set while the pump waits for the handler: a stream quiet then is not stalled. */
  let paused = false;
  /** Set when the watch closed a stalled stream, so that the pump says why it ended. */
  let stalled: PushStreamStalledError | undefined;
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
    waiters.clear();
  };
  /** Position of the last event copied into the buffer: a stream opened again starts after it. */
  let copied = from;
  /** Copies one opening of the push stream into the buffer, until it ends or fails. */
  const copy = async (): Promise<void> => {
    closeStream = undefined;
    const stream = await source.open(copied);
    closeStream = stream.close;
    heardAt = Date.now();
    // Stopped while it opened: closed now, and its events still iterated (they end at once): a
    // JetStream consumer's close completes only once its iterator has ended.
    const closed = stopping.signal.aborted ? stream.close() : undefined;
    try {
      for await (const event of stream.events) {
        heardAt = Date.now();
        if (stopping.signal.aborted) break;
        // A stream opened again may give again what the one before gave.
        if (event.position <= copied) continue;
        copied = event.position;
        buffer.push(event);
        wake();
        if (buffer.length > 8192) {
          paused = true;
          while (buffer.length > 8192 && !stopping.signal.aborted) await new Promise<void>((resolve) => waiters.add(resolve));
          paused = false;
          heardAt = Date.now();
        }
        if (stopping.signal.aborted) break;
      }
    } finally {
      await closed;
    }
  };
  /** Where the stream stood when the last look found the head past it while quiet. */
  let behindAt: number | undefined;
  let looking = false;
  /** Closes the open push stream once two looks in a row find it quiet, and the log's head past it. */
  const lookForStall = async (quietMs: number): Promise<void> => {
    const close = closeStream;
    if (looking || stopping.signal.aborted) return;
    if (!close || paused || Date.now() - heardAt < quietMs) {
      behindAt = undefined;
      return;
    }
    looking = true;
    try {
      const head = await source.headPosition();
      const quiet = closeStream === close && !paused && !stopping.signal.aborted && Date.now() - heardAt >= quietMs;
      if (!quiet || head <= copied) {
        behindAt = undefined;
      } else if (behindAt !== copied) {
        behindAt = copied;
      } else {
        behindAt = undefined;
        stalled = new PushStreamStalledError(copied, head, quietMs);
        await close();
      }
    } catch {
      // The log does not answer: the stream has nothing to give either, and is looked at again.
    } finally {
      looking = false;
    }
  };
  const watch = quietMs === undefined ? undefined : setInterval(() => void lookForStall(quietMs), Math.max(10, Math.floor(quietMs / 2)));
  watch?.unref();
  const pump = (async () => {
    let attempt = 0;
    while (!stopping.signal.aborted) {
      const openedAfter = copied;
      try {
        stalled = undefined;
        await copy();
        if (stopping.signal.aborted) return;
        throw stalled ?? new PushStreamEndedError(copied);
      } catch (error) {
        if (stopping.signal.aborted) return;
        await closeStream?.().catch(() => undefined);
        // Closed: nothing for the watch to look at until the next one opens.
        closeStream = undefined;
        // A stream that gave events before it failed starts the backoff again.
        attempt = copied > openedAfter ? 1 : attempt + 1;
        tell(options, error, attempt);
        await sleep(backoffMs(attempt), stopping.signal);
      }
    }
  })();

  const subscription = runSubscription(
    { ...options, from },
    {
      readAfter: (position, max) => {
        // Drop what the handler has finished with; keep what a retry needs.
        let done = 0;
        while (done < buffer.length && buffer[done]!.position <= position) done++;
        if (done > 0) {
          buffer.splice(0, done);
          wake();
        }
        return buffer.slice(0, max);
      },
      headPosition: () => source.headPosition(),
      waitForMore: (_position, signal) =>
        new Promise<void>((resolve) => {
          if (buffer.length > 0 || signal.aborted) return resolve();
          const done = () => {
            waiters.delete(done);
            signal.removeEventListener('abort', done);
            resolve();
          };
          waiters.add(done);
          signal.addEventListener('abort', done, { once: true });
        }),
    },
  );
  return {
    caughtUp: subscription.caughtUp,
    get position() {
      return subscription.position;
    },
    async stop() {
      stopping.abort();
      if (watch) clearInterval(watch);
      // Woken first: a pump paused on a full buffer ends its iteration, which a JetStream close waits for.
      wake();
      await closeStream?.().catch(() => undefined);
      await subscription.stop();
      await pump;
    },
  };
}

/** A subscription that keeps itself in `registry` until stopped, so that closing a log can stop it. */
export function tracked(subscription: Subscription, registry: Set<Subscription>): Subscription {
  const handle: Subscription = {
    caughtUp: subscription.caughtUp,
    get position() {
      return subscription.position;
    },
    stop: async () => {
      await subscription.stop();
      registry.delete(handle);
    },
  };
  registry.add(handle);
  return handle;
}

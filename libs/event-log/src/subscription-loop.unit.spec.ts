import type { RecordedEvent } from './event-log.port.js';
import { runSubscription } from './subscription-loop.js';

/** A log in an array: what the loop reads, and a way to append while it runs. */
function arrayLog(count: number) {
  const events: RecordedEvent[] = [];
  const wakers = new Set<() => void>();
  const append = (n: number) => {
    for (let i = 0; i < n; i++) {
      const position = events.length + 1;
      events.push({ stream: 's', revision: position - 1, position, type: 'Happened', data: {}, metadata: {}, recordedAt: 't' });
    }
    for (const wake of wakers) wake();
    wakers.clear();
  };
  append(count);
  const source = {
    readAfter: (position: number, max: number) => events.slice(position, position + max),
    headPosition: () => events.length,
    waitForMore: (position: number, signal: AbortSignal) =>
      new Promise<void>((resolve) => {
        // As a log does: what arrived between the read and the wait is not waited for.
        if (events.length > position) return resolve();
        wakers.add(resolve);
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
  };
  return { source, append };
}

describe('runSubscription', () => {
  it('reads in batches of catchUpBatch until it has caught up with the head it began at, then of maxBatch', async () => {
    const { source, append } = arrayLog(2_500);
    const sizes: number[] = [];
    let seen = 0;
    let reached: () => void = () => undefined;
    const subscription = runSubscription(
      {
        maxBatch: 100,
        catchUpBatch: 1_000,
        onEvents: (events) => {
          sizes.push(events.length);
          seen = events[events.length - 1]!.position;
          if (seen === 2_800) reached();
        },
      },
      source,
    );
    await subscription.caughtUp;
    expect(sizes).toEqual([1_000, 1_000, 500]);
    const done = new Promise<void>((resolve) => (reached = resolve));
    append(300);
    await done;
    // Past the head it began at: the live batch size, whatever arrives at once.
    expect(sizes.slice(3)).toEqual([100, 100, 100]);
    await subscription.stop();
  });

  it('reads in batches of maxBatch throughout when no catchUpBatch is given', async () => {
    const { source } = arrayLog(250);
    const sizes: number[] = [];
    const subscription = runSubscription({ maxBatch: 100, onEvents: (events) => void sizes.push(events.length) }, source);
    await subscription.caughtUp;
    expect(sizes).toEqual([100, 100, 50]);
    await subscription.stop();
  });
});

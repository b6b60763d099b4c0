import type { RecordedEvent } from './event-log.port.js';
import { bufferedSubscription, runSubscription } from './subscription-loop.js';

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

const recorded = (position: number): RecordedEvent => ({ stream: 's', revision: position - 1, position, type: 'Happened', data: {}, metadata: {}, recordedAt: 't' });

/** Resolves once `condition` holds, polled; fails the test after a second. */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 5) {
    if (waited > 1_000) throw new Error('not reached within a second');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe('runSubscription when the log does not answer', () => {
  it('asks for the head again until the log answers, telling onError, and then catches up', async () => {
    const { source } = arrayLog(3);
    let refusals = 2;
    const errors: unknown[] = [];
    const seen: number[] = [];
    const subscription = runSubscription(
      { onEvents: (events) => void seen.push(...events.map((event) => event.position)), onError: (error) => void errors.push(error) },
      {
        ...source,
        headPosition: () => {
          if (refusals-- > 0) throw new Error('no answer');
          return source.headPosition();
        },
      },
    );
    await subscription.caughtUp;
    expect(seen).toEqual([1, 2, 3]);
    expect(errors.map(String)).toEqual(['Error: no answer', 'Error: no answer']);
    await subscription.stop();
  });
});

describe('bufferedSubscription', () => {
  it('opens the push stream again when it cannot be opened, and after it ends, from after the last event it gave', async () => {
    const log = [1, 2, 3, 4, 5].map(recorded);
    const openedAfter: number[] = [];
    const errors: string[] = [];
    const seen: number[] = [];
    const subscription = bufferedSubscription(
      { onEvents: (events) => void seen.push(...events.map((event) => event.position)), onError: (error) => void errors.push(String(error)) },
      {
        headPosition: async () => log.length,
        open: async (from) => {
          openedAfter.push(from);
          // The first opening fails; the second gives two events and ends, as a stream cut by a
          // server's restart; the third begins with the event the second ended on, given again.
          if (openedAfter.length === 1) throw new Error('server down');
          const events = openedAfter.length === 2 ? log.slice(from, from + 2) : log.slice(from - 1);
          const last = openedAfter.length > 2;
          let close!: () => void;
          const closed = new Promise<void>((resolve) => (close = resolve));
          return {
            events: (async function* () {
              yield* events;
              // The last one stays open, as a live stream does, until closed.
              if (last) await closed;
            })(),
            close: async () => close(),
          };
        },
      },
    );
    await subscription.caughtUp;
    await until(() => seen.length === 5);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(openedAfter).toEqual([0, 0, 2]);
    expect(errors).toEqual(['Error: server down', "PushStreamEndedError: the log's push stream ended after position 2"]);
    await subscription.stop();
  });

  /** A push stream that gives `events` and then stays open, giving nothing, until closed. */
  function openStream(events: RecordedEvent[]) {
    let close!: () => void;
    const closed = new Promise<void>((resolve) => (close = resolve));
    return {
      events: (async function* () {
        yield* events;
        await closed;
      })(),
      close: async () => close(),
    };
  }

  it('closes a push stream that gives nothing while the log holds more, and opens it again after the last event it gave', async () => {
    const log = [1, 2, 3, 4, 5].map(recorded);
    const openedAfter: number[] = [];
    const errors: string[] = [];
    const seen: number[] = [];
    const subscription = bufferedSubscription(
      { onEvents: (events) => void seen.push(...events.map((event) => event.position)), onError: (error) => void errors.push(String(error)) },
      {
        headPosition: async () => log.length,
        quietMs: 40,
        // The first opening gives two events and then stalls, as a client that lost its
        // consumer in a server's restart without saying so.
        open: async (from) => {
          openedAfter.push(from);
          return openStream(openedAfter.length === 1 ? log.slice(0, 2) : log.slice(from));
        },
      },
    );
    await until(() => seen.length === 5);
    expect(seen).toEqual([1, 2, 3, 4, 5]);
    expect(openedAfter).toEqual([0, 2]);
    expect(errors).toEqual(["PushStreamStalledError: the log's push stream gave nothing after position 2 for 40 ms while the log's head is at 5"]);
    await subscription.stop();
  });

  it('leaves a quiet push stream open when an event the head counts arrives before the next look', async () => {
    const log = [1, 2, 3, 4].map(recorded);
    const openedAfter: number[] = [];
    const errors: string[] = [];
    const seen: number[] = [];
    let arrive!: () => void;
    const arrived = new Promise<void>((resolve) => (arrive = resolve));
    let looks = 0;
    const subscription = bufferedSubscription(
      { onEvents: (events) => void seen.push(...events.map((event) => event.position)), onError: (error) => void errors.push(String(error)) },
      {
        // Three events at first; the first look after a quiet spell finds the fourth appended,
        // and it arrives just after, as a live stream's next event does.
        headPosition: async () => {
          if (seen.length < 3) return 3;
          if (++looks === 1) setTimeout(arrive, 5);
          return 4;
        },
        quietMs: 40,
        open: async (from) => {
          openedAfter.push(from);
          let close!: () => void;
          const closed = new Promise<void>((resolve) => (close = resolve));
          return {
            events: (async function* () {
              yield* log.slice(from, 3);
              await Promise.race([arrived, closed]);
              yield log[3]!;
              await closed;
            })(),
            close: async () => close(),
          };
        },
      },
    );
    await until(() => seen.length === 4);
    await until(() => looks >= 1);
    // Quiet again at the head for several looks' time: still the one stream.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(openedAfter).toEqual([0]);
    expect(errors).toEqual([]);
    await subscription.stop();
  });

  it('leaves a quiet push stream open while the log holds nothing more', async () => {
    const log = [1, 2, 3].map(recorded);
    const openedAfter: number[] = [];
    let headAsked = 0;
    const subscription = bufferedSubscription(
      { onEvents: () => undefined },
      {
        headPosition: async () => {
          headAsked++;
          return log.length;
        },
        quietMs: 20,
        open: async (from) => {
          openedAfter.push(from);
          return openStream(log.slice(from));
        },
      },
    );
    await subscription.caughtUp;
    // Quiet for several times its quietMs: the head is asked for, and the stream stays.
    const asked = headAsked;
    await until(() => headAsked >= asked + 3);
    expect(openedAfter).toEqual([0]);
    await subscription.stop();
  });
});

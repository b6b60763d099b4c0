import type { EventLog, RecordedEvent } from '../event-log.port.js';
import { WrongExpectedVersionError } from '../errors.js';

/**
 * How the contract suite gets logs: `open` gives a fresh, empty log for each test;
 * `reopen` closes nothing itself and opens the same storage again (after the test closed
 * the first instance), to check durability.
 */
export interface EventLogContractFactory {
  open(): Promise<{ log: EventLog; reopen(): Promise<EventLog>; dispose(): Promise<void> }>;
}

const event = (n: number) => ({ type: 'Tested', data: { n } });

function collect(log: EventLog, from: number, until: (events: RecordedEvent[]) => boolean) {
  const seen: RecordedEvent[] = [];
  let resolveDone!: () => void;
  const done = new Promise<void>((resolve) => (resolveDone = resolve));
  const subscription = log.subscribeToAll({
    from,
    onEvents: (batch) => {
      seen.push(...batch);
      if (until(seen)) resolveDone();
    },
  });
  return { seen, done, subscription };
}

/** The behaviour every event-log adapter must have. Call inside a test file, once per adapter. */
export function describeEventLogContract(name: string, factory: EventLogContractFactory): void {
  describe(`EventLog contract: ${name}`, () => {
    let log: EventLog;
    let reopen: () => Promise<EventLog>;
    let dispose: () => Promise<void>;
    const opened: EventLog[] = [];

    beforeEach(async () => {
      ({ log, reopen, dispose } = await factory.open());
      opened.push(log);
    });
    afterEach(async () => {
      for (const l of opened.splice(0)) await l.close();
      await dispose();
    });

    it('starts empty', async () => {
      expect(await log.headPosition()).toBe(0);
      expect(await log.readStream('nothing-here')).toEqual([]);
    });

    it('appends in order, with revisions per stream and positions across streams', async () => {
      const a = await log.appendToStream('a', [event(1), event(2)]);
      const b = await log.appendToStream('b', [event(3)]);
      expect(a.nextExpectedVersion).toBe(1);
      expect(b.nextExpectedVersion).toBe(0);
      expect(b.position).toBeGreaterThan(a.position);
      const streamA = await log.readStream('a');
      expect(streamA.map((e) => [e.stream, e.revision, e.type, e.data])).toEqual([
        ['a', 0, 'Tested', { n: 1 }],
        ['a', 1, 'Tested', { n: 2 }],
      ]);
      expect(streamA[0]!.position).toBeLessThan(streamA[1]!.position);
      expect(streamA[1]!.position).toBe(a.position);
      expect(await log.headPosition()).toBe(b.position);
    });

    it('refuses an append whose expected version is wrong, naming the stream and both versions', async () => {
      await log.appendToStream('s', [event(1)], { expectedVersion: 'no_stream' });
      await expect(log.appendToStream('s', [event(2)], { expectedVersion: 'no_stream' })).rejects.toMatchObject({
        name: 'WrongExpectedVersionError',
        stream: 's',
        expected: 'no_stream',
        actual: 0,
      });
      await expect(log.appendToStream('s', [event(2)], { expectedVersion: 5 })).rejects.toBeInstanceOf(WrongExpectedVersionError);
      await log.appendToStream('s', [event(2)], { expectedVersion: 0 });
      expect((await log.readStream('s')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
    });

    it('lets exactly one of many concurrent appends with the same expected version win', async () => {
      await log.appendToStream('race', [event(0)]);
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) => log.appendToStream('race', [event(i + 1)], { expectedVersion: 0 })),
      );
      const won = results.filter((r) => r.status === 'fulfilled');
      const lost = results.filter((r) => r.status === 'rejected') as PromiseRejectedResult[];
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(7);
      for (const loss of lost) expect(loss.reason).toBeInstanceOf(WrongExpectedVersionError);
      expect(await log.readStream('race')).toHaveLength(2);
    });

    it('accepts appends queued back to back, each expecting the one queued before it', async () => {
      const queued = [
        log.appendToStream('pipe', [event(0)], { expectedVersion: 'no_stream' }),
        log.appendToStream('pipe', [event(1)], { expectedVersion: 0 }),
        log.appendToStream('pipe', [event(2)], { expectedVersion: 1 }),
        log.appendToStream('pipe', [event(3)], { expectedVersion: 2 }),
      ];
      const results = await Promise.all(queued);
      expect(results.map((r) => r.nextExpectedVersion)).toEqual([0, 1, 2, 3]);
      expect(new Set(results.map((r) => r.position)).size).toBe(4);
      expect(results.map((r) => r.position)).toEqual([...results.map((r) => r.position)].sort((a, b) => a - b));
      expect((await log.readStream('pipe')).map((e) => e.data)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }, { n: 3 }]);
    });

    it('delivers every event from the start in global order, then new ones live', async () => {
      const positions: number[] = [];
      for (let i = 0; i < 5; i++) positions.push((await log.appendToStream(i % 2 ? 'odd' : 'even', [event(i)])).position);
      const { seen, done, subscription } = collect(log, 0, (s) => s.length >= 8);
      await subscription.caughtUp;
      expect(seen.map((e) => e.position)).toEqual(positions);
      await log.appendToStream('late', [event(5), event(6), event(7)]);
      await done;
      expect(seen.map((e) => (e.data as { n: number }).n)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      await subscription.stop();
    });

    it('delivers only events after the given position', async () => {
      const second = await log.appendToStream('x', [event(1), event(2)]);
      await log.appendToStream('x', [event(3), event(4)]);
      const { seen, done, subscription } = collect(log, second.position, (s) => s.length >= 2);
      await done;
      await subscription.caughtUp;
      expect(seen.map((e) => e.data)).toEqual([{ n: 3 }, { n: 4 }]);
      await subscription.stop();
    });

    it('forgets a subscription once it is stopped, so that rewinds and rebuilds leak none', async () => {
      await log.appendToStream('s', [event(1)]);
      const before = log.openSubscriptions;
      for (let i = 0; i < 20; i++) {
        const { done, subscription } = collect(log, 0, (seen) => seen.length >= 1);
        await done;
        await subscription.stop();
      }
      expect(log.openSubscriptions).toBe(before);
      const { done, subscription } = collect(log, 0, (seen) => seen.length >= 1);
      await done;
      expect(log.openSubscriptions).toBe(before + 1);
      await subscription.stop();
    });

    it('stops a subscription at once, even one stopped as soon as it is made', async () => {
      await log.appendToStream('s', [event(1)]);
      for (let i = 0; i < 5; i++) await log.subscribeToAll({ from: 0, onEvents: () => undefined }).stop();
      const { done, subscription } = collect(log, 0, (seen) => seen.length >= 1);
      await done;
      await subscription.stop();
    });

    it('resumes a consumer from its saved checkpoint', async () => {
      expect(await log.loadCheckpoint('projector')).toBeUndefined();
      const first = await log.appendToStream('x', [event(1), event(2)]);
      const handled = await log.appendToStream('x', [event(3)]);
      await log.saveCheckpoint('projector', first.position);
      await log.saveCheckpoint('projector', handled.position);
      await log.appendToStream('x', [event(4)]);
      const from = await log.loadCheckpoint('projector');
      expect(from).toBe(handled.position);
      const { seen, done, subscription } = collect(log, from!, (s) => s.length >= 1);
      await done;
      expect(seen.map((e) => e.data)).toEqual([{ n: 4 }]);
      await subscription.stop();
    });

    it('redelivers a batch whose handler failed instead of skipping it', async () => {
      await log.appendToStream('x', [event(1), event(2)]);
      let failures = 0;
      const seen: number[] = [];
      let resolveDone!: () => void;
      const done = new Promise<void>((resolve) => (resolveDone = resolve));
      const subscription = log.subscribeToAll({
        onEvents: (batch) => {
          if (failures < 2) {
            failures++;
            throw new Error('transient');
          }
          seen.push(...batch.map((e) => (e.data as { n: number }).n));
          if (seen.includes(2)) resolveDone();
        },
      });
      await done;
      expect(failures).toBe(2);
      expect(seen).toEqual([1, 2]);
      await subscription.stop();
    });

    it('keeps every acknowledged event, revision and checkpoint across a restart', async () => {
      await log.appendToStream('durable', [event(1)]);
      const second = await log.appendToStream('durable', [event(2)], { expectedVersion: 0 });
      await log.saveCheckpoint('c1', second.position);
      await log.close();
      const again = await reopen();
      opened.push(again);
      expect((await again.readStream('durable')).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(await again.loadCheckpoint('c1')).toBe(second.position);
      await expect(again.appendToStream('durable', [event(3)], { expectedVersion: 0 })).rejects.toBeInstanceOf(
        WrongExpectedVersionError,
      );
      const third = await again.appendToStream('durable', [event(3)], { expectedVersion: 1 });
      expect(third.nextExpectedVersion).toBe(2);
      expect(third.position).toBeGreaterThan(second.position);
    });
  });
}

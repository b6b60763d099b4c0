import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { describeEventLogContract } from '../contract/event-log.contract.js';
import { LogAppendRefusedError } from '../errors.js';
import { JetStreamEventLog } from './jetstream-event-log.js';
import { connectNats } from './nats-connection.js';

let server: NatsServerHandle;
let streamCounter = 0;

beforeAll(async () => {
  server = await startNatsServer();
});
afterAll(async () => {
  await server.stop();
});

describeEventLogContract('jetstream', {
  async open() {
    const streamName = `TEST${++streamCounter}`;
    const connectOptions = { servers: server.url, streamName };
    return {
      log: await JetStreamEventLog.connect(connectOptions),
      reopen: () => JetStreamEventLog.connect(connectOptions),
      dispose: async () => undefined,
    };
  },
});

describe('a NATS connection of connectNats', () => {
  let restarting: NatsServerHandle;
  afterEach(() => restarting.stop());

  it('reconnects after its server was away for longer than nats.js gives a connection by default', async () => {
    restarting = await startNatsServer({ storeDir: await mkdtemp(join(tmpdir(), 'feedmill-nats-away-')) });
    // Ten attempts (nats.js's default) 100 ms apart would give up within about a second.
    const nc = await connectNats({ servers: restarting.url, reconnectTimeWait: 100 });
    const reconnected = (async () => {
      for await (const status of nc.status()) if (status.type === 'reconnect') return true;
      return false;
    })();
    try {
      await restarting.kill();
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(nc.isClosed()).toBe(false);
      restarting = await startNatsServer({ port: restarting.port, storeDir: restarting.storeDir });
      expect(await reconnected).toBe(true);
      const subscription = nc.subscribe('echo', {
        callback: (_error, message) => {
          message.respond(message.data);
        },
      });
      const answer = await nc.request('echo', 'back', { timeout: 10_000 });
      expect(answer.string()).toBe('back');
      subscription.unsubscribe();
    } finally {
      await nc.close();
    }
  }, 30_000);
});

describe('jetstream across a restart of its nats-server', () => {
  let restarting: NatsServerHandle;
  let log: JetStreamEventLog | undefined;
  afterEach(async () => {
    await log?.close();
    await restarting.stop();
  });

  it('delivers to a subscription begun while the server was down, once it is back', async () => {
    restarting = await startNatsServer({ storeDir: await mkdtemp(join(tmpdir(), 'feedmill-nats-restart-')) });
    log = await JetStreamEventLog.connect({ servers: restarting.url, streamName: 'RESTARTS' });
    await log.appendToStream('s', [{ type: 'Happened', data: { n: 1 } }]);
    await restarting.kill();
    const seen: number[] = [];
    const errors: unknown[] = [];
    const subscription = log.subscribeToAll({ onEvents: (events) => void seen.push(...events.map((event) => (event.data as { n: number }).n)), onError: (error) => void errors.push(error) });
    // Down long enough for the subscription's first reads to fail.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    restarting = await startNatsServer({ port: restarting.port, storeDir: restarting.storeDir });
    await waitFor(() => seen.length >= 1, 20_000);
    await log.appendToStream('s', [{ type: 'Happened', data: { n: 2 } }]);
    await waitFor(() => seen.length >= 2, 20_000);
    await subscription.caughtUp;
    expect(seen).toEqual([1, 2]);
    // It did fail while the server was down, and went on.
    expect(errors.length).toBeGreaterThan(0);
    await subscription.stop();
  }, 60_000);

  it('brings a subscription whose server was killed mid-catch-up to the head, every event once', async () => {
    restarting = await startNatsServer({ storeDir: await mkdtemp(join(tmpdir(), 'feedmill-nats-catch-up-')) });
    log = await JetStreamEventLog.connect({ servers: restarting.url, streamName: 'CATCHUP' });
    const count = 1_500;
    for (let n = 1; n <= count; n++) await log.appendToStream(`s${n % 20}`, [{ type: 'Happened', data: { n, pad: 'x'.repeat(300) } }]);
    const everyPosition = Array.from({ length: count }, (_, i) => i + 1);
    // Killed at another point of the catch-up each round: the ordered consumer under it is
    // recreated by nats.js, or stalls and is opened again by the subscription.
    for (const killAfterMs of [50, 150, 300]) {
      const seen: number[] = [];
      const subscription = log.subscribeToAll({
        catchUpBatch: 8_192,
        onEvents: async (events) => {
          seen.push(...events.map((event) => event.position));
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
      });
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      await restarting.kill();
      await new Promise((resolve) => setTimeout(resolve, 300));
      restarting = await startNatsServer({ port: restarting.port, storeDir: restarting.storeDir });
      await waitFor(() => seen.length >= count, 30_000);
      expect(seen).toEqual(everyPosition);
      await subscription.stop();
    }
  }, 150_000);
});

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('jetstream with its store full', () => {
  let full: NatsServerHandle;
  let log: JetStreamEventLog | undefined;
  afterEach(async () => {
    await log?.close();
    await full.stop();
  });

  it('refuses an append it could not store with a LogAppendRefusedError, keeps what it stored before', async () => {
    full = await startNatsServer({ maxFileStore: '1MB' });
    log = await JetStreamEventLog.connect({ servers: full.url, streamName: 'FULL' });
    const big = 'x'.repeat(64 * 1024);
    let stored = 0;
    let refused: unknown;
    for (let i = 0; i < 40 && refused === undefined; i++) {
      try {
        await log.appendToStream(`s-${i}`, [{ type: 'Big', data: { big } }]);
        stored++;
      } catch (error) {
        refused = error;
      }
    }
    expect(refused).toBeInstanceOf(LogAppendRefusedError);
    expect((refused as Error).message).toMatch(/kept nothing of it/);
    expect(stored).toBeGreaterThan(0);
    expect(await log.headPosition()).toBe(stored);
    expect((await log.readStream('s-0')).map((event) => event.type)).toEqual(['Big']);
  }, 30_000);
});

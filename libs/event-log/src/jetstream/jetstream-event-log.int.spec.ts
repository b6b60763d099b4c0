import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { describeEventLogContract } from '../contract/event-log.contract.js';
import { JetStreamEventLog } from './jetstream-event-log.js';

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
    console.log(`subscription begun while nats-server was down: ${errors.length} failed attempts, then ${seen.length} events`);
    await subscription.stop();
  }, 60_000);
});

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not true within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

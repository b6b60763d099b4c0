import { startNatsServer, waitFor, type NatsServerHandle } from '@feedmill/harness';
import { DrainingNatsServer } from './draining-nats.server.js';
import { NatsRequests } from './nats-requests.js';

/**
 * The server a service listens with, on a real nats-server, as it stops: it drains its
 * subjects (Nest's and those added later alike), answers what it took, and waits for that
 * only as long as it runs, never past the grace.
 */
const GRACE_MS = 1_500;
let nats: NatsServerHandle;
let client: NatsRequests;
beforeAll(async () => {
  nats = await startNatsServer();
  client = new NatsRequests([nats.url]);
});
afterAll(async () => {
  await client?.close();
  await nats?.stop();
});

/** A server answering `fixed` (as a `@MessagePattern` would) and `added` (as a partition's subject), each once `release` is called. */
async function gatedServer(queue: string): Promise<{ server: DrainingNatsServer; release: () => void; added: { stop(): void } }> {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const server = new DrainingNatsServer({ servers: [nats.url], queue, graceMs: GRACE_MS });
  server.addHandler('fixed', async () => gate.then(() => 'fixed answered'));
  await new Promise<void>((resolve, reject) => void server.listen((error?: unknown) => (error ? reject(error as Error) : resolve())));
  server.addHandler('added', async () => gate.then(() => 'added answered'));
  const added = server.subscribe('added');
  await server.flush();
  return { server, release, added };
}

const ask = (subject: string, timeoutMs = 5_000) => client.send(subject, {}, timeoutMs);

it('drains every subject at once, answers what it took, and closes as soon as it has', async () => {
  const { server, release } = await gatedServer('drains');
  const taken = [ask('fixed'), ask('added')];
  await new Promise((settle) => setTimeout(settle, 100));
  expect(server.requestsInFlight).toBe(2);

  const started = Date.now();
  const closed = server.close();
  expect(server.stopping.aborted).toBe(true);
  await new Promise((settle) => setTimeout(settle, 100));
  // Neither subject takes a request any more: NATS says no one answers.
  await expect(ask('fixed')).rejects.toThrow(/no process answers/);
  await expect(ask('added')).rejects.toThrow(/no process answers/);
  // Nor does it subscribe anything new.
  server.subscribe('late').stop();

  release();
  expect(await Promise.all(taken)).toEqual(['fixed answered', 'added answered']);
  await closed;
  expect(Date.now() - started).toBeLessThan(GRACE_MS);
});

it('closes at once with nothing in flight, and after the grace with a request that does not finish', async () => {
  const idle = await gatedServer('idle');
  let started = Date.now();
  await idle.server.close();
  expect(Date.now() - started).toBeLessThan(GRACE_MS / 2);

  const stuck = await gatedServer('stuck');
  const cutOff = ask('fixed', GRACE_MS + 500).catch((error: unknown) => error);
  await new Promise((settle) => setTimeout(settle, 100));
  started = Date.now();
  await stuck.server.close();
  expect(Date.now() - started).toBeGreaterThanOrEqual(GRACE_MS - 20);
  expect(stuck.server.requestsInFlight).toBe(1);
  stuck.release();
  // Its connection closed under it: the caller gets no answer.
  expect(await cutOff).toBeInstanceOf(Error);
});

it('lets a subscription added later be stopped before the server stops', async () => {
  const { server, added, release } = await gatedServer('stops');
  release();
  expect(await ask('added')).toBe('added answered');
  added.stop();
  await server.flush();
  await expect(ask('added')).rejects.toThrow(/no process answers/);
  await server.close();
});

it('answers again once its NATS server is back, however long it was away', async () => {
  const away = await startNatsServer();
  const awayClient = new NatsRequests([away.url]);
  // Reconnect attempts 50 ms apart: nats.js's default of 10 attempts would all be spent in half a second.
  const server = new DrainingNatsServer({ servers: [away.url], queue: 'away', graceMs: GRACE_MS, reconnectTimeWait: 50 });
  try {
    server.addHandler('fixed', async () => 'fixed answered');
    await new Promise<void>((resolve, reject) => void server.listen((error?: unknown) => (error ? reject(error as Error) : resolve())));
    server.addHandler('added', async () => 'added answered');
    server.subscribe('added');
    await server.flush();
    expect(await awayClient.send('fixed', {}, 5_000)).toBe('fixed answered');

    await away.kill();
    await new Promise((settle) => setTimeout(settle, 2_000));
    const back = await startNatsServer({ port: away.port, storeDir: away.storeDir });
    try {
      await waitFor(async () => ((await awayClient.send('fixed', {}, 500).catch(() => undefined)) === 'fixed answered' ? true : undefined), { timeoutMs: 15_000, what: 'the server to answer again' });
      expect(await awayClient.send('added', {}, 5_000)).toBe('added answered');
    } finally {
      await server.close();
      await awayClient.close();
      await back.stop();
    }
  } finally {
    await away.stop().catch(() => undefined);
  }
});

describe('replies larger than a NATS message', () => {
  const MAX_PAYLOAD = 64 * 1024;
  let small: NatsServerHandle;
  let smallClient: NatsRequests;
  let server: DrainingNatsServer;
  beforeAll(async () => {
    small = await startNatsServer({ maxPayload: MAX_PAYLOAD });
    smallClient = new NatsRequests([small.url]);
    server = new DrainingNatsServer({ servers: [small.url], queue: 'large', graceMs: GRACE_MS });
    // Text with characters of 1 to 4 bytes of UTF-8, so that parts split inside characters.
    server.addHandler('text', async (length: number) => 'aé€😀'.repeat(length));
    await new Promise<void>((resolve, reject) => void server.listen((error?: unknown) => (error ? reject(error as Error) : resolve())));
  });
  afterAll(async () => {
    await server?.close();
    await smallClient?.close();
    await small?.stop();
  });

  it('arrive whole, in parts, as do the small ones beside them', async () => {
    const lengths = [1, 5_000, 6_400, 50_000, 3];
    const replies = await Promise.all(lengths.map((length) => smallClient.send('text', length, 5_000)));
    expect(replies.map((reply) => (reply as string).length)).toEqual(lengths.map((length) => 'aé€😀'.length * length));
    expect(replies).toEqual(lengths.map((length) => 'aé€😀'.repeat(length)));
    // 50,000 repeats are 500 kB of UTF-8: more than seven messages.
    expect(Buffer.byteLength(replies[3] as string)).toBeGreaterThan(7 * MAX_PAYLOAD);
  });
});

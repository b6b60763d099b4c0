import { Logger } from '@nestjs/common';
import { throwError } from 'rxjs';
import { FeedmillError, subjects } from '@feedmill/contracts';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { currentRequestId, withRequestId } from '@feedmill/observability';
import { DrainingNatsServer } from './draining-nats.server.js';
import { NatsRequests, NoResponderError } from './nats-requests.js';
import { RemoteServiceClient } from './service-client.js';

/**
 * The cluster's requests on a real nats-server, to the server every service listens with:
 * replies, error bodies, the caller's request id, and the failures a caller is told of.
 */
let nats: NatsServerHandle;
let server: DrainingNatsServer;
/** The request id each `whoami` request was served under. */
const servedUnder: Array<string | undefined> = [];
beforeAll(async () => {
  Logger.overrideLogger(false);
  nats = await startNatsServer();
  server = new DrainingNatsServer({ servers: [nats.url], queue: 'requests', graceMs: 500 });
  server.addHandler(subjects.graph.counts, async (payload: unknown) => {
    const { feed } = payload as { feed: string };
    // An error body, as the services' exception filter answers one (RpcErrorFilter).
    if (feed === 'user:nobody') return throwError(() => ({ code: 'unknown_group', message: `group of ${feed} is not configured`, field: 'feed' }));
    return { followers: feed.length, following: 1 };
  });
  server.addHandler('whoami', async () => {
    servedUnder.push(currentRequestId());
    return 'served';
  });
  server.addHandler('silent', () => new Promise(() => undefined));
  server.addHandler('echo', async (payload: unknown) => {
    const { n, waitMs } = payload as { n: number; waitMs: number };
    await new Promise((settle) => setTimeout(settle, waitMs));
    return n;
  });
  await new Promise<void>((resolve, reject) => void server.listen((error?: unknown) => (error ? reject(error as Error) : resolve())));
});
afterAll(async () => {
  await server?.close();
  await nats?.stop();
  Logger.overrideLogger(['log', 'error', 'warn']);
});

it('returns the reply a service handler gave, checked against its subject', async () => {
  const client = new RemoteServiceClient(new NatsRequests([nats.url]));
  try {
    expect(await client.request(subjects.graph.counts, { feed: 'user:bob' })).toEqual({ followers: 8, following: 1 });
  } finally {
    await client.close();
  }
});

it('fails with the error a service handler answered, code and field included', async () => {
  const client = new RemoteServiceClient(new NatsRequests([nats.url]));
  try {
    await expect(client.request(subjects.graph.counts, { feed: 'user:nobody' })).rejects.toThrow(
      expect.objectContaining({ name: 'FeedmillError', code: 'unknown_group', message: 'group of user:nobody is not configured', field: 'feed' }),
    );
  } finally {
    await client.close();
  }
});

it('gives each of many requests in flight at once its own reply, whatever order they are answered in', async () => {
  const requests = new NatsRequests([nats.url]);
  try {
    const asked = Array.from({ length: 200 }, (_, n) => requests.send('echo', { n, waitMs: (n * 7) % 23 }, 5_000));
    expect(await Promise.all(asked)).toEqual(Array.from({ length: 200 }, (_, n) => n));
  } finally {
    await requests.close();
  }
});

it('carries the request being served to the service, in the x-request-id header', async () => {
  const requests = new NatsRequests([nats.url]);
  try {
    await withRequestId('req-42', () => requests.send('whoami', {}, 2_000));
    await requests.send('whoami', {}, 2_000);
    expect(servedUnder).toEqual(['req-42', undefined]);
  } finally {
    await requests.close();
  }
});

it('tells a subject nobody answers from one that does not answer in time, each naming the subject', async () => {
  const client = new RemoteServiceClient(new NatsRequests([nats.url]), 300);
  try {
    const nobody = await client.request(subjects.content.status, {}).catch((error: unknown) => error);
    expect(nobody).toBeInstanceOf(FeedmillError);
    expect((nobody as FeedmillError).cause).toBeInstanceOf(NoResponderError);
    expect((nobody as FeedmillError).message).toContain(subjects.content.status);
    const requests = new NatsRequests([nats.url]);
    const started = Date.now();
    await expect(requests.send('silent', {}, 300)).rejects.toThrow(expect.objectContaining({ name: 'RequestTimeoutError', message: expect.stringContaining('silent') }));
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    // An answer that comes after its request gave up is dropped, and the next request gets its own.
    await expect(requests.send('echo', { n: 1, waitMs: 400 }, 100)).rejects.toThrow(/timeout/);
    await new Promise((settle) => setTimeout(settle, 400));
    expect(await requests.send('echo', { n: 2, waitMs: 0 }, 1_000)).toBe(2);
    await requests.close();
  } finally {
    await client.close();
  }
});

it('connects again at the next request when no server answered the first', async () => {
  const gone = await startNatsServer();
  await gone.stop();
  const requests = new NatsRequests([gone.url]);
  await expect(requests.send('ping', {}, 1_000)).rejects.toThrow();
  const restarted = await startNatsServer({ port: gone.port });
  const answering = new DrainingNatsServer({ servers: [restarted.url], queue: 'later', graceMs: 200 });
  try {
    answering.addHandler('ping', async () => 'pong');
    await new Promise<void>((resolve, reject) => void answering.listen((error?: unknown) => (error ? reject(error as Error) : resolve())));
    expect(await requests.send('ping', {}, 2_000)).toBe('pong');
  } finally {
    await requests.close();
    await answering.close();
    await restarted.stop();
  }
});

it('fails what waits on a connection that closed for good at once, and connects anew at the next request', async () => {
  const requests = new NatsRequests([nats.url]);
  try {
    expect(await requests.send('echo', { n: 1, waitMs: 0 }, 1_000)).toBe(1);
    const waiting = requests.send('silent', {}, 10_000).catch((error: unknown) => error);
    // Closed under it, as a fatal error of the connection would close it.
    const { connection } = await (requests as unknown as { connecting: Promise<{ connection: { close(): Promise<void> } }> }).connecting;
    const started = Date.now();
    await connection.close();
    expect(await waiting).toEqual(expect.objectContaining({ message: 'the NATS connection closed' }));
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await requests.send('echo', { n: 2, waitMs: 0 }, 1_000)).toBe(2);
  } finally {
    await requests.close();
  }
});

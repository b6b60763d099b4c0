import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { startNatsServer, waitFor, type NatsServerHandle } from '@feedmill/harness';
import { withTimeout } from '@feedmill/event-log';
import { KvLeaseBoard } from './kv-lease.js';

/** Leases as keys of a JetStream KV bucket with a time to live, on a real nats-server. */
const LEASE_MS = 600;
let server: NatsServerHandle;
let nc: NatsConnection;
let buckets = 0;
beforeAll(async () => {
  server = await startNatsServer();
  nc = await connect({ servers: server.url });
});
afterAll(async () => {
  await nc?.close();
  await server?.stop();
});

const board = () => KvLeaseBoard.open(nc, `TEST_leases_${++buckets}`, LEASE_MS);
const sorted = (keys: string[]) => [...keys].sort();

it('lists the keys held: not one given up, and not one that ran out', async () => {
  const leases = await board();
  const [kept, givenUp, leftToRunOut] = ['kept', 'given-up', 'left'].map((key) => leases.lease(key));
  for (const lease of [kept!, givenUp!, leftToRunOut!]) expect(await lease.take('me')).toBe(true);
  expect(sorted(await leases.held())).toEqual(['given-up', 'kept', 'left']);

  await givenUp!.release();
  expect(sorted(await leases.held())).toEqual(['kept', 'left']);
  // Given up, it is free at once for another to take.
  const takenAgain = leases.lease('given-up');
  expect(await takenAgain.take('another')).toBe(true);
  expect(await leases.valueOf('given-up')).toBe('another');
  await takenAgain.release();

  const renewals = setInterval(() => void kept!.renew('me'), LEASE_MS / 3);
  try {
    await waitFor(async () => (!(await leases.held()).includes('left') ? true : undefined), { timeoutMs: 10_000, what: 'the lease left alone to run out' });
    expect(await leases.held()).toEqual(['kept']);
  } finally {
    clearInterval(renewals);
  }
});

it('leaves a lease that another process took after this one’s ran out', async () => {
  const leases = await board();
  const first = leases.lease('p0');
  expect(await first.take('first')).toBe(true);
  await waitFor(async () => ((await leases.held()).length === 0 ? true : undefined), { timeoutMs: 10_000, what: 'the lease to run out' });
  const second = leases.lease('p0');
  expect(await second.take('second')).toBe(true);

  // The first process, stalled past its lease time, gives up what it thinks it holds.
  await first.release();
  expect(await leases.held()).toEqual(['p0']);
  expect(await leases.valueOf('p0')).toBe('second');
  expect((await second.renew('second')).lost).toBe(false);
});

it('reports a renewal after the lease was given up as not held, and writes nothing', async () => {
  const leases = await board();
  const lease = leases.lease('p0');
  expect(await lease.take('me')).toBe(true);
  // Queued behind the release, as a renewal timer firing while the process lets go.
  const [, renewal] = await Promise.all([lease.release(), lease.renew('me, again')]);
  expect(renewal).toMatchObject({ lost: true, why: 'not held' });
  expect(lease.held).toBe(false);
  expect(await leases.held()).toEqual([]);
});

it('gives up a renewal the server does not answer within the lease, not after JetStream’s 5 s', async () => {
  const leases = await board();
  const lease = leases.lease('p0');
  expect(await lease.take('me')).toBe(true);
  await server.pause();
  try {
    await new Promise((resolve) => setTimeout(resolve, LEASE_MS / 2));
    const started = Date.now();
    const renewal = await lease.renew('me');
    const tookMs = Date.now() - started;
    expect(renewal).toMatchObject({ lost: true, why: 'unanswered' });
    // Its request's timeout, a third of the lease (500 ms at least): it is lost before the lease runs out.
    expect(tookMs).toBeLessThan(LEASE_MS * 2);
  } finally {
    server.resume();
  }
});

it('answers each listing at once while leases run out and are given up around it', async () => {
  const leases = await board();
  let stop = false;
  // Other processes: every 20 ms a lease is taken; two in three are given up, the rest run out.
  const churn = (async () => {
    for (let i = 0; !stop; i++) {
      const lease = leases.lease(`k${i}`);
      if ((await lease.take('other')) && i % 3 !== 0) await lease.release();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  try {
    // The KV's own key listing hung here for tens of seconds within the first hundred calls.
    for (let call = 0; call < 300; call++) {
      const keys = await withTimeout(leases.held(), LEASE_MS * 5, `listing ${call} took over ${LEASE_MS * 5} ms`);
      expect(keys.every((key) => /^k\d+$/.test(key))).toBe(true);
    }
  } finally {
    stop = true;
    await churn;
  }
});

describe('a write the server applied but did not answer in time', () => {
  // Requests get a third of the lease (1 s): one unanswered is given up with half the lease left.
  const SLOW_LEASE_MS = 3_000;
  let proxy: ReplyHoldingProxy;
  let proxied: NatsConnection;
  beforeAll(async () => {
    proxy = await ReplyHoldingProxy.start(server.port);
    proxied = await connect({ servers: `127.0.0.1:${proxy.port}` });
  });
  afterAll(async () => {
    await proxied?.close();
    await proxy?.close();
  });

  /** The same bucket as this process sees it through the proxy, and as another process sees it. */
  const boards = async () => {
    const name = `TEST_leases_${++buckets}`;
    return { mine: await KvLeaseBoard.open(proxied, name, SLOW_LEASE_MS), others: await KvLeaseBoard.open(nc, name, SLOW_LEASE_MS) };
  };

  /** Runs `write` while the server's answers are held back, so that it times out after the server applied it. */
  const unanswered = async <T>(write: () => Promise<T>): Promise<T> => {
    proxy.holdReplies();
    try {
      return await write();
    } finally {
      proxy.releaseReplies();
    }
  };

  it('keeps the lease: the next renewal goes on from the revision that write made', async () => {
    const { mine, others } = await boards();
    const lease = mine.lease('p0');
    expect(await lease.take('me, 1')).toBe(true);
    expect(await unanswered(() => lease.renew('me, 2'))).toEqual({ lost: false });
    expect(await others.valueOf('p0')).toBe('me, 2');
    // Refused at the revision it knew, before: reported taken, though nobody else wrote.
    expect(await lease.renew('me, 3')).toEqual({ lost: false });
    expect(await others.valueOf('p0')).toBe('me, 3');
    expect(lease.held).toBe(true);
  });

  it('holds the lease a take wrote, and gives up the revision that write made', async () => {
    const { mine, others } = await boards();
    const lease = mine.lease('p0');
    expect(await unanswered(() => lease.take('me, 1'))).toBe(false);
    expect(await others.valueOf('p0')).toBe('me, 1');
    // Refused as the key exists, before, until the lease ran out.
    expect(await lease.take('me, 2')).toBe(true);
    expect(await others.valueOf('p0')).toBe('me, 2');

    expect(await unanswered(() => lease.renew('me, 3'))).toEqual({ lost: false });
    await lease.release();
    // Given up at once, for another to take: before, the release removed an older revision and the key stayed until it ran out.
    expect(await others.held()).toEqual([]);
    expect(await others.lease('p0').take('another')).toBe(true);
  });

  it('is lost when another process took the lease after this one’s ran out', async () => {
    const { mine, others } = await boards();
    const lease = mine.lease('p0');
    expect(await lease.take('me, 1')).toBe(true);
    expect(await unanswered(() => lease.renew('me, 2'))).toEqual({ lost: false });
    await waitFor(async () => ((await others.held()).length === 0 ? true : undefined), { timeoutMs: 15_000, what: 'the lease to run out' });
    expect(await others.lease('p0').take('another')).toBe(true);
    expect(await lease.renew('me, 3')).toMatchObject({ lost: true, why: 'taken' });
    expect(await others.valueOf('p0')).toBe('another');
  });
});

/**
 * A TCP proxy in front of the nats-server that can hold back what the server sends, so that
 * a request reaches the server and is applied while its answer comes only later.
 */
class ReplyHoldingProxy {
  private holding = false;
  private readonly held: Array<() => void> = [];
  private readonly sockets = new Set<Socket>();

  private constructor(private readonly server: Server) {}

  static async start(upstreamPort: number): Promise<ReplyHoldingProxy> {
    const proxy: ReplyHoldingProxy = new ReplyHoldingProxy(createServer((client) => proxy.join(client, upstreamPort)));
    await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  get port(): number {
    return (this.server.address() as { port: number }).port;
  }

  holdReplies(): void {
    this.holding = true;
  }

  releaseReplies(): void {
    this.holding = false;
    for (const send of this.held.splice(0)) send();
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private join(client: Socket, upstreamPort: number): void {
    const upstream = createConnection(upstreamPort, '127.0.0.1');
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => [client, upstream].forEach((either) => either.destroy()));
    }
    client.pipe(upstream);
    upstream.on('data', (chunk: Buffer) => {
      const send = () => client.write(chunk);
      if (this.holding) this.held.push(send);
      else send();
    });
  }
}

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

import type { Activity, StreamEvent } from '@feedmill/contracts';
import { startNatsServer, waitFor, type NatsServerHandle } from '@feedmill/harness';
import { natsRealtimeBus, type NatsRealtimeBus } from './realtime-bus.js';

/** The cluster's realtime bus on a real nats-server whose messages are small (64 KiB). */
let nats: NatsServerHandle;
let bus: NatsRealtimeBus;
beforeAll(async () => {
  nats = await startNatsServer({ maxPayload: 64 * 1024 });
  bus = await natsRealtimeBus(nats.url);
});
afterAll(async () => {
  await bus?.close();
  await nats?.stop();
});

const added = (n: number, bytes: number): StreamEvent => {
  const activity: Activity = { id: `a${n}`, feed: 'user:bob', actor: 'bob', verb: 'post', object: `o${n}`, time: '2026-11-28T10:00:00.000Z', extra: { big: 'x'.repeat(bytes) } };
  return { id: `e-${n}`, type: 'added', data: { activity, cursor: `c${n}` } };
};

it('carries a batch larger than a NATS message whole and in order, in as many messages as it needs', async () => {
  const batches: StreamEvent[][] = [];
  const unsubscribe = await bus.subscribe('user:bob', (events) => void batches.push([...events]));
  // 10 events of 20 KiB: 200 KiB, over three messages of 64 KiB; and a small batch after.
  const large = Array.from({ length: 10 }, (_, n) => added(n, 20 * 1024));
  bus.publish('user:bob', large);
  bus.publish('user:bob', [added(10, 10)]);
  await waitFor(async () => (batches.flat().length === 11 ? true : undefined), { timeoutMs: 5_000, what: 'every event' });
  expect(batches.flat().map((event) => event.id)).toEqual([...large, added(10, 10)].map((event) => event.id));
  expect(batches.flat()).toEqual([...large, added(10, 10)]);
  expect(batches.length).toBeGreaterThanOrEqual(4);
  unsubscribe();
});

it('cuts a reset larger than a NATS message to the first entries of its page that fit, and leaves out another event too large, sending the rest', async () => {
  const batches: StreamEvent[][] = [];
  const unsubscribe = await bus.subscribe('user:carol', (events) => void batches.push([...events]));
  const items = Array.from({ length: 10 }, (_, n) => (added(n, 20 * 1024).data as { activity: Activity }).activity);
  const reset: StreamEvent = { id: 'e-reset', type: 'reset', data: { items, newest: 'c0' } };
  bus.publish('user:carol', [reset, added(20, 100 * 1024), added(21, 10)]);
  await waitFor(async () => (batches.flat().some((event) => event.id === 'e-21') ? true : undefined), { timeoutMs: 5_000, what: 'the event after the large ones' });
  const received = batches.flat();
  expect(received.map((event) => event.id)).toEqual(['e-reset', 'e-21']);
  const page = (received[0]!.data as { items: Activity[]; newest: string }).items;
  expect(page.length).toBeGreaterThan(0);
  expect(page.length).toBeLessThan(10);
  expect(page).toEqual(items.slice(0, page.length));
  expect((received[0]!.data as { newest: string }).newest).toBe('c0');
  unsubscribe();
});

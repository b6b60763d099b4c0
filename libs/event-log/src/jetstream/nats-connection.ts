import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';
import { withTimeout } from '../with-timeout.js';

/**
 * A NATS connection for a process that runs for good: it reconnects however long the server
 * is away. By default nats.js gives up after 10 attempts 2 s apart, and a connection that gave
 * up fails every later request: a log subscription, a lease renewal or a key lookup would
 * retry against it forever, and the process would stand still until it is restarted.
 *
 * Without async traces: by default nats.js makes two errors (stack traces included) for every
 * request, in case it fails, to say where it was made; with a JetStream append being one
 * request, that was a seventh of content's CPU per post. Our errors name the subject or
 * stream themselves.
 */
export function connectNats(options: NodeConnectionOptions): Promise<NatsConnection> {
  return connect({ ...options, maxReconnectAttempts: -1, noAsyncTraces: true });
}

/**
 * Ends a connection at a process's stop: drains it (its subscriptions end and what it sent is
 * flushed), and closes it outright when the drain fails (the server is gone: nats.js rejects
 * the drain and leaves the connection open) or takes longer than `withinMs` (a stalled link:
 * the drain's flush has no timeout of its own). Never throws, so the shutdown steps after it
 * (the stores' last snapshots) still run.
 */
export async function closeNats(nc: NatsConnection, withinMs = 2_000): Promise<void> {
  const drained = await withTimeout(nc.drain(), withinMs).then(
    () => true,
    () => false,
  );
  if (!drained) await nc.close().catch(() => undefined);
}

/**
 * A round trip to the server (nats.js's `flush`), failing when it takes longer than
 * `withinMs`: nats.js's own waits without end on a stalled link, until its pings notice,
 * minutes later.
 */
export function flushWithin(nc: NatsConnection, withinMs = 5_000): Promise<void> {
  return withTimeout(nc.flush(), withinMs, `NATS did not answer a flush within ${withinMs} ms`);
}

import { connect, type NatsConnection, type NodeConnectionOptions } from '@nats-io/transport-node';

/**
 * A NATS connection for a process that runs for good: it reconnects however long the server
 * is away. By default nats.js gives up after 10 attempts 2 s apart, and a connection that gave
 * up fails every later request: a log subscription, a lease renewal or a key lookup would
 * retry against it forever, and the process would stand still until it is restarted.
 */
export function connectNats(options: NodeConnectionOptions): Promise<NatsConnection> {
  return connect({ ...options, maxReconnectAttempts: -1 });
}

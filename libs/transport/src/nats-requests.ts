import { errors, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '@feedmill/event-log';
import { currentRequestId, REQUEST_ID_HEADER } from '@feedmill/observability';

/** How a service client reaches the services: one request, and its reply's value. */
export interface Requests {
  /** The reply's value; rejects with what the handler failed with (an error body), or with the transport's error. */
  send(subject: string, payload: unknown, timeoutMs: number): Promise<unknown>;
  close(): Promise<void>;
}

/** No process answers the subject: nats-server said so at once (no responders). */
export class NoResponderError extends Error {
  override readonly name = 'NoResponderError';
}

/**
 * Requests to the services' Nest NATS servers (`ServerNats`), made with nats.js's own
 * request: a request and its reply are two messages, the reply arriving on the connection's
 * one inbox subscription. Nest's NATS client subscribes to a new inbox for every request and
 * unsubscribes once answered, two more protocol messages for the client and nats-server to
 * handle each time, behind an RxJS pipeline per request.
 *
 * The messages are Nest's: a request is `{ pattern, data, id }` in JSON (an `id` asks for a
 * reply), the caller's request id in the `x-request-id` header; a reply is
 * `{ response, err, isDisposed, id }`, one message for a handler that returns one value, as
 * every service handler does.
 */
export class NatsRequests implements Requests {
  private connection?: Promise<NatsConnection>;
  private nextId = 0;

  constructor(private readonly servers: string[]) {}

  async send(subject: string, payload: unknown, timeoutMs: number): Promise<unknown> {
    const connection = await this.connected();
    const requestId = currentRequestId();
    let headers;
    if (requestId !== undefined) {
      headers = natsHeaders();
      headers.set(REQUEST_ID_HEADER, requestId);
    }
    const packet = JSON.stringify({ pattern: subject, data: payload, id: String(++this.nextId) });
    let reply;
    try {
      reply = await connection.request(subject, packet, { timeout: timeoutMs, headers });
    } catch (error) {
      if (error instanceof errors.RequestError && error.isNoResponders()) throw new NoResponderError(`no process answers ${subject}`, { cause: error });
      throw error;
    }
    const { response, err } = reply.json<{ response?: unknown; err?: unknown }>();
    if (err !== undefined && err !== null) throw err;
    return response;
  }

  async close(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    await (await connection?.catch(() => undefined))?.close();
  }

  /** The connection, made at the first request; a failed attempt is made again at the next. */
  private connected(): Promise<NatsConnection> {
    if (!this.connection) {
      const connecting = connectNats({ servers: this.servers });
      this.connection = connecting;
      connecting.catch(() => {
        if (this.connection === connecting) this.connection = undefined;
      });
    }
    return this.connection;
  }
}

import { headers as natsHeaders, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';
import { connectNats, InboxRequests } from '@feedmill/event-log';
import { currentRequestId, REQUEST_ID_HEADER } from '@feedmill/observability';

export { NoResponderError, RequestTimeoutError } from '@feedmill/event-log';

/** How a service client reaches the services: one request, and its reply's value. */
export interface Requests {
  /** The reply's value; rejects with what the handler failed with (an error body), or with the transport's error. */
  send(subject: string, payload: unknown, timeoutMs: number): Promise<unknown>;
  close(): Promise<void>;
}

interface Connected {
  connection: NatsConnection;
  requests: InboxRequests;
}

/**
 * Requests to the services' Nest NATS servers (`ServerNats`), each a message and its reply on
 * the connection's one inbox subscription ({@link InboxRequests}). Nest's NATS client
 * subscribes to a new inbox for every request and unsubscribes once answered, two more
 * protocol messages for the client and nats-server to handle each time, behind an RxJS
 * pipeline per request.
 *
 * The messages are Nest's: a request is `{ pattern, data, id }` in JSON (an `id` asks for a
 * reply), the caller's request id in the `x-request-id` header; a reply is
 * `{ response, err, isDisposed, id }`, one message for a handler that returns one value, as
 * every service handler does.
 */
export class NatsRequests implements Requests {
  private connecting?: Promise<Connected>;
  private lastId = 0;

  constructor(private readonly servers: string[]) {}

  async send(subject: string, payload: unknown, timeoutMs: number): Promise<unknown> {
    const { requests } = await this.connected();
    const requestId = currentRequestId();
    let headers: MsgHdrs | undefined;
    if (requestId !== undefined) {
      headers = natsHeaders();
      headers.set(REQUEST_ID_HEADER, requestId);
    }
    const packet = JSON.stringify({ pattern: subject, data: payload, id: (++this.lastId).toString(36) });
    const reply = await requests.request(subject, packet, timeoutMs, headers);
    const { response, err } = reply.json<{ response?: unknown; err?: unknown }>();
    if (err !== undefined && err !== null) throw err;
    return response;
  }

  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = undefined;
    const connected = await connecting?.catch(() => undefined);
    connected?.requests.failAll(new Error('the service client was closed'));
    await connected?.connection.close();
  }

  /** The connection and its inbox subscription, made at the first request; a failed attempt is made again at the next. */
  private connected(): Promise<Connected> {
    if (!this.connecting) {
      const connecting = connectNats({ servers: this.servers }).then((connection) => {
        // Closed for good: the next request connects anew (what waited on it has failed).
        void connection.closed().then(() => {
          if (this.connecting === connecting) this.connecting = undefined;
        });
        return { connection, requests: new InboxRequests(connection) };
      });
      this.connecting = connecting;
      connecting.catch(() => {
        if (this.connecting === connecting) this.connecting = undefined;
      });
    }
    return this.connecting;
  }
}

import { createInbox, headers as natsHeaders, type MsgHdrs, type Msg, type NatsConnection } from '@nats-io/transport-node';
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

/** No answer came within the request's time. */
export class RequestTimeoutError extends Error {
  override readonly name = 'RequestTimeoutError';
}

interface Waiting {
  subject: string;
  resolve: (reply: Msg) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

interface Connected {
  connection: NatsConnection;
  /** The subject every reply of this connection comes back under, a request's token after it. */
  inbox: string;
}

/**
 * Requests to the services' Nest NATS servers (`ServerNats`): a request and its reply are two
 * messages, every reply arriving on the connection's one inbox subscription, where its token
 * finds the request that waits for it. Nest's NATS client subscribes to a new inbox for every
 * request and unsubscribes once answered, two more protocol messages for the client and
 * nats-server to handle each time, behind an RxJS pipeline per request; nats.js's own request
 * answers on one subscription too, but makes an error with its stack trace for every request
 * it completes (a tenth of a gateway's CPU per read).
 *
 * The messages are Nest's: a request is `{ pattern, data, id }` in JSON (an `id` asks for a
 * reply), the caller's request id in the `x-request-id` header; a reply is
 * `{ response, err, isDisposed, id }`, one message for a handler that returns one value, as
 * every service handler does. A subject with no process listening is answered at once by
 * nats-server with an empty status message (503).
 */
export class NatsRequests implements Requests {
  private connecting?: Promise<Connected>;
  private readonly waiting = new Map<string, Waiting>();
  private lastToken = 0;

  constructor(private readonly servers: string[]) {}

  async send(subject: string, payload: unknown, timeoutMs: number): Promise<unknown> {
    const { connection, inbox } = await this.connected();
    const token = (++this.lastToken).toString(36);
    const requestId = currentRequestId();
    let headers: MsgHdrs | undefined;
    if (requestId !== undefined) {
      headers = natsHeaders();
      headers.set(REQUEST_ID_HEADER, requestId);
    }
    const packet = JSON.stringify({ pattern: subject, data: payload, id: token });
    const reply = await new Promise<Msg>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new RequestTimeoutError(`no answer to ${subject} within ${timeoutMs} ms (timeout)`));
      }, timeoutMs);
      this.waiting.set(token, { subject, resolve, reject, timer });
      try {
        connection.publish(subject, packet, { reply: `${inbox}.${token}`, headers });
      } catch (error) {
        this.settle(token)?.reject(error as Error);
      }
    });
    const { response, err } = reply.json<{ response?: unknown; err?: unknown }>();
    if (err !== undefined && err !== null) throw err;
    return response;
  }

  async close(): Promise<void> {
    const connecting = this.connecting;
    this.connecting = undefined;
    for (const token of [...this.waiting.keys()]) this.settle(token)?.reject(new Error('the service client was closed'));
    await (await connecting?.catch(() => undefined))?.connection.close();
  }

  /** The connection and its inbox subscription, made at the first request; a failed attempt is made again at the next. */
  private connected(): Promise<Connected> {
    if (!this.connecting) {
      const connecting = connectNats({ servers: this.servers }).then((connection) => {
        const inbox = createInbox();
        connection.subscribe(`${inbox}.*`, {
          callback: (error, reply) => {
            if (!error) this.answered(reply);
          },
        });
        // Closed for good (it reconnects however long the server is away, so only a close or
        // a fatal error ends it): what waits on it fails now, and the next request connects anew.
        void connection.closed().then(() => {
          if (this.connecting !== connecting) return;
          this.connecting = undefined;
          for (const token of [...this.waiting.keys()]) this.settle(token)?.reject(new Error('the NATS connection closed'));
        });
        return { connection, inbox };
      });
      this.connecting = connecting;
      connecting.catch(() => {
        if (this.connecting === connecting) this.connecting = undefined;
      });
    }
    return this.connecting;
  }

  /** A reply: to the request its token names, unless that one gave up waiting. */
  private answered(reply: Msg): void {
    const waiting = this.settle(reply.subject.slice(reply.subject.lastIndexOf('.') + 1));
    if (!waiting) return;
    if (reply.data.length === 0 && reply.headers?.code === 503) waiting.reject(new NoResponderError(`no process answers ${waiting.subject}`));
    else waiting.resolve(reply);
  }

  /** The request `token` names, no longer waiting. */
  private settle(token: string): Waiting | undefined {
    const waiting = this.waiting.get(token);
    if (!waiting) return undefined;
    this.waiting.delete(token);
    clearTimeout(waiting.timer);
    return waiting;
  }
}

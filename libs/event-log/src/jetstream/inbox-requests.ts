import { createInbox, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { REPLY_PART_HEADER, ReplyParts, type Reply } from './reply-parts.js';

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
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
  /** Set while a reply sent in parts ({@link publishReply}) is arriving. */
  parts?: ReplyParts;
}

/**
 * Requests over one NATS connection, every reply arriving on its one inbox subscription,
 * where the token at the end of the reply subject finds the request that waits for it.
 * nats.js's own request answers on one subscription too, but makes an error with its stack
 * trace for every request it completes (a tenth of a gateway's CPU per read, a twentieth of
 * content's per JetStream append). A subject with no process listening is answered at once
 * by nats-server with an empty status message (503): {@link NoResponderError}. A reply too
 * large for one message arrives in parts, put together here (see `publishReply`).
 */
export class InboxRequests {
  private readonly inbox = createInbox();
  private readonly waiting = new Map<string, Waiting>();
  private readonly replies: Subscription;
  private lastToken = 0;

  constructor(private readonly connection: NatsConnection) {
    this.replies = connection.subscribe(`${this.inbox}.*`, {
      callback: (error, reply) => {
        if (!error) this.answered(reply);
      },
    });
    // Closed for good (a connection made by `connectNats` reconnects however long the server
    // is away, so only a close or a fatal error ends it): what waits on it fails now.
    void connection.closed().then(() => this.failAll(new Error('the NATS connection closed')));
  }

  /** The reply to `payload` sent to `subject`, or an error once `timeoutMs` passed without one. */
  request(subject: string, payload: string | Uint8Array, timeoutMs: number, headers?: MsgHdrs): Promise<Reply> {
    const token = (++this.lastToken).toString(36);
    return new Promise<Reply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(token);
        reject(new RequestTimeoutError(`no answer to ${subject} within ${timeoutMs} ms (timeout)`));
      }, timeoutMs);
      this.waiting.set(token, { subject, resolve, reject, timer });
      try {
        this.connection.publish(subject, payload, { reply: `${this.inbox}.${token}`, headers });
      } catch (error) {
        this.settle(token)?.reject(error as Error);
      }
    });
  }

  /** Stops taking replies, on a connection that stays open for others: what still waits fails. */
  close(): void {
    this.replies.unsubscribe();
    this.failAll(new Error('the requests were closed'));
  }

  /** Fails every request still waiting with `error`. */
  failAll(error: Error): void {
    for (const token of [...this.waiting.keys()]) this.settle(token)?.reject(error);
  }

  /** A reply: to the request its token names, unless that one gave up waiting. */
  private answered(reply: Msg): void {
    const token = reply.subject.slice(reply.subject.lastIndexOf('.') + 1);
    const part = reply.headers?.get(REPLY_PART_HEADER);
    if (part) {
      this.partAnswered(token, reply, part);
      return;
    }
    const waiting = this.settle(token);
    if (!waiting) return;
    if (reply.data.length === 0 && reply.headers?.code === 503) waiting.reject(new NoResponderError(`no process answers ${waiting.subject}`));
    else waiting.resolve(reply);
  }

  /** A part of a reply sent in parts: the request is answered once the last one is in. */
  private partAnswered(token: string, message: Msg, part: string): void {
    const waiting = this.waiting.get(token);
    if (!waiting) return;
    try {
      const whole = (waiting.parts ??= new ReplyParts()).add(message, part);
      if (whole) this.settle(token)?.resolve(whole);
    } catch (error) {
      this.settle(token)?.reject(error as Error);
    }
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

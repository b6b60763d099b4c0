import { FeedmillError, type ErrorBody, type ReplyOf, type RequestOf, type Subject } from '@feedmill/contracts';
import { currentRequestId, withRequestId } from '@feedmill/observability';
import { toErrorBody, toFeedmillError } from './error-body.js';
import type { PartitionRoute, ServiceClient } from './service-client.js';
import type { PageSubject, WrittenPage } from './written-page.js';

/**
 * A message channel to another process of the same program: a `node:cluster` worker's
 * `process`, or the primary's `Worker` for it (both with `serialization: 'advanced'`, so
 * strings and objects cross as they are, not as JSON text).
 */
export interface MessageLink {
  send(message: unknown): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

/** What asks: `request` answers the reply, `page` a {@link WrittenPage}. */
type Kind = 'request' | 'page';
/** `requestId` names the HTTP request the call serves, so that the services' log lines carry it. */
type Call = [id: number, kind: Kind, subject: Subject, payload: unknown, route: PartitionRoute | undefined, requestId: string | undefined];
type Answer = [id: number, ok: true, value: unknown] | [id: number, ok: false, error: ErrorBody];

/**
 * Messages sent in one turn of the event loop, sent as one: a message costs a write on
 * one side and a wake-up on the other, and under load many calls are made in the same turn.
 */
class Batches<T> {
  private pending: T[] = [];

  constructor(private readonly link: MessageLink) {}

  push(item: T): void {
    if (this.pending.push(item) === 1) setImmediate(() => this.flush());
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.link.send(batch);
  }
}

/**
 * The services of the process at the other end of a {@link MessageLink}, for a process
 * that answers HTTP in front of them (the standalone's HTTP workers).
 *
 * Nothing is validated on the way: both ends are the same build, one forked by the other
 * and joined by a private channel, so a request is what typed code at the edge built from
 * validated input, and a reply what the services' typed handlers answered, as in-process.
 */
export class LinkedServiceClient implements ServiceClient {
  private readonly calls: Batches<Call>;
  private readonly waiting = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; subject: Subject }>();
  private nextId = 0;

  /**
   * A cluster worker exits when its primary is gone, and its calls with it, so calls wait
   * for no timeout here.
   */
  constructor(link: MessageLink) {
    this.calls = new Batches(link);
    // Batches of answers are arrays; other messages on the link (a realtime bus's) are not.
    link.on('message', (message) => Array.isArray(message) && this.settle(message as Answer[]));
  }

  request<S extends Subject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<ReplyOf<S>> {
    return this.call('request', subject, payload, route) as Promise<ReplyOf<S>>;
  }

  requestPage<S extends PageSubject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<WrittenPage> {
    return this.call('page', subject, payload, route) as Promise<WrittenPage>;
  }

  async close(): Promise<void> {}

  private call(kind: Kind, subject: Subject, payload: unknown, route: PartitionRoute | undefined): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject, subject });
      this.calls.push([id, kind, subject, payload, route, currentRequestId()]);
    });
  }

  private settle(answers: Answer[]): void {
    for (const [id, ok, value] of answers) {
      const waiting = this.waiting.get(id);
      if (!waiting) continue;
      this.waiting.delete(id);
      if (ok) waiting.resolve(value);
      else waiting.reject(toFeedmillError(value, waiting.subject));
    }
  }
}

/**
 * Answers the calls of a {@link LinkedServiceClient} at the other end of `link` with this
 * process's services, through `client` (the in-process client). Until `ready` says they
 * are, every call is refused as `unavailable`, so that a readiness probe answers at once
 * while the services catch up with the log.
 */
export function serveLink(link: MessageLink, client: ServiceClient, ready: () => boolean = () => true): void {
  const answers = new Batches<Answer>(link);
  const answer = async ([id, kind, subject, payload, route]: Call): Promise<void> => {
    try {
      if (!ready()) throw new FeedmillError('unavailable', 'the services are starting: they answer once they have caught up with the log');
      // The casts join a subject to its own payload type, which a tuple cannot express.
      const value = kind === 'page' ? await client.requestPage(subject as PageSubject, payload as never, route) : await client.request(subject, payload as never, route);
      answers.push([id, true, value]);
    } catch (error) {
      answers.push([id, false, toErrorBody(toFeedmillError(error, subject))]);
    }
  };
  link.on('message', (message) => {
    if (!Array.isArray(message)) return;
    for (const call of message as Call[]) void withRequestId(call[5], () => answer(call));
  });
}

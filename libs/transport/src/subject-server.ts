import { throwError } from 'rxjs';
import type { DrainingNatsServer } from './draining-nats.server.js';
import type { InProcessServer } from './in-process.server.js';
import { failureBody } from './rpc-error.filter.js';

/** Answers a request arriving on a subject: the payload as it arrives, the reply to send. */
export type SubjectHandler = (payload: unknown) => Promise<unknown>;

/**
 * Subjects a process starts and stops answering while it runs (a timeline partition it takes
 * or lets go), beside the fixed ones of its `@MessagePattern` controllers. Replies and errors
 * travel as the controllers' do, so callers see no difference.
 */
export interface SubjectServer {
  /** Answers `subject` with `handler` until the handle is stopped; resolves once requests reach it. */
  answer(subject: string, handler: SubjectHandler): Promise<{ stop(): void }>;
  /**
   * Aborted when the process starts to stop: the server takes no more requests and gives
   * those it holds the shutdown grace, so a handler's waits should end now and it answer
   * with what it has.
   */
  readonly stopping: AbortSignal;
}

export const SUBJECT_SERVER = Symbol('SubjectServer');

/** The handler as a Nest message handler: a failure becomes the error body a controller's filter would send. */
function asMessageHandler(handler: SubjectHandler) {
  return async (payload: unknown) => {
    try {
      return await handler(payload);
    } catch (error) {
      return throwError(() => failureBody(error));
    }
  };
}

/**
 * Over the NATS server a service listens with: subscribes on its connection in the service's
 * queue group (so that replicas that all answer a subject share its requests), and hands
 * messages to Nest's own handling, which speaks the callers' wire format. The server drains
 * these subscriptions with its own when it stops.
 */
export class NatsSubjectServer implements SubjectServer {
  private listening!: () => void;
  private readonly listened = new Promise<void>((resolve) => (this.listening = resolve));

  constructor(
    private readonly server: DrainingNatsServer,
  ) {}

  get stopping(): AbortSignal {
    return this.server.stopping;
  }

  /** Call once the server listens: subjects asked for before then are answered from that moment. */
  listens(): void {
    this.listening();
  }

  async answer(subject: string, handler: SubjectHandler): Promise<{ stop(): void }> {
    await this.listened;
    this.server.addHandler(subject, asMessageHandler(handler));
    const subscription = this.server.subscribe(subject);
    await this.server.flush();
    return subscription;
  }
}

/** Over the standalone's {@link InProcessServer}: the handler is called directly, as the controllers' methods are. */
export class InProcessSubjectServer implements SubjectServer {
  /** The standalone stops its HTTP side first: nothing arrives here while it stops. */
  readonly stopping = new AbortController().signal;

  constructor(private readonly server: InProcessServer) {}

  async answer(subject: string, handler: SubjectHandler): Promise<{ stop(): void }> {
    this.server.answerDirectly(subject, handler);
    return { stop: () => this.server.removeHandler(subject) };
  }
}

import { BaseRpcContext, Server, type CustomTransportStrategy, type MessageHandler } from '@nestjs/microservices';
import type { Observable } from 'rxjs';
import { FeedmillError } from '@feedmill/contracts';

/**
 * A Nest transport for the standalone process: the same `@MessagePattern` controllers
 * that serve NATS in the cluster, called in-process by {@link InProcessServiceClient}.
 */
export class InProcessServer extends Server implements CustomTransportStrategy {
  listen(callback: () => void): void {
    callback();
  }

  close(): void {}

  on(): void {}

  unwrap<T>(): T {
    return this as unknown as T;
  }

  private readonly handlerCache = new Map<string, MessageHandler>();

  /** Stops answering `subject` (a timeline partition let go). */
  removeHandler(subject: string): void {
    this.messageHandlers.delete(subject);
    this.handlerCache.delete(subject);
  }

  async dispatch(subject: string, payload: unknown): Promise<Observable<unknown>> {
    // Nest normalizes the pattern on every lookup; subjects are plain strings, so once is enough.
    let handler = this.handlerCache.get(subject) ?? null;
    if (!handler) {
      handler = this.getHandlerByPattern(subject);
      if (handler) this.handlerCache.set(subject, handler);
    }
    if (!handler) throw new FeedmillError('unavailable', `no handler for ${subject} in this process`);
    return this.transformToObservable(await handler(payload, new BaseRpcContext([subject])));
  }
}

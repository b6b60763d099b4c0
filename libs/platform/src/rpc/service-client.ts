import type { ClientProxy } from '@nestjs/microservices';
import { firstValueFrom, lastValueFrom, timeout, type Observable } from 'rxjs';
import { toFeedmillError } from './error-body.js';
import type { InProcessServer } from './in-process.server.js';

/** Request/reply to another service. Failures arrive as {@link FeedmillError}s. */
export interface ServiceClient {
  request<T>(subject: string, payload: unknown): Promise<T>;
  close(): Promise<void>;
}

export const SERVICE_CLIENT = Symbol('ServiceClient');

/** @defaultValue 15 s */
const DEFAULT_TIMEOUT_MS = 15_000;

/** Over a Nest client (NATS in the cluster). */
export class ProxyServiceClient implements ServiceClient {
  constructor(
    private readonly proxy: ClientProxy,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  async request<T>(subject: string, payload: unknown): Promise<T> {
    try {
      return await firstValueFrom(this.proxy.send<T>(subject, payload).pipe(timeout(this.timeoutMs)), {
        defaultValue: undefined as T,
      });
    } catch (error) {
      throw toFeedmillError(error, subject);
    }
  }

  async close(): Promise<void> {
    await this.proxy.close();
  }
}

/** Calls the handlers of an {@link InProcessServer} directly: no sockets, no serialization. */
export class InProcessServiceClient implements ServiceClient {
  constructor(private readonly server: InProcessServer) {}

  async request<T>(subject: string, payload: unknown): Promise<T> {
    try {
      const reply: Observable<T> = await this.server.dispatch<T>(subject, payload);
      return await lastValueFrom(reply, { defaultValue: undefined as T });
    } catch (error) {
      throw toFeedmillError(error, subject);
    }
  }

  async close(): Promise<void> {}
}

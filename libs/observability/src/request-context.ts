import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** What a request carries through every process it reaches: its id, for the log lines it causes. */
export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/** The header that carries a request id over HTTP and in NATS message headers. */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Ids a caller may choose: printable, short, no spaces or quotes, so that one cannot forge
 * log lines or fill them. Anything else is replaced by a generated id.
 */
const ACCEPTED_ID = /^[A-Za-z0-9._:/+=-]{1,128}$/;

/** The caller's id when it is an acceptable one, else a new UUID. */
export function requestIdFrom(header: unknown): string {
  return typeof header === 'string' && ACCEPTED_ID.test(header) ? header : randomUUID();
}

/** Runs `work` as part of the request `requestId`: what it logs, and what it asks other services, carries the id. */
export function withRequestId<T>(requestId: string | undefined, work: () => T): T {
  return requestId === undefined ? work() : storage.run({ requestId }, work);
}

/** The id of the request the running code serves, if it serves one. */
export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

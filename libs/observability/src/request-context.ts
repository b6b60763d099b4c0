import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';

/** What a request carries through every process it reaches: its id, for the log lines it causes. */
export interface RequestContext {
  requestId: string;
}

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * Whether requests carry their context here. Before Node 24 (and without
 * `--experimental-async-context-frame`), the first `AsyncLocalStorage.run` turns on promise
 * hooks for the whole process, and every `await` of the log, fan-out and timelines then
 * costs two to four times as much (measured on Node 20: 2M awaits in 0.2-0.4 s without,
 * 0.8-1.1 s with). Node 24 keeps the context in async context frames, at no measurable cost.
 */
export type RequestIdsMode = 'auto' | 'on' | 'off';
let carrying = true;

/** Sets whether request ids are carried: `auto` carries them where the runtime does it cheaply. */
export function carryRequestContext(mode: RequestIdsMode): boolean {
  carrying = mode === 'on' || (mode === 'auto' && contextIsCheap());
  return carrying;
}

/** Whether request ids are carried (see {@link carryRequestContext}). */
export function carriesRequestContext(): boolean {
  return carrying;
}

function contextIsCheap(): boolean {
  return Number(process.versions.node.split('.')[0]) >= 24 || process.execArgv.includes('--experimental-async-context-frame');
}

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
  return requestId === undefined || !carrying ? work() : storage.run({ requestId }, work);
}

/** The id of the request the running code serves, if it serves one. */
export function currentRequestId(): string | undefined {
  return carrying ? storage.getStore()?.requestId : undefined;
}

import autocannon from 'autocannon';
import { Latencies, type LatencyRecord } from './latency.js';

export interface PlannedRequest {
  /** What the request measures: `post`, `read`, `follow`. */
  kind: string;
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  body?: unknown;
}

export interface HttpLoadResult {
  seconds: number;
  byKind: Record<string, { ok: number; failed: number; latency: LatencyRecord }>;
  /** Successful responses per kind, per elapsed second. */
  perSecond: Array<Record<string, number>>;
  errors: number;
}

/** How soon autocannon hands over its results once the run is over. */
const RESULT_TICK_MS = 20;

/**
 * Drives the gateway with autocannon. Each connection asks `next` for its next request, so
 * one run can mix kinds; latencies are kept per kind. Either runs `amount` requests or for
 * `seconds`.
 */
export async function runHttpLoad(options: {
  baseUrl: string;
  connections: number;
  next: () => PlannedRequest | undefined;
  amount?: number;
  seconds?: number;
  onProgress?: (done: number) => void;
}): Promise<HttpLoadResult> {
  const byKind: Record<string, { ok: number; failed: number; latency: Latencies }> = {};
  const perSecond: Array<Record<string, number>> = [];
  const started = performance.now();
  let done = 0;
  let lastResponseAt = started;

  const instance = autocannon({
    url: options.baseUrl,
    connections: options.connections,
    pipelining: 1,
    // autocannon hands over its results only at a sample tick (every second by default): a run
    // of `amount` requests would end up to a second after its last response.
    sampleInt: RESULT_TICK_MS,
    ...(options.amount === undefined ? { duration: options.seconds ?? 10 } : { amount: options.amount }),
    requests: [
      {
        setupRequest: (request: Record<string, unknown>, context: Record<string, unknown>) => {
          const planned = options.next();
          if (!planned) return request;
          context['kind'] = planned.kind;
          request['method'] = planned.method;
          request['path'] = planned.path;
          if (planned.body === undefined) {
            delete request['body'];
            request['headers'] = {};
          } else {
            request['body'] = JSON.stringify(planned.body);
            request['headers'] = { 'content-type': 'application/json' };
          }
          return request;
        },
      },
    ],
  } as never) as unknown as Promise<{ errors: number; timeouts: number }> & NodeJS.EventEmitter;

  // With one request in flight per connection, a connection's context still names the
  // request that just completed when its response is reported.
  instance.on('response', (client: { requestIterator: { context: Record<string, unknown> } }, status: number, _bytes: number, ms: number) => {
    const kind = String(client.requestIterator.context['kind'] ?? 'unknown');
    const stats = (byKind[kind] ??= { ok: 0, failed: 0, latency: new Latencies() });
    if (status >= 200 && status < 300) {
      stats.ok++;
      stats.latency.recordMs(ms);
      const second = Math.floor((performance.now() - started) / 1000);
      const bucket = (perSecond[second] ??= {});
      bucket[kind] = (bucket[kind] ?? 0) + 1;
    } else {
      stats.failed++;
    }
    done++;
    lastResponseAt = performance.now();
    if (done % 500 === 0) options.onProgress?.(done);
  });
  const result = await instance;
  options.onProgress?.(done);
  // A run of `amount` requests lasts until its last response.
  const seconds = ((options.amount === undefined ? performance.now() : lastResponseAt) - started) / 1000;
  for (let i = 0; i < perSecond.length; i++) perSecond[i] ??= {};
  // The last second is only partly covered: left in, it would read as a drop.
  if (perSecond.length > Math.floor(seconds)) perSecond.length = Math.floor(seconds);
  return { seconds, byKind, perSecond, errors: result.errors + result.timeouts };
}

/** Runs that went on at the same time (one per kind), as one: counts per kind and per second side by side. */
export function mergeLoads<R extends HttpLoadResult>(runs: readonly R[]): HttpLoadResult {
  const perSecond: Array<Record<string, number>> = [];
  for (const run of runs) run.perSecond.forEach((counts, i) => Object.assign((perSecond[i] ??= {}), counts));
  return {
    seconds: Math.max(...runs.map((r) => r.seconds)),
    byKind: Object.assign({}, ...runs.map((r) => r.byKind)) as HttpLoadResult['byKind'],
    perSecond,
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
  };
}

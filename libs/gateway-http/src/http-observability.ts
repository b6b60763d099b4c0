import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { carriesRequestContext, metrics, REQUEST_ID_HEADER, requestIdFrom, withRequestId } from '@feedmill/observability';

type Timer = ReturnType<typeof metrics.httpRequestDuration.labels>;

/**
 * One route's latency series, one per status it answered: each is bound on the route's
 * first answer with that status, so that a request costs a map lookup and an observation,
 * never a label formatted or an object allocated.
 */
export class RouteTimings {
  private readonly byStatus = new Map<number, Timer>();

  constructor(
    private readonly method: string,
    private readonly route: string,
  ) {}

  observe(status: number, seconds: number): void {
    let timer = this.byStatus.get(status);
    if (!timer) {
      timer = metrics.httpRequestDuration.labels(this.method, this.route, String(status));
      this.byStatus.set(status, timer);
    }
    timer.observe(seconds);
  }
}

const TIMINGS = Symbol('routeTimings');

/** Requests no route matched, by method (Node's parser knows a fixed set of them). */
const unmatched = new Map<string, RouteTimings>();
function unmatchedTimings(method: string): RouteTimings {
  let timings = unmatched.get(method);
  if (!timings) unmatched.set(method, (timings = new RouteTimings(method, 'unmatched')));
  return timings;
}

/**
 * Measures every request by its route pattern (`/v1/feeds/:group/:id`, never the raw URL,
 * whose ids would make a series per feed) and status, hot routes and Nest's alike: each
 * route carries its {@link RouteTimings} in its config from registration on. Call before
 * any route is registered.
 */
export function measureRequests(fastify: FastifyInstance): void {
  fastify.addHook('onRoute', (route) => {
    const method = Array.isArray(route.method) ? route.method.join(',') : route.method;
    route.config = { ...(route.config as object | undefined), [TIMINGS]: new RouteTimings(method, route.url) } as typeof route.config;
  });
  fastify.addHook('onResponse', (request, reply, done) => {
    const timings = (request.routeOptions.config as { [TIMINGS]?: RouteTimings })[TIMINGS] ?? unmatchedTimings(request.method);
    timings.observe(reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

/** Fastify's options for request ids: the caller's `x-request-id` when it is an acceptable one (see `requestIdFrom`), else a new UUID. */
export const requestIdOptions = {
  requestIdHeader: false as const,
  genReqId: (request: { headers: Record<string, string | string[] | undefined> }) => requestIdFrom(request.headers[REQUEST_ID_HEADER]),
};

/** Whether the app writes a log line per request (`LOG_LEVEL=debug`). */
export function logsEveryRequest(): boolean {
  return Logger.isLevelEnabled('debug');
}

/**
 * The answer carries the request's id in `x-request-id`, and the route runs inside it, so
 * that every line logged for the request, in this process and in the services it asks
 * (over NATS headers, the HTTP workers' link, or in-process), carries it. Fastify's own
 * per-request logging stays off: at `LOG_LEVEL=log` the hot routes log nothing per request.
 */
export function carryRequestIds(fastify: FastifyInstance): void {
  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  // The body is parsed on the socket's callbacks, outside any context: the route enters it
  // here, just before it runs. A hook less per request where ids are not carried (REQUEST_IDS).
  if (carriesRequestContext()) fastify.addHook('preHandler', (request: FastifyRequest, _reply, done) => withRequestId(request.id, done));
  // At `LOG_LEVEL=debug` only: a line per request (never at `log`, which the hot routes' rates would flood).
  if (!logsEveryRequest()) return;
  const logger = new Logger('http');
  fastify.addHook('onResponse', (request, reply, done) => {
    withRequestId(request.id, () => logger.debug(`${request.method} ${request.routeOptions.url ?? request.url} ${reply.statusCode} in ${reply.elapsedTime.toFixed(1)} ms`));
    done();
  });
}

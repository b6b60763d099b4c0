import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import { parse as parseQuery } from 'fast-querystring';
import { GROUP_CHARACTERS, ID_CHARACTERS } from '@feedmill/contracts';
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from '@feedmill/observability';
import { OPEN_ACCESS, type Caller } from './auth/caller.js';
import type { TokenVerifier } from './auth/token-verifier.js';
import { toHttpError } from './http-errors.js';
import { logsEveryRequest, RouteTimings } from './http-observability.js';
import { limitsRates, type RateLimitOptions } from './rate-limits.js';

/** A feed read as the front door hands it over: the caller, the path's feed and the parsed query; it answers with the page's JSON. */
export type FeedRead = (caller: Caller, params: { group: string; id: string }, query: Record<string, unknown>) => Promise<string>;

/** The one route the door answers, as Fastify's route is registered (and named in the latency series both share). */
export const FEED_READ_ROUTE = '/v1/feeds/:group/:id';
export const JSON_TYPE = 'application/json; charset=utf-8';
/**
 * The query parser of the app's router and of the door alike (`routerOptions.querystringParser`),
 * so that a query means the same whichever answers it.
 */
export const parseQueryString = (query: string): Record<string, unknown> => parseQuery(query) as Record<string, unknown>;

const FEED_READ_PREFIX = '/v1/feeds/';
/** `/v1/feeds/<group>/<id>`, optionally with a query: only paths that name a feed as the API spells it, which need no decoding. */
const FEED_READ_PATH = new RegExp(`^/v1/feeds/(${GROUP_CHARACTERS})/(${ID_CHARACTERS})(?:\\?|$)`);

const logger = new Logger('http');

/**
 * Answers feed reads (`GET /v1/feeds/:group/:id`, every reader's timeline, all the time)
 * before Fastify routes them, and hands every other request to Fastify. A read through
 * Fastify spends more on the framework than on the read: routing, the request and reply
 * objects, every app's hooks and the reply's send pipeline, for a route that uses none of
 * them (it validates its own input and writes its own JSON). Answered here, a standalone
 * serves about a quarter more reads per second on the same core (README, Performance).
 *
 * The door does what Fastify and the app's hooks do for that route: the caller's token
 * checked (401 otherwise), the request id taken or made and sent back in `x-request-id`
 * (and carried into the services when request ids are), the answer timed in the route's
 * latency series once it has gone out, errors answered as the route answers them
 * ({@link toHttpError}), the query parsed by the router's own parser. It takes a request
 * only when that is all it needs: a GET without a body, whose path spells a feed with no
 * character to decode; anything else (HEAD, an encoded or malformed path, a trailing slash)
 * goes to Fastify, whose route gives the same answer the slower way. It does not open when
 * the app does per request what it does not (rate limits, debug lines per request: see
 * {@link doorStaysShut}), and it stands aside once Fastify runs its `preClose` hooks, so that
 * Fastify answers 503 from then on as it does for every route. Which hooks Fastify runs for
 * that route is pinned by a test (front-door-app.int.spec.ts): one added later must be done
 * here too, or keep the door shut.
 */
export class FrontDoor {
  private feedRead: FeedRead | undefined;
  private closing = false;
  private readonly timings = new RouteTimings('GET', FEED_READ_ROUTE);

  constructor(private readonly verifier: TokenVerifier | undefined) {}

  /** Whether the door takes feed reads now: a route gave it one, and the app is not closing. */
  get open(): boolean {
    return this.feedRead !== undefined && !this.closing;
  }

  /** Fastify's `serverFactory`: the HTTP/1 server Fastify would make, with this door in front of Fastify's handler. */
  readonly serverFactory: FastifyServerFactory = (fastifyHandler, options) => {
    if (options['https'] || options['http2']) throw new Error('the front door stands before an HTTP/1 server only');
    const server = createServer((options['http'] ?? {}) as object, (request, response) => {
      if (!this.tryAnswer(request, response)) fastifyHandler(request, response);
    });
    // What Fastify sets on the server it makes itself (fastify/lib/server.js).
    server.keepAliveTimeout = options['keepAliveTimeout'] as number;
    server.requestTimeout = options['requestTimeout'] as number;
    server.setTimeout(options['connectionTimeout'] as number);
    const maxRequestsPerSocket = options['maxRequestsPerSocket'] as number;
    if (maxRequestsPerSocket > 0) server.maxRequestsPerSocket = maxRequestsPerSocket;
    return server;
  };

  /** From now on, feed reads this door takes are answered by `read`. */
  answerFeedReads(read: FeedRead): void {
    this.feedRead = read;
  }

  /** The app is closing: every request goes to Fastify from now on. */
  close(): void {
    this.closing = true;
  }

  /** Answers the request and returns true when the door takes it; false leaves it to Fastify. */
  private tryAnswer(request: IncomingMessage, response: ServerResponse): boolean {
    const read = this.feedRead;
    if (!read || this.closing || request.method !== 'GET' || !request.url!.startsWith(FEED_READ_PREFIX) || hasBody(request)) return false;
    const url = request.url!;
    const path = FEED_READ_PATH.exec(url);
    if (!path) return false;
    const started = performance.now();
    const queryAt = url.indexOf('?');
    const query = queryAt < 0 ? {} : parseQueryString(url.slice(queryAt + 1));
    const requestId = requestIdFrom(request.headers[REQUEST_ID_HEADER]);
    const params = { group: path[1]!, id: path[2]! };
    const answered = (json: string) => this.send(response, 200, json, requestId, started);
    const failed = (error: unknown) => {
      const { status, body } = toHttpError(error);
      this.send(response, status, JSON.stringify(body), requestId, started);
    };
    withRequestId(requestId, () => {
      let page: Promise<string>;
      try {
        // With no tokens to check, the read starts now rather than a turn later.
        page = this.verifier ? this.verifier.callerOf(request.headers.authorization).then((caller) => read(caller, params, query)) : read(OPEN_ACCESS, params, query);
      } catch (error) {
        page = Promise.reject(error);
      }
      page.then(answered, failed).catch((error: unknown) => abandon(response, error));
    });
    return true;
  }

  private send(response: ServerResponse, status: number, json: string, requestId: string, started: number): void {
    response.writeHead(status, { [REQUEST_ID_HEADER]: requestId, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(json) });
    // Timed once the answer has gone out, as Fastify's onResponse is: an answer to a client that left is not counted.
    response.end(json, () => this.timings.observe(status, (performance.now() - started) / 1000));
  }
}

/**
 * Whether the app does per request what the door does not, so that every request must go
 * through Fastify: rate limits (a hook of their own) and, at `debug`, a log line per request.
 * Asked where those are set up, with the same predicates.
 */
export function doorStaysShut(rateLimits: RateLimitOptions | undefined): boolean {
  return limitsRates(rateLimits) || logsEveryRequest();
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The door in front of this instance's server, when it has one. */
    frontDoor?: FrontDoor;
  }
}

/** Puts `door` in front of `fastify`'s server (made by the door's `serverFactory`), for the routes to find; it stands aside when Fastify runs its `preClose` hooks. */
export function openFrontDoor(fastify: FastifyInstance, door: FrontDoor): void {
  fastify.decorate('frontDoor', door);
  fastify.addHook('preClose', (done) => {
    door.close();
    done();
  });
}

/** Whether a request comes with a body, which the door leaves to Fastify's body handling. */
function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return (length !== undefined && length !== '0') || request.headers['transfer-encoding'] !== undefined;
}

/** A read whose answer could not be written (a bug): logged, and the connection closed, rather than a request left hanging or the process brought down. */
function abandon(response: ServerResponse, error: unknown): void {
  logger.error(`a feed read's answer could not be written: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  response.destroy();
}

import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { parse as parseQuery } from 'fast-querystring';
import { GROUP_PATTERN, ID_PATTERN } from '@feedmill/contracts';
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from '@feedmill/observability';
import { OPEN_ACCESS, type Caller } from './auth/caller.js';
import type { TokenVerifier } from './auth/token-verifier.js';
import { toHttpError } from './http-errors.js';
import { RouteTimings } from './http-observability.js';

/** A feed read as the front door hands it over: the caller, the path's feed and the parsed query; it answers with the page's JSON. */
export type FeedRead = (caller: Caller, params: { group: string; id: string }, query: Record<string, unknown>) => Promise<string>;

/** The options Fastify gives its `serverFactory`, with its defaults filled in. */
interface FastifyServerOptions {
  keepAliveTimeout: number;
  requestTimeout: number;
  connectionTimeout: number;
  maxRequestsPerSocket: number;
}

/** The one route the door answers, named as Fastify names it (for the latency series it shares). */
export const FEED_READ_ROUTE = '/v1/feeds/:group/:id';
const FEED_READ_PREFIX = '/v1/feeds/';
const JSON_TYPE = 'application/json; charset=utf-8';
const GROUP = GROUP_PATTERN.source.slice(1, -1);
const ID = ID_PATTERN.source.slice(1, -1);
/** `/v1/feeds/<group>/<id>`, optionally with a query: only paths that name a feed as the API spells it, which need no decoding. */
const FEED_READ_PATH = new RegExp(`^/v1/feeds/(${GROUP})/(${ID})(?:\\?|$)`);

/**
 * Answers feed reads (`GET /v1/feeds/:group/:id`, every reader's timeline, all the time)
 * before Fastify routes them, and hands every other request to Fastify. A read through
 * Fastify spends more on the framework than on the read: routing, the request and reply
 * objects, every app's hooks and the reply's send pipeline, for a route that uses none of
 * them (it validates its own input and writes its own JSON). Answered here, a standalone
 * serves about a quarter more reads per second on the same core (README, Performance).
 *
 * The door does what Fastify and the app's hooks would do for that route: the caller's
 * token checked (401 otherwise), the request id taken or made and sent back in
 * `x-request-id` (and carried into the services when request ids are), the answer timed in
 * the route's own latency series, errors answered as the route answers them
 * ({@link toHttpError}), the query parsed by Fastify's own parser. It takes a request only
 * when that is all it needs: a GET without a body, whose path spells a feed with no
 * character to decode; anything else (HEAD, an encoded or malformed path, a trailing
 * slash) goes to Fastify, whose route gives the same answer the slower way. It does not
 * open at all when the app does something per request that it does not (rate limits,
 * debug lines per request), and it stands aside once the app starts to close, so that
 * Fastify answers 503 as it does for every route.
 */
export class FrontDoor {
  private feedRead: FeedRead | undefined;
  private closing = false;
  private readonly timings = new RouteTimings('GET', FEED_READ_ROUTE);

  constructor(private readonly verifier: TokenVerifier | undefined) {}

  /** Fastify's `serverFactory`: the HTTP/1 server Fastify would make, with this door in front of Fastify's handler. */
  readonly serverFactory = (fastifyHandler: RequestListener, options: FastifyServerOptions): Server => {
    const server = createServer((request, response) => {
      if (!this.answers(request, response)) fastifyHandler(request, response);
    });
    // What Fastify sets on the server it makes itself.
    server.keepAliveTimeout = options.keepAliveTimeout;
    server.requestTimeout = options.requestTimeout;
    server.setTimeout(options.connectionTimeout);
    if (options.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
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

  /** Whether the door took the request (and will answer it). */
  private answers(request: IncomingMessage, response: ServerResponse): boolean {
    const read = this.feedRead;
    if (!read || this.closing || request.method !== 'GET' || !request.url!.startsWith(FEED_READ_PREFIX) || hasBody(request)) return false;
    const url = request.url!;
    const path = FEED_READ_PATH.exec(url);
    if (!path) return false;
    const started = performance.now();
    const queryAt = url.indexOf('?');
    const query = queryAt < 0 ? {} : (parseQuery(url.slice(queryAt + 1)) as Record<string, unknown>);
    const requestId = requestIdFrom(request.headers[REQUEST_ID_HEADER]);
    const params = { group: path[1]!, id: path[2]! };
    const answered = (json: string) => this.send(response, 200, json, requestId, started);
    const failed = (error: unknown) => {
      const { status, body } = toHttpError(error);
      this.send(response, status, JSON.stringify(body), requestId, started);
    };
    withRequestId(requestId, () => {
      const verifier = this.verifier;
      // With no tokens to check, the read starts now rather than a turn later.
      const page = verifier ? verifier.callerOf(request.headers.authorization).then((caller) => read(caller, params, query)) : read(OPEN_ACCESS, params, query);
      page.then(answered, failed);
    });
    return true;
  }

  private send(response: ServerResponse, status: number, json: string, requestId: string, started: number): void {
    response.writeHead(status, { [REQUEST_ID_HEADER]: requestId, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(json) });
    response.end(json);
    this.timings.observe(status, (performance.now() - started) / 1000);
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The door in front of this instance's server, when it has one. */
    frontDoor?: FrontDoor;
  }
}

/** Puts `door` in front of `fastify`'s server (made by the door's `serverFactory`), for the routes to find; it stands aside when `fastify` starts to close. */
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

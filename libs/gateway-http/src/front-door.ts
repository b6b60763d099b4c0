import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { BadRequestException, Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import { parse as parseQuery } from 'fast-querystring';
import { GROUP_CHARACTERS, ID_CHARACTERS } from '@feedmill/contracts';
import { REQUEST_ID_HEADER, requestIdFrom, withRequestId } from '@feedmill/observability';
import { OPEN_ACCESS, type Caller } from './auth/caller.js';
import type { TokenVerifier } from './auth/token-verifier.js';
import { toHttpError } from './http-errors.js';
import { logsEveryRequest, RouteTimings } from './http-observability.js';
import { limitsRates, type RateLimitOptions } from './rate-limits.js';

type FeedParams = { group: string; id: string };
/** A feed read as the front door hands it over: the caller, the path's feed and the parsed query; it answers with the page's JSON. */
export type FeedRead = (caller: Caller, params: FeedParams, query: Record<string, unknown>) => Promise<string>;
/** A post as the front door hands it over: the caller, the path's feed and the parsed body; it answers with the stored activity's JSON. */
export type FeedPost = (caller: Caller, params: FeedParams, body: unknown) => Promise<string>;

/** The routes the door answers, as Fastify's routes are registered (and named in the latency series both share). */
export const FEED_READ_ROUTE = '/v1/feeds/:group/:id';
export const FEED_POST_ROUTE = '/v1/feeds/:group/:id/activities';
export const JSON_TYPE = 'application/json; charset=utf-8';
/**
 * The query parser of the app's router and of the door alike (`routerOptions.querystringParser`),
 * so that a query means the same whichever answers it.
 */
export const parseQueryString = (query: string): Record<string, unknown> => parseQuery(query) as Record<string, unknown>;

const FEEDS_PREFIX = '/v1/feeds/';
/** `/v1/feeds/<group>/<id>`, optionally with a query: only paths that name a feed as the API spells it, which need no decoding. */
const FEED_READ_PATH = new RegExp(`^/v1/feeds/(${GROUP_CHARACTERS})/(${ID_CHARACTERS})(?:\\?|$)`);
/** `/v1/feeds/<group>/<id>/activities`, spelled likewise, without a query. */
const FEED_POST_PATH = new RegExp(`^/v1/feeds/(${GROUP_CHARACTERS})/(${ID_CHARACTERS})/activities$`);
/**
 * The content types the door takes, in any case: JSON with no parameter or with the one
 * charset Fastify reads it in. Other spellings (`;charset=UTF-8` with no space, quotes) are
 * JSON to Fastify too, and go there: answered alike, a little slower.
 */
const JSON_CONTENT_TYPES = new Set(['application/json', 'application/json; charset=utf-8']);
/** Fastify's JSON parser, as `FastifyInstance.getDefaultJsonParser` makes it: `(request, body, done)`. */
type JsonParser = (request: unknown, body: string, done: (error: Error | null, parsed?: unknown) => void) => void;

const logger = new Logger('http');

/**
 * Answers the two requests every client sends all the time, feed reads
 * (`GET /v1/feeds/:group/:id`) and posts (`POST /v1/feeds/:group/:id/activities`), before
 * Fastify routes them, and hands every other request to Fastify. Through Fastify each
 * spends more on the framework than its route needs: routing, the request and reply
 * objects, every app's hooks and the reply's send pipeline, for routes that use none of them
 * (they validate their own input and write their own JSON). Answered here, a standalone
 * serves about a quarter more reads and a twentieth more posts per second on the same core
 * (README, Performance).
 *
 * The door does what Fastify and the app's hooks do for those routes: the caller's token
 * checked (401 otherwise), the request id taken or made and sent back in `x-request-id`
 * (and carried into the services when request ids are), the answer timed in the route's
 * latency series once it has gone out, errors answered as the routes answer them
 * ({@link toHttpError}), the query parsed by the router's own parser, a post's JSON body
 * read and parsed by Fastify's own JSON parser, with the app's poisoning settings, and a body
 * it refuses answered with `connection: close`, as Fastify does. It takes a request only
 * when that is all it needs: a path that spells a feed with no character to decode; a read
 * without a body; a post with a JSON body of a length given up front, within the route's
 * limit. Anything else
 * (HEAD, an encoded or malformed path, a trailing slash, another content type, a chunked or
 * oversized body) goes to Fastify, whose routes give the same answers the slower way. It
 * does not open when the app does per request what it does not (rate limits, debug lines per
 * request: see {@link doorStaysShut}), and it stands aside once Fastify runs its `preClose`
 * hooks, so that Fastify answers 503 from then on as it does for every route. Which hooks
 * Fastify runs for those routes is pinned by a test (front-door-app.int.spec.ts): one added
 * later must be done here too, or keep the door shut.
 */
export class FrontDoor {
  private feedRead: FeedRead | undefined;
  private feedPost: FeedPost | undefined;
  private closing = false;
  private readonly readTimings = new RouteTimings('GET', FEED_READ_ROUTE);
  private readonly postTimings = new RouteTimings('POST', FEED_POST_ROUTE);

  /** The post route's body limit and Fastify's JSON parser, as the app set them up (see {@link openFrontDoor}); no posts are taken before. */
  private posting: { bodyLimit: number; parseJson: JsonParser } | undefined;

  constructor(private readonly verifier: TokenVerifier | undefined) {}

  /** Whether the door takes requests now: a route gave it something to answer, and the app is not closing. */
  get open(): boolean {
    return (this.feedRead !== undefined || this.feedPost !== undefined) && !this.closing;
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

  /** From now on, posts this door takes are answered by `post`. */
  answerPosts(post: FeedPost): void {
    this.feedPost = post;
  }

  /** The app is closing: every request goes to Fastify from now on. */
  close(): void {
    this.closing = true;
  }

  /** Answers the request and returns true when the door takes it; false leaves it to Fastify. */
  private tryAnswer(request: IncomingMessage, response: ServerResponse): boolean {
    if (this.closing || !request.url!.startsWith(FEEDS_PREFIX)) return false;
    if (request.method === 'GET') return this.tryRead(request, response);
    if (request.method === 'POST') return this.tryPost(request, response);
    return false;
  }

  private tryRead(request: IncomingMessage, response: ServerResponse): boolean {
    const read = this.feedRead;
    if (!read || hasBody(request)) return false;
    const url = request.url!;
    const path = FEED_READ_PATH.exec(url);
    if (!path) return false;
    const queryAt = url.indexOf('?');
    const query = queryAt < 0 ? {} : parseQueryString(url.slice(queryAt + 1));
    const params = { group: path[1]!, id: path[2]! };
    this.answer(request, response, 200, this.readTimings, (caller) => read(caller, params, query));
    return true;
  }

  /**
   * A post whose body is JSON of a length given up front, within the route's limit; any other
   * goes to Fastify. As through Fastify, the token is checked before the body is read, and the
   * body is parsed by Fastify's own JSON parser: one it refuses (not JSON, or carrying
   * `__proto__` or `constructor.prototype` where the app refuses them) is answered with its
   * message, and the connection closed.
   */
  private tryPost(request: IncomingMessage, response: ServerResponse): boolean {
    const post = this.feedPost;
    const posting = this.posting;
    if (!post || !posting) return false;
    const isJson = JSON_CONTENT_TYPES.has(request.headers['content-type']?.toLowerCase() ?? '');
    const length = Number(request.headers['content-length']);
    const fitsUpFront = length > 0 && length <= posting.bodyLimit && request.headers['transfer-encoding'] === undefined;
    if (!isJson || !fitsUpFront) return false;
    const path = FEED_POST_PATH.exec(request.url!);
    if (!path) return false;
    const params = { group: path[1]!, id: path[2]! };
    this.answer(request, response, 201, this.postTimings, (caller) => bodyText(request, length).then((text) => post(caller, params, parsedBody(posting.parseJson, text))));
    return true;
  }

  /** Posts are taken from now on, with the post route's body limit and the app's JSON parser. */
  takePostsWith(bodyLimit: number, parseJson: JsonParser): void {
    this.posting = { bodyLimit, parseJson };
  }

  /**
   * Answers with `status` and the JSON `work` writes for the request's caller, or with the
   * error it fails with, as the routes answer errors; carries and sends back the request id,
   * and times the answer in the route's series.
   */
  private answer(request: IncomingMessage, response: ServerResponse, status: number, timings: RouteTimings, work: (caller: Caller) => Promise<string>): void {
    const started = performance.now();
    const requestId = requestIdFrom(request.headers[REQUEST_ID_HEADER]);
    const answered = (json: string) => this.send(response, status, json, requestId, timings, started);
    const failed = (error: unknown) => {
      if (error instanceof ClientGoneError) return response.destroy();
      const refusal = toHttpError(error);
      // As Fastify does after a body it could not parse.
      if (error instanceof UnparsableBodyError) response.setHeader('connection', 'close');
      this.send(response, refusal.status, JSON.stringify(refusal.body), requestId, timings, started);
    };
    withRequestId(requestId, () => {
      let done: Promise<string>;
      try {
        // With no tokens to check, the work starts now rather than a turn later.
        done = this.verifier ? this.verifier.callerOf(request.headers.authorization).then(work) : work(OPEN_ACCESS);
      } catch (error) {
        done = Promise.reject(error);
      }
      done.then(answered, failed).catch((error: unknown) => abandon(response, error));
    });
  }

  private send(response: ServerResponse, status: number, json: string, requestId: string, timings: RouteTimings, started: number): void {
    response.writeHead(status, { [REQUEST_ID_HEADER]: requestId, 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(json) });
    // Timed once the answer has gone out, as Fastify's onResponse is: an answer to a client that left is not counted.
    response.end(json, () => timings.observe(status, (performance.now() - started) / 1000));
  }
}

/** The request's body went with its client: no one is left to answer. */
class ClientGoneError extends Error {}

/** A post's body Fastify's JSON parser refused: answered as through Fastify (`invalid_json`, with its message), and the connection closed. */
class UnparsableBodyError extends BadRequestException {}

/** The whole body as text, decoded once at the end as Fastify's body reader does. */
function bodyText(request: IncomingMessage, length: number): Promise<string> {
  // A client that left while its token was checked: its request ended before anyone listened.
  if (request.destroyed) return Promise.reject(new ClientGoneError('the request ended before its body'));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, length).toString('utf8')));
    request.on('error', (error) => reject(new ClientGoneError('the request ended before its body', { cause: error })));
  });
}

/** The body as Fastify's JSON parser reads it (it answers synchronously); refused with its error's message. */
function parsedBody(parseJson: JsonParser, text: string): unknown {
  const result: { error: Error | null; parsed?: unknown } = { error: null };
  parseJson(undefined, text, (error, parsed) => Object.assign(result, { error, parsed }));
  if (result.error) throw new UnparsableBodyError(result.error.message);
  return result.parsed;
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

/**
 * Puts `door` in front of `fastify`'s server (made by the door's `serverFactory`), for the
 * routes to find; gives it the post route's body limit as registered (after the app's own
 * `onRoute` hooks, which may set it) and Fastify's JSON parser with the app's poisoning
 * settings; it stands aside when Fastify runs its `preClose` hooks. Call after the app's
 * `onRoute` hooks are added.
 */
export function openFrontDoor(fastify: FastifyInstance, door: FrontDoor): void {
  fastify.decorate('frontDoor', door);
  fastify.addHook('onRoute', (route) => {
    if (route.url !== FEED_POST_ROUTE || route.method !== 'POST') return;
    const { bodyLimit, onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig;
    door.takePostsWith(route.bodyLimit ?? bodyLimit!, fastify.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error') as JsonParser);
  });
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

/** A request whose answer could not be written (a bug): logged, and the connection closed, rather than a request left hanging or the process brought down. */
function abandon(response: ServerResponse, error: unknown): void {
  logger.error(`an answer at the front door could not be written: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  response.destroy();
}

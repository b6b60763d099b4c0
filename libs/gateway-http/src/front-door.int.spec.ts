import { request as httpRequest, type IncomingMessage, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import Fastify from 'fastify';
import { SignJWT } from 'jose';
import { FeedmillError } from '@feedmill/contracts';
import { waitFor } from '@feedmill/harness';
import { metricsRegistry } from '@feedmill/observability';
import { TokenVerifier } from './auth/token-verifier.js';
import { FEED_POST_ROUTE, FEED_READ_ROUTE, FrontDoor, type FeedRead } from './front-door.js';

/**
 * The door on a real HTTP server, with a handler in Fastify's place that answers what the
 * door hands on: which requests the door takes, what it passes to the read, and what it
 * answers.
 */
const SERVER_OPTIONS = { keepAliveTimeout: 5_000, requestTimeout: 0, connectionTimeout: 0, maxRequestsPerSocket: 0 };
const secret = 'a secret of more than sixteen characters';
const BODY_LIMIT = 1_000;

interface Answer {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let door: FrontDoor;
let baseUrl: string;
/** What the read was called with, last. */
let lastRead: { caller: unknown; params: unknown; query: unknown } | undefined;
let readAnswers: (params: { group: string; id: string }) => Promise<string>;
/** What the post was called with, last. */
let lastPost: { caller: unknown; params: unknown; body: unknown } | undefined;

function send(path: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body }));
    });
    req.on('error', reject);
    req.end(options.body);
  });
}

async function startDoor(verifier?: TokenVerifier): Promise<void> {
  door = new FrontDoor(verifier);
  door.takePostsWith(BODY_LIMIT, Fastify().getDefaultJsonParser('error', 'error') as never);
  const handedOn = (request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    response.writeHead(299, { 'content-type': 'text/plain' });
    response.end(`handed on: ${request.method} ${request.url}`);
  };
  server = door.serverFactory(handedOn, SERVER_OPTIONS);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  lastRead = undefined;
  readAnswers = async ({ group, id }) => JSON.stringify({ items: [], read: `${group}:${id}` });
  const read: FeedRead = (caller, params, query) => {
    lastRead = { caller, params, query };
    return readAnswers(params);
  };
  door.answerFeedReads(read);
  lastPost = undefined;
  door.answerPosts(async (caller, params, body) => {
    lastPost = { caller, params, body };
    return JSON.stringify({ id: 'a1', posted: body });
  });
}

async function stopDoor(): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** How many reads the route's latency series counted with this status. */
function countedReads(status: number): Promise<number> {
  return counted('GET', FEED_READ_ROUTE, status);
}

/** How many requests a route's latency series counted with this status. */
async function counted(method: string, route: string, status: number): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric('feedmill_http_request_duration_seconds')!.get();
  // A histogram's values carry the name of the series each belongs to (`_bucket`, `_sum`, `_count`).
  const values = metric.values as Array<(typeof metric.values)[number] & { metricName?: string }>;
  const count = values.find((value) => value.metricName === 'feedmill_http_request_duration_seconds_count' && value.labels['method'] === method && value.labels['route'] === route && value.labels['status'] === String(status));
  return count?.value ?? 0;
}

describe('with the API open', () => {
  beforeAll(() => startDoor());
  afterAll(() => stopDoor());

  it('answers a feed read with the page its read wrote, the query parsed, and a request id', async () => {
    const countedBefore = await countedReads(200);
    const answer = await send('/v1/feeds/timeline/alice?limit=2&cursor=abc');
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ items: [], read: 'timeline:alice' });
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
    expect(answer.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(lastRead).toEqual({ caller: { sub: undefined, admin: true }, params: { group: 'timeline', id: 'alice' }, query: { limit: '2', cursor: 'abc' } });
    expect(await countedReads(200)).toBe(countedBefore + 1);
  });

  it('keeps an acceptable request id and replaces one that is not', async () => {
    expect((await send('/v1/feeds/user/bob', { headers: { 'x-request-id': 'trace-17' } })).headers['x-request-id']).toBe('trace-17');
    expect((await send('/v1/feeds/user/bob', { headers: { 'x-request-id': 'two words' } })).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('parses a query as Fastify does: repeated keys as a list, an empty query as nothing', async () => {
    await send('/v1/feeds/timeline/alice?limit=1&limit=2');
    expect(lastRead!.query).toEqual({ limit: ['1', '2'] });
    await send('/v1/feeds/timeline/alice');
    expect(lastRead!.query).toEqual({});
  });

  it('answers a refused read as the route answers errors, and times it with its status', async () => {
    readAnswers = () => Promise.reject(new FeedmillError('invalid_request', 'query.limit: must be at most 100', 'query.limit'));
    const countedBefore = await countedReads(400);
    const answer = await send('/v1/feeds/timeline/alice?limit=1000');
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ code: 'invalid_request', message: 'query.limit: must be at most 100', field: 'query.limit' });
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(await countedReads(400)).toBe(countedBefore + 1);
  });

  it('answers a read that throws before it returns as one that fails', async () => {
    readAnswers = () => {
      throw new FeedmillError('unknown_group', 'feed group "nogroup" is not configured', 'group');
    };
    const answer = await send('/v1/feeds/nogroup/alice');
    expect(answer.status).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ code: 'unknown_group', message: 'feed group "nogroup" is not configured', field: 'group' });
  });

  it('closes the connection of a read whose answer cannot be written, and serves the next one', async () => {
    readAnswers = async () => undefined as unknown as string;
    await expect(send('/v1/feeds/timeline/alice')).rejects.toThrow(/socket hang up|ECONNRESET/);
    readAnswers = async () => '{"items":[]}';
    expect((await send('/v1/feeds/timeline/alice')).status).toBe(200);
  });

  it.each([
    ['HEAD', '/v1/feeds/timeline/alice', undefined],
    ['POST', '/v1/feeds/timeline/alice', undefined],
    ['GET', '/v1/feeds/timeline/al%69ce', undefined],
    ['GET', '/v1/feeds/timeline/alice/', undefined],
    ['GET', '/v1/feeds/timeline/alice/hidden', undefined],
    ['GET', '/v1/feeds/Timeline/alice', undefined],
    ['GET', '/v1/feeds/timeline/ali.ce', undefined],
    ['GET', '/v1/feedsx/timeline/alice', undefined],
    ['GET', '/v1/feeds/timeline/alice', 'a body'],
  ])('hands %s %s (body: %s) to Fastify', async (method, path, body) => {
    lastRead = undefined;
    // Node's client sends a GET's body with no length unless told it.
    const answer = await send(path, { method, body, headers: body === undefined ? {} : { 'content-type': 'text/plain', 'content-length': String(body.length) } });
    expect(answer.status).toBe(299);
    if (method !== 'HEAD') expect(answer.body).toBe(`handed on: ${method} ${path}`);
    expect(lastRead).toBeUndefined();
  });

  it('hands a read sent with a chunked body to Fastify', async () => {
    lastRead = undefined;
    const answer = await send('/v1/feeds/timeline/alice', { body: 'a chunk', headers: { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' } });
    expect(answer.status).toBe(299);
    expect(lastRead).toBeUndefined();
  });

  it('answers a post with what its route wrote for the parsed body, and counts it', async () => {
    const countedBefore = await counted('POST', FEED_POST_ROUTE, 201);
    const body = JSON.stringify({ actor: 'bob', verb: 'post', object: 'note:1' });
    const answer = await send('/v1/feeds/user/bob/activities', { method: 'POST', body, headers: { 'content-type': 'application/json', 'x-request-id': 'post-1' } });
    expect(answer.status).toBe(201);
    expect(JSON.parse(answer.body)).toEqual({ id: 'a1', posted: { actor: 'bob', verb: 'post', object: 'note:1' } });
    expect(answer.headers['x-request-id']).toBe('post-1');
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(lastPost).toEqual({ caller: { sub: undefined, admin: true }, params: { group: 'user', id: 'bob' }, body: { actor: 'bob', verb: 'post', object: 'note:1' } });
    expect(await counted('POST', FEED_POST_ROUTE, 201)).toBe(countedBefore + 1);
  });

  it('takes a post body of exactly the limit, and hands one byte more to Fastify', async () => {
    const exactly = JSON.stringify({ object: 'x'.repeat(BODY_LIMIT - 13) });
    expect(Buffer.byteLength(exactly)).toBe(BODY_LIMIT);
    const headers = { 'content-type': 'application/json' };
    expect((await send('/v1/feeds/user/bob/activities', { method: 'POST', body: exactly, headers })).status).toBe(201);
    expect((await send('/v1/feeds/user/bob/activities', { method: 'POST', body: `${exactly} `, headers })).status).toBe(299);
  });

  it.each([
    ['not JSON', '{"actor":'],
    ['a __proto__ key', '{"__proto__":{"admin":true},"actor":"bob"}'],
    ['a constructor.prototype', '{"constructor":{"prototype":{"admin":true}}}'],
  ])('refuses a post whose body is %s with Fastify\'s own error, and never posts', async (_, body) => {
    lastPost = undefined;
    const answer = await send('/v1/feeds/user/bob/activities', { method: 'POST', body, headers: { 'content-type': 'application/json' } });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ code: 'invalid_json', message: "Body is not valid JSON but content-type is set to 'application/json'", field: 'body' });
    // Fastify closes the connection after a body it could not parse: so does the door.
    expect(answer.headers['connection']).toBe('close');
    expect(lastPost).toBeUndefined();
  });

  it.each<[string, string, Record<string, string>, string]>([
    ['another content type', '/v1/feeds/user/bob/activities', { 'content-type': 'text/plain' }, '{}'],
    ['JSON in another charset', '/v1/feeds/user/bob/activities', { 'content-type': 'application/json; charset=latin1' }, '{}'],
    ['a chunked body', '/v1/feeds/user/bob/activities', { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }, '{}'],
    ['a body over the limit', '/v1/feeds/user/bob/activities', { 'content-type': 'application/json' }, JSON.stringify({ object: 'x'.repeat(BODY_LIMIT) })],
    ['an empty body', '/v1/feeds/user/bob/activities', { 'content-type': 'application/json', 'content-length': '0' }, ''],
    ['a query', '/v1/feeds/user/bob/activities?x=1', { 'content-type': 'application/json' }, '{}'],
    ['an encoded path', '/v1/feeds/user/b%6Fb/activities', { 'content-type': 'application/json' }, '{}'],
    ['another route', '/v1/feeds/user/bob/activities/a1/bump', { 'content-type': 'application/json' }, '{}'],
  ])('hands a post with %s to Fastify', async (_, path, headers, body) => {
    lastPost = undefined;
    const answer = await send(path, { method: 'POST', body, headers: { ...(headers['transfer-encoding'] ? {} : { 'content-length': String(Buffer.byteLength(body)) }), ...headers } });
    expect(answer.status).toBe(299);
    expect(lastPost).toBeUndefined();
  });

  it('hands every request to Fastify once the app starts to close', async () => {
    door.close();
    const answer = await send('/v1/feeds/timeline/alice');
    expect(answer.status).toBe(299);
  });
});

describe('with tokens checked', () => {
  const verifier = new TokenVerifier({ secret });
  const token = (sub: string) => new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
  beforeAll(() => startDoor(verifier));
  afterAll(() => stopDoor());

  it('refuses a read without a token, as the API does, and never reads', async () => {
    const answer = await send('/v1/feeds/timeline/alice');
    expect(answer.status).toBe(401);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'unauthorized', field: 'authorization' });
    expect(lastRead).toBeUndefined();
  });

  it('refuses a post without a token before its body arrives, and reads the next request on the connection', async () => {
    const socket = connect((server.address() as AddressInfo).port, '127.0.0.1');
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    const body = '{"actor":"alice","verb":"post","object":"o"}';
    // The headers alone: the answer must come without the body.
    socket.write(`POST /v1/feeds/user/alice/activities HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`);
    await waitFor(() => received.includes('"unauthorized"') || undefined, { timeoutMs: 5_000, what: 'the 401' });
    expect(received).toMatch(/^HTTP\/1\.1 401 /);
    // Its body, then a read on the same connection: the body is skipped, the read answered.
    socket.write(`${body}GET /v1/feeds/timeline/alice HTTP/1.1\r\nHost: test\r\nAuthorization: Bearer ${await token('alice')}\r\n\r\n`);
    await waitFor(() => /HTTP\/1\.1 200 /.test(received) || undefined, { timeoutMs: 5_000, what: 'the read after it' });
    socket.destroy();
    expect(lastPost).toBeUndefined();
    expect(lastRead!.caller).toMatchObject({ sub: 'alice', admin: false });
  });

  it('posts as the user the token names', async () => {
    const answer = await send('/v1/feeds/user/alice/activities', { method: 'POST', body: '{"actor":"alice"}', headers: { 'content-type': 'application/json', authorization: `Bearer ${await token('alice')}` } });
    expect(answer.status).toBe(201);
    expect(lastPost).toEqual({ caller: expect.objectContaining({ sub: 'alice', admin: false }), params: { group: 'user', id: 'alice' }, body: { actor: 'alice' } });
  });

  it('reads as the user the token names', async () => {
    const token = await new SignJWT({ sub: 'alice' }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(secret));
    const answer = await send('/v1/feeds/timeline/alice', { headers: { authorization: `Bearer ${token}` } });
    expect(answer.status).toBe(200);
    expect(lastRead!.caller).toMatchObject({ sub: 'alice', admin: false });
  });
});

import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { loadFeedConfig } from '@feedmill/config';
import { subjects, type Activity } from '@feedmill/contracts';
import { stubServiceClient } from '@feedmill/harness';
import { configureLogging, rootModule } from '@feedmill/runtime';
import { InProcessRealtimeBus } from '@feedmill/transport';
import { createHttpApp, type HttpAppOptions } from './http-app.js';
import { FEED_POST_ROUTE, FEED_READ_ROUTE } from './front-door.js';
import { GatewayModule } from './gateway.module.js';

/**
 * The gateway's HTTP app as processes build it (createHttpApp), in this process, its
 * services answered by a stub: whether it opens the front door, what Fastify runs for a feed
 * read the door does not take, and the server the door stands before.
 */
const BODY_LIMIT = 100_000;
const activity: Activity = { id: 'a1', feed: 'user:bob', actor: 'bob', verb: 'post', object: 'note:1', time: '2026-11-27T10:00:00.000Z' };

async function gatewayApp(options: Partial<HttpAppOptions> = {}, level: 'log' | 'debug' = 'log'): Promise<NestFastifyApplication> {
  // As a process does before it builds its app: the levels decide per-request debug lines.
  configureLogging(level, 'gateway', 'off');
  const client = stubServiceClient({
    [subjects.timeline.read]: () => ({ items: [activity], next: null, newest: null }),
    [subjects.content.add]: ({ feed, activity: posted }) => ({ ...posted, id: 'a2', feed, time: '2026-11-27T10:00:01.000Z' }),
    [subjects.graph.follow]: () => ({ state: 'following', position: 1 }),
  });
  const app = await createHttpApp(rootModule([GatewayModule], { feedConfig: loadFeedConfig(undefined), client, realtimeBus: new InProcessRealtimeBus() }), { bodyLimit: BODY_LIMIT, logLevel: level, ...options });
  return app;
}

/** The hooks Fastify runs for a route, by lifecycle, as `printRoutes` lists them. */
function routeHooks(app: NestFastifyApplication, method: 'GET' | 'POST', route: string): Record<string, string[]> {
  const lines = app.getHttpAdapter().getInstance().printRoutes({ includeHooks: true, commonPrefix: false, method }).split('\n');
  const at = lines.findIndex((line) => line.endsWith(`${route.slice(1)} (${method})`));
  if (at < 0) throw new Error(`no ${method} ${route} in the routes Fastify prints:\n${lines.join('\n')}`);
  const hooks: Record<string, string[]> = {};
  for (const line of lines.slice(at + 1)) {
    const hook = /• \((\w+)\) (\[.*\])$/.exec(line);
    if (!hook) break;
    hooks[hook[1]!] = JSON.parse(hook[2]!) as string[];
  }
  return hooks;
}

afterAll(() => configureLogging('log', 'test', 'off'));

describe('an app with the door', () => {
  let app: NestFastifyApplication;
  let baseUrl: string;
  /** Requests Fastify routed, counted by a hook of its own. */
  let routed = 0;

  beforeAll(async () => {
    app = await gatewayApp();
    await app.init();
    await app.getHttpAdapter().getInstance().ready();
    // Pinned before the counter below joins them.
    pinnedHooks = { read: routeHooks(app, 'GET', FEED_READ_ROUTE), post: routeHooks(app, 'POST', FEED_POST_ROUTE) };
    await app.close();
    app = await gatewayApp();
    app.getHttpAdapter().getInstance().addHook('onRequest', (_request, _reply, done) => {
      routed++;
      done();
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => app?.close());
  let pinnedHooks: Record<'read' | 'post', Record<string, string[]>>;

  it('answers a feed read at the door, and the same read spelled otherwise through Fastify, alike', async () => {
    const before = routed;
    const atDoor = await fetch(`${baseUrl}/v1/feeds/timeline/alice?limit=5`, { headers: { 'x-request-id': 'r-1' } });
    expect(routed).toBe(before);
    const throughFastify = await fetch(`${baseUrl}/v1/feeds/timeline/%61lice?limit=5`, { headers: { 'x-request-id': 'r-1' } });
    expect(routed).toBe(before + 1);
    expect(atDoor.status).toBe(200);
    const body = await atDoor.text();
    expect(JSON.parse(body)).toEqual({ items: [activity], next: null, newest: null });
    expect(body).toBe(await throughFastify.text());
    for (const header of ['content-type', 'content-length', 'x-request-id']) expect(atDoor.headers.get(header)).toBe(throughFastify.headers.get(header));
  });

  it('answers a post at the door, and the same post spelled otherwise through Fastify, alike', async () => {
    const post = (path: string) =>
      fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'p-1' }, body: JSON.stringify({ actor: 'bob', verb: 'post', object: 'note:2' }) });
    const before = routed;
    const atDoor = await post('/v1/feeds/user/bob/activities');
    expect(routed).toBe(before);
    const throughFastify = await post('/v1/feeds/user/%62ob/activities');
    expect(routed).toBe(before + 1);
    expect(atDoor.status).toBe(201);
    const body = await atDoor.text();
    expect(JSON.parse(body)).toEqual({ id: 'a2', feed: 'user:bob', actor: 'bob', verb: 'post', object: 'note:2', time: '2026-11-27T10:00:01.000Z' });
    expect(body).toBe(await throughFastify.text());
    for (const header of ['content-type', 'content-length', 'x-request-id']) expect(atDoor.headers.get(header)).toBe(throughFastify.headers.get(header));
  });

  it('refuses a post body that is not JSON at the door as Fastify does, closing the connection', async () => {
    const post = (path: string) => fetch(`${baseUrl}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-request-id': 'p-2' }, body: '{"actor":' });
    const before = routed;
    const atDoor = await post('/v1/feeds/user/bob/activities');
    expect(routed).toBe(before);
    const throughFastify = await post('/v1/feeds/user/%62ob/activities');
    expect(routed).toBe(before + 1);
    expect([atDoor.status, throughFastify.status]).toEqual([400, 400]);
    expect(await atDoor.text()).toBe(await throughFastify.text());
    for (const header of ['content-type', 'content-length', 'x-request-id', 'connection']) expect([header, atDoor.headers.get(header)]).toEqual([header, throughFastify.headers.get(header)]);
    expect(atDoor.headers.get('connection')).toBe('close');
  });

  it.each(['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'application/octet-stream'])('refuses a body of type %s with 415, naming the body', async (type) => {
    const answer = await fetch(`${baseUrl}/v1/feeds/user/bob/activities`, { method: 'POST', headers: { 'content-type': type }, body: '{"actor":"bob","verb":"post","object":"note:1"}' });
    expect({ status: answer.status, body: await answer.json() }).toEqual({
      status: 415,
      body: { code: 'unsupported_media_type', message: 'send the body as application/json', field: 'body' },
    });
  });

  it.each(['text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'application/octet-stream'])('takes an empty body of type %s as no body', async (type) => {
    const answer = await fetch(`${baseUrl}/v1/feeds/timeline/alice/follows/user/bob`, { method: 'PUT', headers: { 'content-type': type }, body: '' });
    expect(answer.status).toBe(204);
  });

  it("hands a post over the route's body limit to Fastify, which refuses it", async () => {
    const before = routed;
    const answer = await fetch(`${baseUrl}/v1/feeds/user/bob/activities`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ object: 'x'.repeat(BODY_LIMIT) }) });
    expect(answer.status).toBe(413);
    expect(routed).toBe(before + 1);
  });

  it('stands before a server set as Fastify sets its own', () => {
    const server = app.getHttpServer() as Server;
    const fastify = app.getHttpAdapter().getInstance();
    expect(server.keepAliveTimeout).toBe(fastify.initialConfig.keepAliveTimeout);
    expect(server.keepAliveTimeout).toBe(72_000);
    expect(server.requestTimeout).toBe((fastify.initialConfig as { requestTimeout?: number }).requestTimeout);
  });

  it('runs, for a read or a post it leaves to Fastify, only the hooks the door does too or that do nothing in this app', () => {
    // onRequest: Nest's adapter's six (its own lifecycle hook, 503 while closing, CORS, security
    // headers, unroutable targets, versioning errors: none set in this app), the request id
    // header (the door sends it), and Nest's middleware (none). onResponse: the latency series
    // (the door observes it) and Nest's lifecycle hook (none set). A hook added to this list
    // runs for every read and post Fastify answers and for none the door answers: make the door
    // do it too, or keep the door shut where it is on (doorStaysShut).
    const hooks = {
      onRequest: ['anonymous()', 'anonymous()', 'anonymous()', 'anonymous()', 'anonymous()', 'anonymous()', 'anonymous()', 'runMiddie()'],
      onResponse: ['anonymous()', 'anonymous()'],
    };
    expect(pinnedHooks).toEqual({ read: hooks, post: hooks });
  });

  it('stands aside once the app closes', async () => {
    const door = app.getHttpAdapter().getInstance().frontDoor!;
    expect(door.open).toBe(true);
    await app.close();
    expect(door.open).toBe(false);
  });
});

describe('an app without the door', () => {
  it.each<[string, Partial<HttpAppOptions>, 'log' | 'debug']>([
    ['rate limits', { rateLimit: { perMinute: 100 } }, 'log'],
    ['a log line per request', {}, 'debug'],
  ])('keeps it shut with %s, and answers reads through Fastify', async (_, options, level) => {
    const app = await gatewayApp(options, level);
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      expect(app.getHttpAdapter().getInstance().frontDoor).toBeUndefined();
      const answer = await fetch(`http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}/v1/feeds/timeline/alice`);
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { items: unknown[] }).items).toEqual([activity]);
    } finally {
      await app.close();
    }
  });
});

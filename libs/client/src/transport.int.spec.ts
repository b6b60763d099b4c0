import Fastify, { type FastifyInstance } from 'fastify';
import { FeedmillApiError, FeedmillClient } from './index.js';

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  contentType?: string;
  body: string;
}

/**
 * The client's side of HTTP against a real Fastify server that answers what the tests need,
 * including what feedmill itself never sends (a proxy's HTML error page): tokens, URLs,
 * bodies and how each answer becomes a result or an error.
 */
describe('FeedmillClient over HTTP', () => {
  let server: FastifyInstance;
  let baseUrl: string;
  const seen: Seen[] = [];

  beforeAll(async () => {
    server = Fastify();
    server.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    server.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    server.addHook('onRequest', async (request) => {
      seen.push({ method: request.method, url: request.url, authorization: request.headers.authorization, contentType: request.headers['content-type'], body: '' });
    });
    server.addHook('preHandler', async (request) => {
      seen[seen.length - 1]!.body = typeof request.body === 'string' ? request.body : '';
    });
    server.get('/v1/feeds/:group/:id', async (request) => ({ items: [], next: null, params: request.params }));
    server.post('/v1/feeds/:group/:id/activities', async (_request, reply) => reply.code(429).header('retry-after', '17').send({ code: 'rate_limited', message: 'slow down', field: 'authorization' }));
    server.get('/v1/feeds/:group/:id/counts', async (_request, reply) => reply.code(502).header('content-type', 'text/html').send('<html>bad gateway</html>'));
    server.get('/docs', async (_request, reply) => reply.header('content-type', 'text/html; charset=utf-8').send('<!doctype html><p>docs</p>'));
    server.get('/readyz', async (_request, reply) => reply.code(503).send({ ready: false, services: [{ service: 'content', ready: false, position: 3 }] }));
    baseUrl = await server.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await server?.close();
  });
  beforeEach(() => {
    seen.length = 0;
  });

  it('asks the token provider for every request, with its method and path', async () => {
    const asked: Array<{ method: string; path: string }> = [];
    let issued = 0;
    const client = new FeedmillClient({
      baseUrl: `${baseUrl}/`,
      token: async (request) => {
        asked.push(request);
        return `token-${++issued}`;
      },
    });
    await client.readFeed('timeline:alice');
    await client.readFeed('timeline:bob', { limit: 5 });
    expect(asked).toEqual([
      { method: 'GET', path: '/v1/feeds/timeline/alice' },
      { method: 'GET', path: '/v1/feeds/timeline/bob' },
    ]);
    expect(seen.map((s) => [s.url, s.authorization])).toEqual([
      ['/v1/feeds/timeline/alice', 'Bearer token-1'],
      ['/v1/feeds/timeline/bob?limit=5', 'Bearer token-2'],
    ]);
  });

  it('encodes ids into paths and leaves out query values it was not given', async () => {
    const client = new FeedmillClient({ baseUrl, token: 'fixed' });
    const page = (await client.readFeed('user:a b/c' as never, { cursor: 'x=y&z' })) as unknown as { params: Record<string, string> };
    expect(page.params).toEqual({ group: 'user', id: 'a b/c' });
    expect(seen[0]).toMatchObject({ url: '/v1/feeds/user/a%20b%2Fc?cursor=x%3Dy%26z', authorization: 'Bearer fixed' });
  });

  it('throws a refusal with its status, code, field and Retry-After, after sending the body as JSON', async () => {
    const client = new FeedmillClient({ baseUrl });
    const error = await client.addActivity('user:bob', { actor: 'bob', verb: 'post', object: 'x' }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(FeedmillApiError);
    expect(error).toMatchObject({ name: 'FeedmillApiError', status: 429, code: 'rate_limited', field: 'authorization', message: 'slow down', retryAfterSeconds: 17 });
    expect(seen[0]).toMatchObject({ method: 'POST', contentType: 'application/json', body: '{"actor":"bob","verb":"post","object":"x"}' });
  });

  it('turns an answer that is not the API’s error body into an error that says so', async () => {
    const error = await new FeedmillClient({ baseUrl }).counts('user:bob').catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ status: 502, code: 'internal', message: 'the server answered 502 without an error body' });
    expect((error as FeedmillApiError).field).toBeUndefined();
  });

  it('sends any request as it is and gives back any answer, text and errors included', async () => {
    const client = new FeedmillClient({ baseUrl, headers: { 'x-request-id': 'r1' } });
    const docs = await client.send<string>({ method: 'GET', path: '/docs' });
    expect(docs).toMatchObject({ status: 200, body: '<!doctype html><p>docs</p>' });
    const malformed = await client.send({ method: 'POST', path: '/v1/feeds/user/bob/activities', body: '{ not json', headers: { authorization: 'Bearer mine' } });
    expect(malformed.status).toBe(429);
    expect(seen[1]).toMatchObject({ body: '{ not json', authorization: 'Bearer mine', contentType: 'application/json' });
    // A 503 from /readyz is an answer about readiness, not a failure.
    expect(await client.readiness()).toEqual({ ready: false, services: [{ service: 'content', ready: false, position: 3 }] });
  });
});

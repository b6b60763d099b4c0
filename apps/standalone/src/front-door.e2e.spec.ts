import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedClient, hs256Tokens, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';

/**
 * Feed reads and posts are answered in front of Fastify (FrontDoor), other spellings of the same
 * request by Fastify's route: a path with a percent-encoded character is the same feed to
 * the router, and the door leaves it to Fastify. Each read here is sent both ways, with
 * the same request id, and must get the same status, content type, request id and body.
 */
const secret = 'front door secret of sixteen characters';
const tokenFor = hs256Tokens(secret);

let dataDir: string;
let deployment: Deployment;
let api: FeedClient;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-front-door-'));
  deployment = await startStandalone({ dataDir, env: { FEEDMILL_JWT_SECRET: secret, LOG_LEVEL: 'log' } });
  api = new FeedClient(deployment.baseUrl, tokenFor);
  expect((await api.follow('timeline:reader', 'user:writer')).status).toBe(204);
  for (let i = 0; i < 5; i++) expect((await api.post('user:writer', { actor: 'writer', verb: 'post', object: `note:${i}` })).status).toBe(201);
  await waitUntilSettled(api);
});
afterAll(async () => {
  await deployment?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

interface Answer {
  status: number;
  contentType: string | null;
  requestId: string | null;
  body: string;
}

async function read(path: string, token: string | undefined): Promise<Answer> {
  return send(path, token);
}

async function send(path: string, token: string | undefined, post?: string): Promise<Answer> {
  const headers: Record<string, string> = { 'x-request-id': 'same-request' };
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  if (post !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${deployment.baseUrl}${path}`, { headers, ...(post !== undefined && { method: 'POST', body: post }) });
  return { status: response.status, contentType: response.headers.get('content-type'), requestId: response.headers.get('x-request-id'), body: await response.text() };
}

/** The same path with the first character of its feed id percent-encoded: Fastify's to answer. */
function spelledForFastify(path: string): string {
  return path.replace(/^(\/v1\/feeds\/[^/]+\/)(.)/, (_, prefix: string, first: string) => `${prefix}%${first.charCodeAt(0).toString(16).toUpperCase()}`);
}

it('says at start that feed reads and posts are answered in front of Fastify', () => {
  expect(deployment.processes[0]!.output()).toMatch(/feed reads and posts are answered in front of Fastify/);
});

it.each<[string, string, string | undefined]>([
  ['a timeline', '/v1/feeds/timeline/reader?limit=2', 'reader'],
  ['a producer feed', '/v1/feeds/user/writer?limit=3', 'writer'],
  ['a producer feed read by another user', '/v1/feeds/user/writer', 'reader'],
  ['a timeline with no entries', '/v1/feeds/timeline/nobody', 'nobody'],
  ['a limit that is not a number', '/v1/feeds/timeline/reader?limit=abc', 'reader'],
  ['a limit given twice', '/v1/feeds/timeline/reader?limit=1&limit=2', 'reader'],
  ['a cursor that is not one', '/v1/feeds/timeline/reader?cursor=not-a-cursor', 'reader'],
  ['a group that is not configured', '/v1/feeds/nogroup/reader', 'reader'],
  ['another user\'s timeline', '/v1/feeds/timeline/reader', 'writer'],
  ['no token', '/v1/feeds/timeline/reader', undefined],
])('answers %s as Fastify does', async (_, path, user) => {
  const token = user === undefined ? undefined : await tokenFor(user);
  const throughDoor = await read(path, token);
  const throughFastify = await read(spelledForFastify(path), token);
  expect(spelledForFastify(path)).not.toBe(path);
  expect(throughDoor).toEqual(throughFastify);
  expect(throughDoor.requestId).toBe('same-request');
});

it('pages with the cursors it gives, as Fastify does', async () => {
  const token = await tokenFor('reader');
  const first = await read('/v1/feeds/timeline/reader?limit=2', token);
  const { next, newest } = JSON.parse(first.body) as { next: string; newest: string };
  for (const path of [`/v1/feeds/timeline/reader?limit=2&cursor=${next}`, `/v1/feeds/timeline/reader?after=${newest}`]) {
    const throughDoor = await read(path, token);
    expect(throughDoor.status).toBe(200);
    expect(throughDoor).toEqual(await read(spelledForFastify(path), token));
  }
  expect((JSON.parse((await read(`/v1/feeds/timeline/reader?limit=2&cursor=${next}`, token)).body) as { items: unknown[] }).items).toHaveLength(2);
});

const activity = JSON.stringify({ actor: 'writer', verb: 'post', object: 'note:door' });

it.each<[string, string, string, string | undefined]>([
  ['a body that is not JSON', '/v1/feeds/user/writer/activities', '{"actor":', 'writer'],
  ['a __proto__ key', '/v1/feeds/user/writer/activities', '{"__proto__":{"x":1},"actor":"writer","verb":"post","object":"o"}', 'writer'],
  ['a body that is not an activity', '/v1/feeds/user/writer/activities', '[1]', 'writer'],
  ['a field missing', '/v1/feeds/user/writer/activities', '{"actor":"writer","verb":"post"}', 'writer'],
  ["another user's feed", '/v1/feeds/user/writer/activities', activity, 'reader'],
  ['no token', '/v1/feeds/user/writer/activities', activity, undefined],
  ['a group that is not configured', '/v1/feeds/nogroup/writer/activities', activity, 'writer'],
  ['a timeline', '/v1/feeds/timeline/writer/activities', activity, 'writer'],
])('refuses a post with %s as Fastify does', async (_, path, body, user) => {
  const token = user === undefined ? undefined : await tokenFor(user);
  const throughDoor = await send(path, token, body);
  expect(throughDoor.status).toBeGreaterThanOrEqual(400);
  expect(throughDoor).toEqual(await send(spelledForFastify(path), token, body));
});

it('accepts a post at the door as through Fastify', async () => {
  const token = await tokenFor('writer');
  const throughDoor = await send('/v1/feeds/user/writer/activities', token, activity);
  const throughFastify = await send(spelledForFastify('/v1/feeds/user/writer/activities'), token, activity);
  expect([throughDoor.status, throughFastify.status]).toEqual([201, 201]);
  expect([throughDoor.contentType, throughDoor.requestId]).toEqual([throughFastify.contentType, throughFastify.requestId]);
  const [atDoor, atFastify] = [throughDoor, throughFastify].map((answer) => JSON.parse(answer.body) as Record<string, unknown>);
  expect(Object.keys(atDoor!)).toEqual(Object.keys(atFastify!));
  expect(atDoor).toMatchObject({ feed: 'user:writer', actor: 'writer', verb: 'post', object: 'note:door' });
  const newest = (await api.page('user:writer', 2)).body as { items: Array<{ id: string }> };
  expect(newest.items.map((item) => item.id)).toEqual([atFastify!['id'], atDoor!['id']]);
});

it('carries the request id on refusals made before any route runs, as on every other answer', async () => {
  const answer = await read('/v1/feeds/user/%ZZ', await tokenFor('writer'));
  expect(answer).toMatchObject({ status: 400, requestId: 'same-request' });
  expect(JSON.parse(answer.body)).toMatchObject({ code: 'invalid_request', field: 'path' });
});

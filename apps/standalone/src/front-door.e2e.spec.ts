import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedClient, hs256Tokens, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';

/**
 * Feed reads are answered in front of Fastify (FrontDoor), other spellings of the same
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
  const headers: Record<string, string> = { 'x-request-id': 'same-request' };
  if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
  const response = await fetch(`${deployment.baseUrl}${path}`, { headers });
  return { status: response.status, contentType: response.headers.get('content-type'), requestId: response.headers.get('x-request-id'), body: await response.text() };
}

/** The same path with the first character of its feed id percent-encoded: Fastify's to answer. */
function spelledForFastify(path: string): string {
  return path.replace(/^(\/v1\/feeds\/[^/]+\/)(.)/, (_, prefix: string, first: string) => `${prefix}%${first.charCodeAt(0).toString(16).toUpperCase()}`);
}

it('says at start that feed reads are answered in front of Fastify', () => {
  expect(deployment.processes[0]!.output()).toMatch(/feed reads are answered in front of Fastify/);
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

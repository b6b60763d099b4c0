import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { errorCodes } from '@feedmill/contracts';
import { FileEventLog } from '@feedmill/event-log';
import { FeedClient, hs256Tokens, sendRaw, startStandalone, type Deployment } from '@feedmill/harness';
import { malformedRequests, operationsOf, type ApiOperation, type MalformedRequest } from '@feedmill/testing';

/**
 * Bad input over every endpoint the gateway documents (`GET /openapi.json`, so a new route
 * is covered as soon as it is documented): requests generated with fast-check, each wrong in
 * a way the document says is wrong. None may be answered 5xx, every 4xx is the API's JSON
 * error with a known `code`, no request that writes is answered 2xx, and the log's head does
 * not move. `FEEDMILL_FAULTS=full` sends 5,000 instead of 1,000; `FEEDMILL_FAULTS_SEED`
 * replays a run.
 */

const RUNS = process.env['FEEDMILL_FAULTS'] === 'full' ? 5_000 : 1_000;
const SEED = Number(process.env['FEEDMILL_FAULTS_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const SECRET = 'bad input secret of sixteen characters';
const BODY_LIMIT = 65_536;

let dataDir: string;
let deployment: Deployment;
let headBefore: number;
let activityId: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-bad-input-'));
  const config = join(dataDir, 'feeds.json');
  await writeFile(
    config,
    JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 50 }, alerts: { kind: 'timeline', model: 'ring', notifications: true, acceptsTargets: true } } }),
  );
  deployment = await startStandalone({ dataDir: join(dataDir, 'data'), env: { FEED_CONFIG: config, FEEDMILL_JWT_SECRET: SECRET } });
  // Something to name: a follow and a few posts, so that ids, feeds and cursors are real.
  const api = new FeedClient(deployment.baseUrl, hs256Tokens(SECRET));
  expect((await api.follow('timeline:alice', 'user:bob')).status).toBe(204);
  expect((await api.follow('alerts:alice', 'user:bob')).status).toBe(204);
  for (let n = 0; n < 3; n++) {
    const posted = await api.post('user:bob', { actor: 'bob', verb: 'post', object: `o${n}`, refs: ['topic:1'] });
    expect(posted.status).toBe(201);
    activityId ??= (posted.body as { id: string }).id;
  }
  headBefore = await logHead(api);
});

afterAll(async () => {
  await deployment?.stop();
  try {
    // The log on disk, read apart from the server, holds what it held before every request.
    const log = await FileEventLog.open({ dir: join(dataDir, 'data') });
    const head = await log.headPosition();
    await log.close();
    expect(head).toBe(headBefore);
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
});

async function logHead(api: FeedClient): Promise<number> {
  const { body } = await api.call<{ services: Array<{ position: number }> }>('GET', '/readyz');
  return Math.max(...body.services.map((s) => s.position));
}

function validPathValue(op: ApiOperation, parameter: string): string {
  if (parameter === 'group') return /\/(seen|read)$/.test(op.path) ? 'alerts' : /activities|settings|follow-requests|followers|following|counts/.test(op.path) ? 'user' : 'timeline';
  if (parameter === 'id') return /activities|settings|follow-requests|followers|following|counts/.test(op.path) ? 'bob' : 'alice';
  return { targetGroup: 'user', targetId: 'bob', followerGroup: 'timeline', followerId: 'alice', activityId, ref: 'topic:1', projection: 'timeline' }[parameter] ?? 'x';
}

async function badAuthorizations(): Promise<string[]> {
  const part = (json: object) => Buffer.from(JSON.stringify(json)).toString('base64url');
  return [
    'Bearer garbage',
    'Bearer ',
    'Bearer a.b.c',
    'Basic YWxhZGRpbjpvcGVuc2VzYW1l',
    'bearer',
    `Bearer ${await hs256Tokens('another secret of sixteen characters')(undefined)}`,
    `Bearer ${await hs256Tokens(SECRET, -60)(undefined)}`,
    `Bearer ${part({ alg: 'none', typ: 'JWT' })}.${part({ admin: true })}.`,
    `Bearer ${'x'.repeat(9000)}`,
  ];
}

/** A failure told in a few lines: fast-check's own report prints every byte of a 4 MiB body. */
function reportBriefly(details: fc.RunDetails<[MalformedRequest]>): void {
  if (!details.failed) return;
  const [request] = details.counterexample ?? [];
  const error = details.errorInstance instanceof Error ? details.errorInstance.message : String(details.errorInstance);
  const what = request ? `${request.method} ${request.path.slice(0, 200)} (${request.defect}, body ${request.body?.length ?? 0} bytes)` : 'no counterexample';
  throw new Error(`bad input failed after ${details.numRuns} requests (seed ${details.seed}, path ${details.counterexamplePath}): ${what}\n${error.slice(0, 2000)}`);
}

it(`answers ${RUNS} malformed requests over every documented endpoint with no 5xx, a JSON error code on every 4xx, and no write`, async () => {
  const started = Date.now();
  const { status, body: document } = await new FeedClient(deployment.baseUrl).call('GET', '/openapi.json');
  expect(status).toBe(200);
  const operations = operationsOf(document);
  expect(operations.length).toBeGreaterThan(25);
  const requests = malformedRequests(operations, {
    validPathValue,
    validBodies: {
      markSeen: { all: true },
      markRead: { all: true },
      followMany: { follows: [{ source: 'timeline:alice', target: 'user:bob' }] },
      addActivities: { activities: [{ feed: 'user:bob', actor: 'bob', verb: 'post', object: 'x' }] },
    },
    adminToken: await hs256Tokens(SECRET)(undefined),
    badAuthorizations: await badAuthorizations(),
    strangerToken: await hs256Tokens(SECRET)('stranger'),
    bodyLimit: BODY_LIMIT,
  });

  const perOperation = new Map<string, number>();
  const perStatus = new Map<number, number>();
  const perDefect = new Map<string, Map<number, number>>();
  let sent = 0;
  console.log(`bad input: seed ${SEED} (replay with FEEDMILL_FAULTS_SEED=${SEED}), ${RUNS} requests over ${operations.length} operations`);
  await fc.assert(
    fc.asyncProperty(requests, async (request: MalformedRequest) => {
      const answer = await sendRaw(deployment.baseUrl, request);
      sent++;
      perOperation.set(request.operation, (perOperation.get(request.operation) ?? 0) + 1);
      perStatus.set(answer.status, (perStatus.get(answer.status) ?? 0) + 1);
      const kind = request.defect.replace(/: .*/, '');
      const byStatus = perDefect.get(kind) ?? new Map<number, number>();
      perDefect.set(kind, byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1));
      const said = `${request.method} ${request.path.slice(0, 160)} (${request.defect}) answered ${answer.status} ${answer.text.slice(0, 300)}`;
      if (answer.status >= 500) throw new Error(`5xx: ${said}`);
      if (answer.status < 300 && request.method !== 'GET') throw new Error(`a request that writes was accepted: ${said}`);
      if (answer.status >= 400) {
        if (!answer.contentType.startsWith('application/json')) throw new Error(`4xx without JSON: ${said}`);
        const error = JSON.parse(answer.text) as { code?: unknown; message?: unknown };
        if (!(errorCodes as readonly unknown[]).includes(error.code) || typeof error.message !== 'string') throw new Error(`4xx without a known code and a message: ${said}`);
      }
    }),
    // No shrinking: each failure is reported as found, since a shrink sends hundreds of requests more.
    { seed: SEED, numRuns: RUNS, reporter: reportBriefly, endOnFailure: true },
  );

  const api = new FeedClient(deployment.baseUrl, hs256Tokens(SECRET));
  expect(await logHead(api)).toBe(headBefore);
  // Every documented operation was aimed at.
  expect(operations.map((op) => `${op.method} ${op.path}`).filter((op) => !perOperation.has(op))).toEqual([]);
  const statuses = [...perStatus].sort(([a], [b]) => a - b).map(([s, n]) => `${s}: ${n}`).join(', ');
  const defects = [...perDefect].sort(([a], [b]) => a.localeCompare(b)).map(([d, m]) => `  ${d}: ${[...m].map(([s, n]) => `${s}×${n}`).join(' ')}`).join('\n');
  console.log(`bad input: ${sent} requests sent in ${((Date.now() - started) / 1000).toFixed(1)} s; statuses ${statuses}\n${defects}`);
});

describe('what the generated requests found, each answered as the API answers bad input', () => {
  const cases: Array<[string, () => Promise<{ method: string; path: string; headers?: Record<string, string>; body?: Buffer }>, number, string]> = [
    ['a method Node does not know', async () => ({ method: 'FOO', path: '/v1/feeds/user/bob' }), 400, 'invalid_request'],
    ['headers larger than the server takes', async () => ({ method: 'GET', path: '/healthz', headers: { 'x-padding': 'h'.repeat(20_000) } }), 431, 'invalid_request'],
    ['a path that is not percent-encoded UTF-8', async () => ({ method: 'GET', path: '/v1/feeds/user/%ZZ' }), 400, 'invalid_request'],
    ['a path parameter past the router\'s length', async () => ({ method: 'GET', path: `/v1/feeds/user/${'a'.repeat(3000)}` }), 414, 'invalid_request'],
    [
      'an erasure in a group named as a property every object inherits (constructor: it was taken as configured, and erased)',
      async () => ({ method: 'DELETE', path: '/v1/feeds/constructor/bob?erase=true', headers: { authorization: `Bearer ${await hs256Tokens(SECRET)(undefined)}` } }),
      404,
      'unknown_group',
    ],
    [
      'an activity whose extra nests thousands of levels deep (it overflowed the validator’s stack: 500)',
      async () => ({
        method: 'POST',
        path: '/v1/feeds/user/bob/activities',
        headers: { authorization: `Bearer ${await hs256Tokens(SECRET)(undefined)}`, 'content-type': 'application/json' },
        body: Buffer.from(`{"actor":"bob","verb":"post","object":"o","extra":{"deep":${'['.repeat(5_000)}${']'.repeat(5_000)}}}`),
      }),
      400,
      'invalid_request',
    ],
    [
      'a bump whose body is null (it bumped the activity)',
      async () => ({
        method: 'POST',
        path: `/v1/feeds/user/bob/activities/${activityId}/bump`,
        headers: { authorization: `Bearer ${await hs256Tokens(SECRET)(undefined)}`, 'content-type': 'application/json' },
        body: Buffer.from('null'),
      }),
      400,
      'invalid_request',
    ],
  ];
  it.each(cases)('%s: answered as bad input, nothing written', async (_, make, status, code) => {
    const before = await logHead(new FeedClient(deployment.baseUrl, hs256Tokens(SECRET)));
    const request = await make();
    const answer = await sendRaw(deployment.baseUrl, { headers: {}, ...request });
    expect({ status: answer.status, code: (JSON.parse(answer.text) as { code: string }).code }).toEqual({ status, code });
    expect(await logHead(new FeedClient(deployment.baseUrl, hs256Tokens(SECRET)))).toBe(before);
  });
});

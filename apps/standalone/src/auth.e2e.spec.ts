import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import { FeedClient, hs256Tokens, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';

const secret = 'refusals secret of sixteen characters or more';
const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });

interface Refusal {
  what: string;
  method: string;
  path: string;
  body?: unknown;
  /** The field the 403 names. @defaultValue 'id' */
  field?: string;
}

/**
 * Every `/v1` route, asked by alice of what belongs to bob (or of an admin's route). Each
 * must answer 401 without a token and 403 with alice's, and write nothing.
 */
const refusals: Refusal[] = [
  { what: 'reading another’s timeline', method: 'GET', path: '/v1/feeds/timeline/bob' },
  { what: 'posting to another’s feed', method: 'POST', path: '/v1/feeds/user/bob/activities', body: { actor: 'alice', verb: 'post', object: 'forged' } },
  { what: 'following from another’s timeline', method: 'PUT', path: '/v1/feeds/timeline/bob/follows/user/alice' },
  { what: 'unfollowing from another’s timeline', method: 'DELETE', path: '/v1/feeds/timeline/bob/follows/user/carol' },
  { what: 'removing another’s activity', method: 'DELETE', path: '/v1/feeds/user/bob/activities/ACTIVITY' },
  { what: 'addressing an activity to another’s timeline', method: 'POST', path: '/v1/feeds/user/alice/activities', body: { actor: 'alice', verb: 'post', object: 'forged', to: ['timeline:bob'] }, field: 'body.to[0]' },
  { what: 'bumping another’s activity', method: 'POST', path: '/v1/feeds/user/bob/activities/ACTIVITY/bump', body: {} },
  { what: 'updating another’s activity', method: 'PATCH', path: '/v1/feeds/user/bob/activities/ACTIVITY', body: { object: 'forged' } },
  { what: 'listing what another’s timeline follows', method: 'GET', path: '/v1/feeds/timeline/bob/following' },
  { what: 'counting another’s timeline’s follows', method: 'GET', path: '/v1/feeds/timeline/bob/counts' },
  { what: 'importing follows from another’s timeline', method: 'POST', path: '/v1/follows', body: { follows: [{ source: 'timeline:alice', target: 'user:carol' }, { source: 'timeline:bob', target: 'user:alice' }] }, field: 'follows[1].source' },
  { what: 'importing activities into another’s feed', method: 'POST', path: '/v1/activities', body: { activities: [{ feed: 'user:bob', actor: 'alice', verb: 'post', object: 'forged' }] }, field: 'activities[0].feed' },
  { what: 'erasing another’s producer feed', method: 'DELETE', path: '/v1/feeds/user/bob?erase=true' },
  { what: 'erasing another’s timeline', method: 'DELETE', path: '/v1/feeds/timeline/bob?erase=true' },
  { what: 'replaying dead letters', method: 'POST', path: '/v1/admin/deadletters/replay', field: 'authorization' },
  { what: 'listing dead letters', method: 'GET', path: '/v1/admin/deadletters', field: 'authorization' },
  { what: 'rebuilding timelines', method: 'POST', path: '/v1/admin/rebuild/timeline', field: 'authorization' },
];

describe('standalone with tokens: who may do what', () => {
  let deployment: Deployment;
  let dataDir: string;
  const tokenFor = hs256Tokens(secret);
  /** Acts as each path's owner, or as an admin. */
  let owners: FeedClient;
  /** No token. */
  let anonymous: FeedClient;
  let bobsActivity: string;
  const as = async (sub: string | undefined) => ({ authorization: `Bearer ${await tokenFor(sub)}` });

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'feedmill-auth-'));
    const pem = publicKey.export({ type: 'spki', format: 'pem' }).toString();
    deployment = await startStandalone({ dataDir, env: { FEEDMILL_JWT_SECRET: secret, FEEDMILL_JWT_PUBLIC_KEY: pem } });
    owners = new FeedClient(deployment.baseUrl, tokenFor);
    anonymous = new FeedClient(deployment.baseUrl);
    bobsActivity = (await owners.post('user:bob', { actor: 'bob', verb: 'post', object: 'mine' })).body.id;
    expect((await owners.follow('timeline:bob', 'user:carol')).status).toBe(204);
  });
  afterAll(async () => {
    await deployment?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  // Each refusal is sent as written, with the token under test (or none) in its own header.
  const call = (client: FeedClient, refusal: Refusal, headers: Record<string, string> = {}) =>
    client.call<{ code: string; field?: string; message: string }>(refusal.method, refusal.path.replace('ACTIVITY', bobsActivity), refusal.body, headers);

  it.each(refusals.map((r) => [r.what, r] as const))('refuses %s: 401 without a token, 403 with another user’s, and writes nothing', async (_what, refusal) => {
    const head = await waitUntilSettled(owners);
    const missing = await call(anonymous, refusal);
    expect({ status: missing.status, code: missing.body.code, field: missing.body.field }).toEqual({ status: 401, code: 'unauthorized', field: 'authorization' });
    const forbidden = await call(anonymous, refusal, await as('alice'));
    expect({ status: forbidden.status, code: forbidden.body.code, field: forbidden.body.field }).toEqual({ status: 403, code: 'forbidden', field: refusal.field ?? 'id' });
    expect(forbidden.body.message).toMatch(/alice/);
    expect(await waitUntilSettled(owners)).toBe(head);
    // What bob had is as it was.
    expect((await owners.readAll('user:bob')).map((a) => [a.id, a.object])).toEqual([[bobsActivity, 'mine']]);
    expect((await owners.api.following('timeline:bob')).items).toEqual([{ feed: 'user:carol' }]);
  });

  it('refuses an expired token, a forged one and a malformed header with 401', async () => {
    const expired = await new SignJWT({ sub: 'bob' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime(Math.floor(Date.now() / 1000) - 5).sign(new TextEncoder().encode(secret));
    const forged = await new SignJWT({ sub: 'bob', admin: true }).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode('a guessed secret of sixteen chars'));
    for (const [authorization, message] of [
      [`Bearer ${expired}`, /expired/],
      [`Bearer ${forged}`, /signature/],
      ['Bearer', /Bearer <token>/],
    ] as const) {
      const answer = await anonymous.call<{ code: string; message: string }>('GET', '/v1/feeds/user/bob', undefined, { authorization });
      expect(answer.status).toBe(401);
      expect(answer.body.code).toBe('unauthorized');
      expect(answer.body.message).toMatch(message);
    }
  });

  it('lets anyone with a token read a producer feed and its followers, and health checks need none', async () => {
    const headers = await as('alice');
    expect((await anonymous.call('GET', '/v1/feeds/user/bob', undefined, headers)).status).toBe(200);
    expect((await anonymous.call('GET', '/v1/feeds/user/carol/followers', undefined, headers)).body).toEqual({ items: [{ feed: 'timeline:bob' }], next: null });
    expect((await anonymous.call('GET', '/healthz')).status).toBe(200);
    expect((await anonymous.call('GET', '/readyz')).status).toBe(200);
  });

  it('lets an admin token act for any user, and takes tokens signed by the configured public key (ES256)', async () => {
    const admin = await as(undefined);
    const posted = await anonymous.call<{ id: string }>('POST', '/v1/feeds/user/dora/activities', { actor: 'dora', verb: 'post', object: 'by the backend' }, admin);
    expect(posted.status).toBe(201);
    expect((await anonymous.call('GET', '/v1/admin/deadletters', undefined, admin)).status).toBe(200);
    const signed = await new SignJWT({ sub: 'dora' }).setProtectedHeader({ alg: 'ES256' }).sign(privateKey);
    const read = await anonymous.call<{ items: Array<{ id: string }> }>('GET', '/v1/feeds/timeline/dora', undefined, { authorization: `Bearer ${signed}` });
    expect(read.status).toBe(200);
    expect((await anonymous.call('PUT', '/v1/feeds/timeline/dora/follows/user/bob', undefined, { authorization: `Bearer ${signed}` })).status).toBe(204);
  });
});

describe('standalone with tokens: private feeds and follow requests', () => {
  let deployment: Deployment;
  let dataDir: string;
  const tokenFor = hs256Tokens(secret);
  /** Acts as each path's owner, or as an admin. */
  let owners: FeedClient;
  let anonymous: FeedClient;
  const as = async (sub: string | undefined) => ({ authorization: `Bearer ${await tokenFor(sub)}` });
  const ids = (items: Array<{ id: string }>) => items.map((a) => a.id);
  const timelineOf = async (reader: string) => ids(await owners.readAll(reader));
  const post = async (object: string) => (await owners.post('user:bob', { actor: 'bob', verb: 'post', object })).body.id;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'feedmill-private-'));
    deployment = await startStandalone({ dataDir, env: { FEEDMILL_JWT_SECRET: secret } });
    owners = new FeedClient(deployment.baseUrl, tokenFor);
    anonymous = new FeedClient(deployment.baseUrl);
  });
  afterAll(async () => {
    await deployment?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps a private feed’s activities from everyone but its owner and the followers it approved, and takes them back at once from one it removes', async () => {
    const older = [await post('one'), await post('two')].reverse();
    expect(await owners.api.putSettings('user:bob', { private: true })).toEqual({ private: true });
    expect(await owners.api.settings('user:bob')).toEqual({ private: true });
    expect((await anonymous.call('PUT', '/v1/feeds/user/bob/settings', { private: false }, await as('alice'))).status).toBe(403);

    // A follow waits for bob, and shows nothing meanwhile.
    const asked = await owners.follow('timeline:alice', 'user:bob');
    expect([asked.status, asked.body]).toEqual([202, { status: 'pending' }]);
    await owners.follow('timeline:carol', 'user:bob');
    await waitUntilSettled(owners);
    expect(await timelineOf('timeline:alice')).toEqual([]);
    expect((await anonymous.call('GET', '/v1/feeds/user/bob', undefined, await as('alice'))).status).toBe(403);
    expect(await owners.api.followRequests('user:bob')).toEqual({ items: [{ feed: 'timeline:alice' }, { feed: 'timeline:carol' }], next: null });
    expect((await anonymous.call('GET', '/v1/feeds/user/bob/follow-requests', undefined, await as('alice'))).status).toBe(403);

    // Approved, alice gets the history; rejected, carol gets nothing and may not read.
    await owners.api.approveFollowRequest('user:bob', 'timeline:alice');
    await owners.api.rejectFollowRequest('user:bob', 'timeline:carol');
    await expect(owners.api.approveFollowRequest('user:bob', 'timeline:carol')).rejects.toMatchObject({ status: 404, code: 'not_found', field: 'followerId' });
    expect(await owners.api.followRequests('user:bob')).toEqual({ items: [], next: null });
    const newer = await post('three');
    await waitUntilSettled(owners);
    expect(await timelineOf('timeline:alice')).toEqual([newer, ...older]);
    expect((await anonymous.call('GET', '/v1/feeds/user/bob', undefined, await as('alice'))).status).toBe(200);
    expect(await timelineOf('timeline:carol')).toEqual([]);
    expect((await anonymous.call('GET', '/v1/feeds/user/bob', undefined, await as('carol'))).status).toBe(403);
    expect((await anonymous.call('GET', '/v1/feeds/user/bob/followers', undefined, await as('carol'))).status).toBe(403);

    // Removed, alice sees nothing of bob's on her next read, even with a cursor taken before.
    const first = await owners.page('timeline:alice', 1);
    expect(first.body.next).not.toBeNull();
    await owners.api.removeFollower('user:bob', 'timeline:alice');
    expect((await owners.page('timeline:alice', 10)).body.items).toEqual([]);
    expect((await owners.page('timeline:alice', 10, first.body.next!)).body.items).toEqual([]);
    expect((await anonymous.call('GET', '/v1/feeds/user/bob', undefined, await as('alice'))).status).toBe(403);
  });

  it('lets only a trusted backend import follows of a private feed, and makes follows immediate again once the feed is public', async () => {
    await owners.api.putSettings('user:dan', { private: true });
    const refused = await anonymous.call<{ code: string; field: string }>('POST', '/v1/follows', { follows: [{ source: 'timeline:erin', target: 'user:dan' }] }, await as('erin'));
    expect([refused.status, refused.body.code, refused.body.field]).toEqual([403, 'forbidden', 'follows[0].target']);
    expect((await anonymous.call('POST', '/v1/follows', { follows: [{ source: 'timeline:erin', target: 'user:dan' }] }, await as(undefined))).status).toBe(200);
    expect(await owners.api.following('timeline:erin')).toEqual({ items: [{ feed: 'user:dan' }], next: null });
    await owners.api.putSettings('user:dan', { private: false });
    expect((await owners.follow('timeline:fay', 'user:dan')).status).toBe(204);
    // A follower kept from when the feed was private still follows.
    expect(await owners.api.followers('user:dan')).toEqual({ items: [{ feed: 'timeline:erin' }, { feed: 'timeline:fay' }], next: null });
  });

  it("lets an owner's timeline follow the owner's own private feed at once, and import that follow", async () => {
    await owners.api.putSettings('user:gil', { private: true });
    const own = (await owners.post('user:gil', { actor: 'gil', verb: 'post', object: 'mine' })).body.id;
    expect((await owners.follow('timeline:gil', 'user:gil')).status).toBe(204);
    await waitUntilSettled(owners);
    expect(await timelineOf('timeline:gil')).toEqual([own]);
    expect(await owners.api.followRequests('user:gil')).toEqual({ items: [], next: null });
    await owners.api.putSettings('user:hal', { private: true });
    expect((await anonymous.call('POST', '/v1/follows', { follows: [{ source: 'timeline:hal', target: 'user:hal' }] }, await as('hal'))).status).toBe(200);
    expect(await owners.api.following('timeline:hal')).toEqual({ items: [{ feed: 'user:hal' }], next: null });
  });
});

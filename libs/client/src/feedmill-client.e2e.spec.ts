import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FeedId } from '@feedmill/contracts';
import { FeedClient, hs256Tokens, refusal, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';
import { FeedmillClient } from './index.js';

const secret = 'client suite secret of sixteen characters';

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of items) all.push(item);
  return all;
}

/** The typed client against a real standalone with tokens: every route, its answers and its refusals. */
describe('FeedmillClient', () => {
  let deployment: Deployment;
  let dataDir: string;
  const tokenFor = hs256Tokens(secret);
  /** Clients acting as one user each, and as an admin. */
  let as: (sub: string) => FeedmillClient;
  let admin: FeedmillClient;
  let settle: () => Promise<number>;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'feedmill-client-'));
    deployment = await startStandalone({ dataDir, env: { FEEDMILL_JWT_SECRET: secret } });
    as = (sub) => new FeedmillClient({ baseUrl: deployment.baseUrl, token: () => tokenFor(sub) });
    admin = new FeedmillClient({ baseUrl: `${deployment.baseUrl}/`, token: await tokenFor(undefined) });
    const probe = new FeedClient(deployment.baseUrl);
    settle = () => waitUntilSettled(probe);
  });
  afterAll(async () => {
    await deployment?.stop();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('posts, reads pages and every item, updates, bumps and removes', async () => {
    const bob = as('bob');
    expect(await as('alice').follow('timeline:alice', 'user:bob', { copyLimit: 100 })).toEqual({ status: 'following' });
    const posted = [];
    for (let i = 0; i < 7; i++) posted.push(await bob.addActivity('user:bob', { actor: 'bob', verb: 'post', object: `photo:${i}`, foreignId: `photo-${i}` }));
    expect(posted[0]).toMatchObject({ feed: 'user:bob', actor: 'bob', object: 'photo:0', id: expect.any(String), time: expect.any(String) });
    // A repeated foreignId gives back the first activity.
    expect((await bob.addActivity('user:bob', { actor: 'bob', verb: 'post', object: 'again', foreignId: 'photo-0' })).id).toBe(posted[0]!.id);
    await settle();

    const alice = as('alice');
    const first = await alice.readFeed('timeline:alice', { limit: 3 });
    expect(first.items.map((a) => a.object)).toEqual(['photo:6', 'photo:5', 'photo:4']);
    expect(first.next).toEqual(expect.any(String));
    const second = await alice.readFeed('timeline:alice', { limit: 3, cursor: first.next! });
    expect(second.items.map((a) => a.object)).toEqual(['photo:3', 'photo:2', 'photo:1']);
    expect((await collect(alice.feedItems('timeline:alice', { limit: 2 }))).map((a) => a.id)).toEqual(posted.map((a) => a.id).reverse());

    const updated = await bob.updateActivity('user:bob', posted[1]!.id, { object: 'photo:1-edited', extra: { tags: ['sea'] } });
    expect(updated).toMatchObject({ id: posted[1]!.id, object: 'photo:1-edited', extra: { tags: ['sea'] }, updatedAt: expect.any(String) });
    const bumped = await bob.bumpActivity('user:bob', posted[1]!.id, '2999-01-01T00:00:00.000Z');
    expect(bumped.bumpedAt).toBe('2999-01-01T00:00:00.000Z');
    await bob.removeActivity('user:bob', posted[6]!.id);
    await settle();
    const after = await collect(alice.feedItems('timeline:alice'));
    expect(after.map((a) => a.object)).toEqual(['photo:5', 'photo:4', 'photo:3', 'photo:2', 'photo:1-edited', 'photo:0']);
    expect(await alice.counts('timeline:alice')).toEqual({ followers: 0, following: 1 });

    await alice.unfollow('timeline:alice', 'user:bob');
    expect((await alice.readFeed('timeline:alice')).items).toEqual([]);
  });

  it('follows with a copy limit and unfollows keeping the history', async () => {
    const pat = as('pat');
    for (let i = 0; i < 4; i++) await pat.addActivity('user:pat', { actor: 'pat', verb: 'post', object: `pat:${i}` });
    const quinn = as('quinn');
    expect(await quinn.follow('timeline:quinn', 'user:pat', { copyLimit: 2 })).toEqual({ status: 'following' });
    await settle();
    expect((await collect(quinn.feedItems('timeline:quinn'))).map((a) => a.object)).toEqual(['pat:3', 'pat:2']);
    await quinn.unfollow('timeline:quinn', 'user:pat', { keepHistory: true });
    expect((await collect(quinn.feedItems('timeline:quinn'))).map((a) => a.object)).toEqual(['pat:3', 'pat:2']);
    expect(await refusal(quinn.follow('timeline:quinn', 'user:pat', { copyLimit: -1 }))).toMatchObject({ status: 400, code: 'invalid_request', field: 'query.copyLimit' });
  });

  it('stops fetching pages when the caller stops iterating', async () => {
    let requests = 0;
    const counting = new FeedmillClient({
      baseUrl: deployment.baseUrl,
      token: await tokenFor('dora'),
      fetch: (input, init) => {
        requests++;
        return fetch(input, init);
      },
    });
    for (let i = 0; i < 5; i++) await counting.addActivity('user:dora', { actor: 'dora', verb: 'post', object: `note:${i}` });
    requests = 0;
    const seen = [];
    for await (const activity of counting.feedItems('user:dora', { limit: 2 })) {
      seen.push(activity.object);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual(['note:4', 'note:3', 'note:2']);
    expect(requests).toBe(2);
  });

  it('reads a slice page by page, without the activities of a private feed the caller may not read', async () => {
    const first = await as('jade').addActivity('user:jade', { actor: 'jade', verb: 'review', object: 'cv', refs: ['applicant:c1'] });
    const second = await as('kurt').addActivity('user:kurt', { actor: 'kurt', verb: 'interview', object: 'call', refs: ['applicant:c1', 'position:c2'] });
    expect(second.refs).toEqual(['applicant:c1', 'position:c2']);
    const page = await as('lena').readSlice('applicant:c1', { limit: 1 });
    expect({ items: page.items.map((a) => a.id), more: page.next !== null }).toEqual({ items: [second.id], more: true });
    expect(Object.keys(page).sort()).toEqual(['items', 'next']);
    expect((await collect(as('lena').sliceItems('applicant:c1', { limit: 1 }))).map((a) => a.id)).toEqual([second.id, first.id]);
    await as('kurt').putSettings('user:kurt', { private: true });
    expect((await collect(as('lena').sliceItems('applicant:c1'))).map((a) => a.id)).toEqual([first.id]);
    expect((await collect(admin.sliceItems('applicant:c1'))).map((a) => a.id)).toEqual([second.id, first.id]);
    expect(await refusal(admin.readSlice('applicant'))).toMatchObject({ status: 400, code: 'invalid_request', field: 'ref' });
  });

  it('erases a feed, its owner or an admin only: its activities leave the timelines that followed it', async () => {
    await as('gus').follow('timeline:gus', 'user:hal');
    await as('hal').addActivity('user:hal', { actor: 'hal', verb: 'post', object: 'to be erased' });
    await settle();
    expect((await as('gus').readFeed('timeline:gus')).items.map((a) => a.object)).toEqual(['to be erased']);
    expect(await refusal(as('gus').eraseFeed('user:hal'))).toMatchObject({ status: 403, code: 'forbidden' });
    await as('hal').eraseFeed('user:hal');
    expect((await as('gus').readFeed('timeline:gus')).items).toEqual([]);
    expect(await as('gus').counts('timeline:gus')).toEqual({ followers: 0, following: 0 });
    await admin.eraseFeed('timeline:gus');
  });

  it('throws refusals as FeedmillApiError with status, code and field', async () => {
    const invalid = await refusal(as('erin').addActivity('user:erin', { actor: 'erin', verb: '', object: 'x' }));
    expect(invalid).toMatchObject({ name: 'FeedmillApiError', status: 400, code: 'invalid_request', field: 'body.verb' });
    expect(invalid.message).toMatch(/body\.verb/);
    expect(await refusal(as('erin').addActivity('user:bob', { actor: 'erin', verb: 'post', object: 'forged' }))).toMatchObject({ status: 403, code: 'forbidden', field: 'id' });
    expect(await refusal(as('erin').removeActivity('user:erin', 'no-such-activity'))).toMatchObject({ status: 404, code: 'activity_not_found' });
    expect(await refusal(as('erin').readFeed('nogroup:erin' as FeedId))).toMatchObject({ status: 404, code: 'unknown_group', field: 'group' });
    expect(await refusal(as('erin').readFeed('timeline:erin', { cursor: 'not-a-cursor' }))).toMatchObject({ status: 400, code: 'invalid_cursor', field: 'query.cursor' });
    expect(await refusal(new FeedmillClient({ baseUrl: deployment.baseUrl }).readFeed('user:bob'))).toMatchObject({ status: 401, code: 'unauthorized', field: 'authorization' });
    expect(await refusal(as('erin').deadLetters())).toMatchObject({ status: 403, code: 'forbidden', field: 'authorization' });
    await expect(as('erin').readFeed('erin' as FeedId)).rejects.toThrow(TypeError);
    // Nothing was written by any of them.
    expect((await as('erin').readFeed('user:erin')).items).toEqual([]);
  });

  it('handles private feeds and follow requests, and lists follows with iterators', async () => {
    const frank = as('frank');
    expect(await frank.putSettings('user:frank', { private: true })).toEqual({ private: true });
    expect(await frank.settings('user:frank')).toEqual({ private: true });
    for (const reader of ['gail', 'hugo', 'ines']) expect(await as(reader).follow(`timeline:${reader}`, 'user:frank')).toEqual({ status: 'pending' });
    expect(await collect(frank.followRequestItems('user:frank', { limit: 2 }))).toEqual(['timeline:gail', 'timeline:hugo', 'timeline:ines']);
    expect((await frank.followRequests('user:frank', { limit: 1 })).items).toEqual([{ feed: 'timeline:gail' }]);

    await frank.approveFollowRequest('user:frank', 'timeline:gail');
    await frank.approveFollowRequest('user:frank', 'timeline:hugo');
    await frank.rejectFollowRequest('user:frank', 'timeline:ines');
    expect(await refusal(frank.approveFollowRequest('user:frank', 'timeline:ines'))).toMatchObject({ status: 404, code: 'not_found' });
    expect(await collect(frank.followerItems('user:frank', { limit: 1 }))).toEqual(['timeline:gail', 'timeline:hugo']);
    expect(await collect(as('gail').followingItems('timeline:gail'))).toEqual(['user:frank']);
    expect((await frank.followers('user:frank')).next).toBeNull();

    await frank.removeFollower('user:frank', 'timeline:hugo');
    expect(await frank.counts('user:frank')).toEqual({ followers: 1, following: 0 });
    expect(await refusal(as('hugo').readFeed('user:frank'))).toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('imports follows and activities in bulk', async () => {
    const follows = ['kim', 'lee', 'max'].map((reader) => ({ source: `timeline:${reader}` as FeedId, target: 'user:jo' as FeedId }));
    expect(await admin.followMany(follows)).toBe(3);
    const imported = await admin.addActivities([
      { feed: 'user:jo', actor: 'jo', verb: 'post', object: 'old:1', time: '2020-01-01T00:00:00.000Z' },
      { feed: 'user:jo', actor: 'jo', verb: 'post', object: 'old:2', time: '2020-01-02T00:00:00.000Z' },
    ]);
    expect(imported.map((a) => [a.feed, a.object])).toEqual([
      ['user:jo', 'old:1'],
      ['user:jo', 'old:2'],
    ]);
    await settle();
    expect((await collect(as('kim').feedItems('timeline:kim'))).map((a) => a.object)).toEqual(['old:2', 'old:1']);
    const bad = await refusal(admin.followMany([...follows, { source: 'user:jo', target: 'user:kim' }]));
    expect(bad).toMatchObject({ status: 400, code: 'group_cannot_follow', field: 'follows[3].source' });
  });

  it('reaches the operations routes, the probes and the OpenAPI document', async () => {
    expect(await admin.deadLetters()).toEqual({ items: [] });
    expect(await admin.replayDeadLetters()).toEqual({ replayed: 0, failed: 0, items: [] });
    expect(await admin.rebuildStatus()).toMatchObject({ projection: 'timeline', state: expect.stringMatching(/idle|done/) });
    const anonymous = new FeedmillClient({ baseUrl: deployment.baseUrl });
    expect(await anonymous.alive()).toBe(true);
    expect(await anonymous.readiness()).toMatchObject({ ready: true, services: expect.arrayContaining([expect.objectContaining({ service: 'content', ready: true })]) });
    const document = await anonymous.openApiDocument();
    expect(document).toMatchObject({ openapi: '3.1.0', paths: expect.objectContaining({ '/v1/feeds/{group}/{id}': expect.any(Object) }) });
    expect(await new FeedmillClient({ baseUrl: 'http://127.0.0.1:1' }).alive()).toBe(false);
  });
});

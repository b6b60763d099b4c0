import { request } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Activity, FeedId } from '@feedmill/contracts';
import { openSealedFileLog } from '@feedmill/event-log';
import { FeedClient, readAllEvents, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';
import { referenceTimelines } from '@feedmill/testing';

const producers = Array.from({ length: 4 }, (_, i) => `user:p${i}` as FeedId);
const readers = Array.from({ length: 30 }, (_, i) => `timeline:r${i}` as FeedId);
/** Reader i follows producers i, i+1 and i+2 (mod 4): every producer has followers. */
const followsOf = (r: number) => [0, 1, 2].map((k) => producers[(r + k) % producers.length]!);

let dataDir: string;
let env: Record<string, string>;
let deployment: Deployment;
let api: FeedClient;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-bulk-'));
  const configPath = join(dataDir, 'feeds.json');
  await writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 50 } } }));
  env = { FEED_CONFIG: configPath };
  deployment = await startStandalone({ dataDir, env });
  api = new FeedClient(deployment.baseUrl);
});
afterAll(async () => {
  await deployment?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

const newestFirst = (activities: Activity[]) => [...activities].sort((a, b) => (a.time === b.time ? (a.id < b.id ? 1 : -1) : a.time < b.time ? 1 : -1));
const ids = (activities: Activity[]) => activities.map((a) => a.id);

async function positions(): Promise<Record<string, number>> {
  const { services } = await api.api.readiness();
  return Object.fromEntries(services.map((s) => [s.service, s.position]));
}

async function everyFeed(): Promise<Record<string, string[]>> {
  const feeds: Record<string, string[]> = {};
  for (const feed of [...readers, ...producers]) feeds[feed] = ids(await api.readAll(feed, 50));
  return feeds;
}

/** `levels` objects, each inside the one before, as JSON: written out, since a deep one overflows `JSON.stringify` here. */
function nestedJson(levels: number): string {
  return `${'{"k":'.repeat(levels)}"leaf"${'}'.repeat(levels)}`;
}

describe('bulk imports on the standalone', () => {
  const posted: Activity[] = [];

  it('follows in bulk, and every follower’s timeline shows what its feeds held before and what they post after', async () => {
    const before = await api.post(producers[0]!, { actor: 'p0', verb: 'post', object: 'before', time: '2026-01-01T00:00:00.000Z' });
    posted.push(before.body);
    const follows = readers.flatMap((reader, r) => followsOf(r).map((target) => ({ source: reader, target })));
    expect(await api.api.followMany([...follows, follows[0]!])).toBe(follows.length + 1);

    posted.push((await api.post(producers[1]!, { actor: 'p1', verb: 'post', object: 'after', time: '2026-01-02T00:00:00.000Z' })).body);
    posted.push(...(await api.api.addActivities(producers.map((feed, i) => ({ feed, actor: feed, verb: 'post', object: `bulk-${i}`, time: `2026-01-03T00:00:0${i}.000Z` })))));

    await waitUntilSettled(api);
    for (const [r, reader] of readers.entries()) {
      const expected = newestFirst(posted.filter((a) => followsOf(r).includes(a.feed)));
      expect({ reader, ids: ids(await api.readAll(reader, 7)) }).toEqual({ reader, ids: ids(expected) });
    }
    const followersOfP0 = readers.filter((_, r) => followsOf(r).includes(producers[0]!)).length;
    expect(await api.api.counts('user:p0')).toEqual({ followers: followersOfP0, following: 0 });
  });

  it('adds activities in bulk, answering them in request order, a repeated foreignId naming the first, and they read as posted', async () => {
    const single = await api.post(producers[2]!, { actor: 'p2', verb: 'post', object: 'single', foreignId: 'known' });
    const items = [
      { feed: producers[3]!, actor: 'p3', verb: 'post', object: 'a', foreignId: 'x' },
      { feed: producers[2]!, actor: 'p2', verb: 'post', object: 'b', foreignId: 'known' },
      { feed: producers[3]!, actor: 'p3', verb: 'post', object: 'c', foreignId: 'x' },
      { feed: producers[3]!, actor: 'p3', verb: 'like', object: 'd', extra: { n: 1 } },
    ];
    const activities = await api.api.addActivities(items);
    const [a, b, c, d] = activities;
    expect(activities.map((x) => [x.feed, x.object])).toEqual([
      [producers[3], 'a'],
      [producers[2], 'single'],
      [producers[3], 'a'],
      [producers[3], 'd'],
    ]);
    expect(b).toEqual(single.body);
    expect(c).toEqual(a);
    expect(d).toMatchObject({ verb: 'like', extra: { n: 1 } });
    // The single route agrees: the foreignId is taken by the bulk one.
    expect((await api.post(producers[3]!, { actor: 'p3', verb: 'post', object: 'again', foreignId: 'x' })).body).toEqual(a);
    expect(ids(await api.readAll(producers[3]!))).toEqual(expect.arrayContaining([a!.id, d!.id]));
    posted.push(single.body, a!, d!);
    await waitUntilSettled(api);
    expect(ids(await api.readAll(readers[1]!, 50))).toEqual(expect.arrayContaining([a!.id, d!.id, single.body.id]));
  });

  it('writes nothing of a request with a bad item, and names the item', async () => {
    const before = await positions();
    const fresh = (i: number) => `user:fresh${i}`;
    // Sent as written, past the typed client, which would not send most of these.
    const refusals: Array<[string, unknown, number, string, string]> = [
      ['/v1/follows', { follows: [0, 1, 2, 3].map((i) => ({ source: `timeline:n${i}`, target: i === 3 ? 'nogroup:x' : fresh(i) })) }, 404, 'unknown_group', 'follows[3].target'],
      ['/v1/follows', { follows: [{ source: 'timeline:n0', target: fresh(0) }, { source: fresh(1), target: fresh(0) }] }, 400, 'group_cannot_follow', 'follows[1].source'],
      ['/v1/follows', { follows: [{ source: 'timeline:n0', target: fresh(0) }, { source: 'timeline:n1', target: 'timeline:n2' }] }, 400, 'group_not_writable', 'follows[1].target'],
      ['/v1/follows', { follows: [{ source: 'timeline:n0', target: fresh(0) }, { source: 'timeline:n1', target: 'user:bad id' }] }, 400, 'invalid_request', 'follows[1].target'],
      ['/v1/follows', { follows: [{ source: 'timeline:n0', target: fresh(0), extra: 1 }] }, 400, 'invalid_request', 'follows[0].extra'],
      ['/v1/activities', { activities: [0, 1, 2].map((i) => ({ feed: i === 2 ? 'timeline:n0' : fresh(i), actor: 'a', verb: 'v', object: 'o' })) }, 400, 'group_not_writable', 'activities[2].feed'],
      ['/v1/activities', { activities: [0, 1, 2, 3, 4].map((i) => ({ feed: fresh(i), actor: 'a', object: 'o', ...(i === 4 ? {} : { verb: 'v' }) })) }, 400, 'invalid_request', 'activities[4].verb'],
      ['/v1/activities', { activities: [{ feed: fresh(0), actor: 'a', verb: 'v', object: 'o' }, { feed: 'nogroup:x', actor: 'a', verb: 'v', object: 'o' }] }, 404, 'unknown_group', 'activities[1].feed'],
      ['/v1/activities', { activities: [{ feed: fresh(0), actor: 'a', verb: 'v', object: 'o', time: 'yesterday' }] }, 400, 'invalid_request', 'activities[0].time'],
      // Nested deeper than a single post may be (and deep enough to overflow a schema's walk): refused before it is walked.
      ...[100, 5_000].map((levels): [string, unknown, number, string, string] => [
        '/v1/activities',
        `{"activities":[{"feed":"${fresh(0)}","actor":"a","verb":"v","object":"o","extra":{"k":${nestedJson(levels)}}}]}`,
        400,
        'invalid_request',
        'activities[0].extra.k',
      ]),
    ];
    for (const [path, body, status, code, field] of refusals) {
      const answer = await api.call<{ code: string; field: string; message: string }>('POST', path, body);
      // A refusal of deep input names where it goes too deep, from the field on.
      const named = answer.body.field?.startsWith(`${field}.`) ? field : answer.body.field;
      expect({ path, field, answer: [answer.status, answer.body.code, named] }).toEqual({ path, field, answer: [status, code, field] });
      expect(answer.body.message).toContain(field);
    }
    expect(await positions()).toEqual(before);
    for (const i of [0, 1, 2, 3, 4]) {
      expect((await api.page(fresh(i))).body.items).toEqual([]);
      expect(await api.api.counts(`user:fresh${i}`)).toEqual({ followers: 0, following: 0 });
    }
  });

  it('refuses requests past the limits, naming the field, and takes one at the limit', async () => {
    const before = await positions();
    const follows = (n: number) => ({ follows: Array.from({ length: n }, (_, i) => ({ source: `timeline:l${i}` as FeedId, target: producers[i % producers.length]! })) });
    // Sent as written: a refusal's status and body are what is checked.
    const refused = async (path: string, body: unknown) => {
      const { status, body: error } = await api.call<{ code: string; field: string }>('POST', path, body);
      return [status, error.code, error.field];
    };
    expect(await refused('/v1/follows', follows(10_001))).toEqual([400, 'invalid_request', 'follows']);
    const activities = (n: number) => Array.from({ length: n }, (_, i) => ({ feed: producers[0]!, actor: 'a', verb: 'v', object: `o${i}` }));
    expect(await refused('/v1/activities', { activities: activities(1_001) })).toEqual([400, 'invalid_request', 'activities']);
    // One activity larger than the single route takes (BODY_LIMIT, 64 KiB by default).
    const large = [...activities(2)];
    large[1] = { ...large[1]!, extra: { text: 'x'.repeat(70_000) } } as (typeof large)[number];
    expect(await refused('/v1/activities', { activities: large })).toEqual([413, 'payload_too_large', 'activities[1]']);
    // 5,000 follows between feeds of 115-character ids: a body well under the route's limit, an event over 1 MB.
    const long = 'y'.repeat(110);
    const longFollows = Array.from({ length: 5_000 }, (_, i) => ({ source: `timeline:${long}${i}`, target: `user:${long}${i}` }));
    expect(await refused('/v1/follows', { follows: longFollows })).toEqual([413, 'payload_too_large', 'follows']);
    // 1,000 activities of about 950 bytes each: 0.95 MB as sent, 1.3 MB as the log stores them
    // sealed (base64), past what one JetStream message takes.
    const wordy = activities(1_000).map((activity) => ({ ...activity, extra: { text: 'w'.repeat(820) } }));
    expect(JSON.stringify({ activities: wordy }).length).toBeLessThan(1_000_000);
    expect(await refused('/v1/activities', { activities: wordy })).toEqual([413, 'payload_too_large', 'activities']);
    // A body past the bulk routes' limit (4 MiB). The server answers as soon as it reads the
    // length and closes the connection (Fastify does, rather than read what it refuses), so
    // a client still writing the body may fail to: send the length and wait for the answer.
    const tooLarge = await answerToLength(`${api.baseUrl}/v1/activities`, 5 * 1024 * 1024);
    expect([tooLarge.status, tooLarge.body.code, tooLarge.body.field]).toEqual([413, 'payload_too_large', 'body']);
    expect(await positions()).toEqual(before);

    expect(await api.api.followMany(follows(10_000).follows)).toBe(10_000);
    const full = await api.api.addActivities(activities(1_000));
    expect(full.map((a) => a.object)).toEqual(activities(1_000).map((a) => a.object));
    posted.push(...full);
    const after = await waitUntilSettled(api);
    // Each request is one event in the log.
    expect(after).toBe(before['content']! + 2);
  });

  it('reads activities without a time in the order they were received: an import’s items, and posts one after another', async () => {
    // Many share a millisecond, where the id decides the order: ids made in order keep it.
    const imported = await api.api.addActivities(Array.from({ length: 40 }, (_, i) => ({ feed: producers[0]!, actor: 'p0', verb: 'post', object: `in-order-${i}` })));
    expect(new Set(imported.map((a) => a.time)).size).toBe(1);
    const one: Activity[] = [];
    for (let i = 0; i < 40; i++) one.push((await api.post(producers[1]!, { actor: 'p1', verb: 'post', object: `one-${i}` })).body);
    posted.push(...imported, ...one);
    expect(ids(await api.readAll(producers[0]!, 50)).slice(0, 40)).toEqual(ids(imported).reverse());
    expect(ids(await api.readAll(producers[1]!, 50)).slice(0, 40)).toEqual(ids(one).reverse());
    await waitUntilSettled(api);
    const reader = readers.findIndex((_, r) => followsOf(r).includes(producers[0]!) && followsOf(r).includes(producers[1]!));
    expect(ids(await api.readAll(readers[reader]!, 50)).slice(0, 50)).toEqual(ids(newestFirst([...imported, ...one])).slice(0, 50));
  });

  it('replays the imports after a restart to the same timelines, which the log’s reference model agrees with', async () => {
    await waitUntilSettled(api);
    const live = await everyFeed();
    const port = Number(new URL(deployment.baseUrl).port);
    await deployment.stop();
    deployment = await startStandalone({ dataDir, env, port });
    await waitUntilSettled(api, 60_000);
    expect(await everyFeed()).toEqual(live);
    expect(await api.api.following('timeline:l9999')).toEqual({ items: [{ feed: producers[9999 % producers.length] }], next: null });

    await deployment.stop();
    const log = await openSealedFileLog({ dir: dataDir });
    const reference = referenceTimelines(await readAllEvents(log));
    await log.close();
    for (const reader of readers) expect({ reader, ids: live[reader] }).toEqual({ reader, ids: ids(reference.timelineOf(reader)) });
    deployment = await startStandalone({ dataDir, env, port });
  });
});

/** The answer to a JSON POST that announces `length` bytes of body, before any is sent. */
function answerToLength(url: string, length: number): Promise<{ status: number; body: { code?: string; field?: string } }> {
  return new Promise((resolve, reject) => {
    const call = request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': String(length) } }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        call.destroy();
        resolve({ status: response.statusCode!, body: JSON.parse(text) as { code?: string; field?: string } });
      });
    });
    call.on('error', reject);
    call.flushHeaders();
  });
}

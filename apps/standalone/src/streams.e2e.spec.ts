import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { FeedId } from '@feedmill/contracts';
import { FeedmillClient, type FeedStreamEvent } from '@feedmill/client';
import { FeedClient, nextStreamEvent, hs256Tokens, startStandalone, waitFor, type Deployment } from '@feedmill/harness';

const secret = 'streams secret of sixteen characters or more';
const GRACE_SECONDS = 1;


/**
 * Reads a response body as text for `ms`, then lets go of the connection. The tests of the
 * stream's HTTP (its headers, framing, heartbeats, the token in its query) open it with raw
 * `fetch` on purpose: the typed client parses all of that away.
 */
async function readFor(response: Response, ms: number): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const chunk = await Promise.race([reader.read(), new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), until - Date.now()))]);
    if (!chunk || chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  await reader.cancel();
  return text;
}

describe('standalone streams: tokens, heartbeats, tiers and resumes', () => {
  let deployment: Deployment;
  let dataDir: string;
  let api: FeedClient;
  const tokenFor = hs256Tokens(secret);

  /** The timeline service's stream counters, as /readyz shows them. */
  const streamCounters = async () => {
    const counters = (await api.api.readiness()).services.find((service) => service.service === 'timeline')!.counters!;
    return { open: counters['streamFeedsOpen'], grace: counters['streamFeedsInGrace'] };
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'feedmill-streams-'));
    deployment = await startStandalone({
      dataDir,
      env: { FEEDMILL_JWT_SECRET: secret, REALTIME_GRACE_SECONDS: String(GRACE_SECONDS), REALTIME_HEARTBEAT_SECONDS: '0.1', REALTIME_RING: '2' },
    });
    api = new FeedClient(deployment.baseUrl, tokenFor);
  });
  afterAll(async () => {
    await deployment?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('takes a token from ?access_token= (an EventSource cannot send headers), and refuses none (401) or another user’s (403)', async () => {
    const url = `${deployment.baseUrl}/v1/feeds/timeline/tok/stream`;
    const opened = await fetch(`${url}?access_token=${await tokenFor('tok')}`, { headers: { 'x-request-id': 'stream-1' } });
    expect(opened.status).toBe(200);
    expect(opened.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(opened.headers.get('x-request-id')).toBe('stream-1');
    expect(await readFor(opened, 300)).toMatch(/^retry: \d+\n\nid: [0-9a-f]+-0\nevent: reset\ndata: \{"items":\[\],"newest":null\}\n\n/);
    const refused = await fetch(url);
    expect({ status: refused.status, body: await refused.json() }).toEqual({ status: 401, body: expect.objectContaining({ code: 'unauthorized' }) });
    const other = await fetch(`${url}?access_token=${await tokenFor('mallory')}`);
    expect({ status: other.status, body: await other.json() }).toEqual({ status: 403, body: expect.objectContaining({ code: 'forbidden' }) });
    const bad = await fetch(`${url}?access_token=${await tokenFor('tok')}&since=1`);
    expect({ status: bad.status, body: await bad.json() }).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_request', field: 'query.since' }) });
  });

  it('answers HEAD with the stream’s headers at once, and with the same refusals as GET', async () => {
    const url = `${deployment.baseUrl}/v1/feeds/timeline/tok/stream`;
    const head = await fetch(`${url}?access_token=${await tokenFor('tok')}`, { method: 'HEAD', signal: AbortSignal.timeout(5_000) });
    expect({ status: head.status, type: head.headers.get('content-type'), body: await head.text() }).toEqual({ status: 200, type: 'text/event-stream; charset=utf-8', body: '' });
    expect((await fetch(url, { method: 'HEAD', signal: AbortSignal.timeout(5_000) })).status).toBe(401);
    expect((await fetch(`${url}?access_token=${await tokenFor('mallory')}`, { method: 'HEAD', signal: AbortSignal.timeout(5_000) })).status).toBe(403);
    await waitFor(async () => ((await streamCounters()).open === 0 ? true : undefined), { timeoutMs: 5_000, what: 'no stream open' });
  });

  it('ends a stream when its token expires, and refuses a reconnect with that token', async () => {
    const url = `${deployment.baseUrl}/v1/feeds/timeline/tok/stream`;
    const shortLived = await hs256Tokens(secret, 2)('tok');
    const opened = await fetch(`${url}?access_token=${shortLived}`);
    expect(opened.status).toBe(200);
    // The stream ends by itself at the expiry (2 s, counted in whole seconds): read until it does.
    const reader = opened.body!.getReader();
    const started = Date.now();
    let ended = false;
    while (!ended && Date.now() - started < 6_000) ended = (await reader.read()).done;
    expect(ended).toBe(true);
    expect(Date.now() - started).toBeLessThan(6_000);
    const again = await fetch(`${url}?access_token=${shortLived}`);
    expect({ status: again.status, body: await again.json() }).toEqual({ status: 401, body: expect.objectContaining({ code: 'unauthorized' }) });
  });

  it('sends heartbeat comments while nothing changes', async () => {
    const opened = await fetch(`${deployment.baseUrl}/v1/feeds/timeline/beat/stream`, { headers: { authorization: `Bearer ${await tokenFor('beat')}` } });
    const text = await readFor(opened, 600);
    expect(text.split(': heartbeat\n\n').length - 1).toBeGreaterThanOrEqual(2);
  });

  it('follows a feed while a stream is open (tier 1) and for the grace period after it closed (tier 2), then lets go: a resume is then a reset', async () => {
    const [bob, alice] = ['user:tier-bob', 'timeline:tier-alice'];
    await api.follow(alice, bob);
    // The streams of the tests before have closed and waited out their grace.
    await waitFor(async () => (isDeepStrictEqual(await streamCounters(), { open: 0, grace: 0 }) ? true : undefined), { what: 'no feed followed', timeoutMs: 10_000 });
    const stream = api.api.stream(alice as FeedId, { reconnect: false });
    expect((await nextStreamEvent(stream)).type).toBe('reset');
    expect(await streamCounters()).toEqual({ open: 1, grace: 0 });
    const live = (await api.post(bob, { actor: bob, verb: 'post', object: 'live' })).body;
    expect(await nextStreamEvent(stream)).toMatchObject({ type: 'added', data: { activity: live } });
    stream.close();
    // The closed connection lets go at once (not at its lease's end): tier 2 starts.
    await waitFor(async () => ((await streamCounters()).grace === 1 ? true : undefined), { what: 'the feed to be in its grace period', timeoutMs: 5_000 });
    expect((await streamCounters()).open).toBe(0);
    const whileAway = (await api.post(bob, { actor: bob, verb: 'post', object: 'while away' })).body;
    await waitFor(async () => ((await streamCounters()).grace === 0 ? true : undefined), { what: 'the grace period to end', timeoutMs: 10_000 });
    const resumed = api.api.stream(alice as FeedId, { reconnect: false, lastEventId: stream.lastEventId });
    try {
      const reset = await nextStreamEvent(resumed);
      expect(reset).toMatchObject({ type: 'reset', data: { items: [whileAway, live], newest: expect.any(String) } });
    } finally {
      resumed.close();
    }
  });

  it('ends the stream of a private feed as soon as its caller may no longer read it: a follower removed, a feed turned private', async () => {
    const [bob, carol, pub] = ['user:s-bob', 'timeline:s-carol', 'user:s-pub'] as FeedId[];
    const as = (sub: string) => new FeedmillClient({ baseUrl: deployment.baseUrl, token: () => tokenFor(sub) });
    const post = (feed: string, object: string) => api.post(feed, { actor: feed, verb: 'post', object });
    await api.api.putSettings(bob!, { private: true });
    expect((await api.follow(carol!, bob!)).status).toBe(202);
    await api.api.approveFollowRequest(bob!, carol!);
    const removed = as('s-carol').stream(bob!, { reconnect: false });
    const turned = as('s-dave').stream(pub!, { reconnect: false });
    try {
      expect((await nextStreamEvent(removed)).type).toBe('reset');
      expect((await nextStreamEvent(turned)).type).toBe('reset');
      await post(bob!, 'while approved');
      await post(pub!, 'while public');
      expect(await nextStreamEvent(removed)).toMatchObject({ type: 'added', data: { activity: { object: 'while approved' } } });
      expect(await nextStreamEvent(turned)).toMatchObject({ type: 'added', data: { activity: { object: 'while public' } } });

      // Nothing else changes in either feed: the change of who may read it ends the stream.
      await api.api.removeFollower(bob!, carol!);
      await api.api.putSettings(pub!, { private: true });
      await expect(nextStreamEvent(removed, 5_000)).rejects.toThrow('the stream ended');
      await expect(nextStreamEvent(turned, 5_000)).rejects.toThrow('the stream ended');
      // Opened again, they are refused.
      expect((await fetch(`${deployment.baseUrl}/v1/feeds/user/s-bob/stream`, { headers: { authorization: `Bearer ${await tokenFor('s-carol')}` } })).status).toBe(403);
    } finally {
      removed.close();
      turned.close();
    }
  });

  it('resets a resume from an event the ring no longer holds, and replays one it does', async () => {
    const [bob, alice] = ['user:ring-bob', 'timeline:ring-alice'];
    await api.follow(alice, bob);
    const stream = api.api.stream(alice as FeedId, { reconnect: false });
    expect((await nextStreamEvent(stream)).type).toBe('reset');
    const started = stream.lastEventId;
    const posted = [];
    for (const object of ['one', 'two', 'three']) {
      posted.push((await api.post(bob, { actor: bob, verb: 'post', object })).body);
      expect(await nextStreamEvent(stream)).toMatchObject({ type: 'added', data: { activity: { object } } });
    }
    const afterOne = (await nextEventOf(api, alice, stream.lastEventId!.replace(/-\d+$/, '-1')))!;
    stream.close();
    // The ring holds two events: after the first, both others come again; from the start, a reset.
    expect(afterOne.map((event) => event.type === 'added' && event.data.activity.object)).toEqual(['two', 'three']);
    const fromStart = api.api.stream(alice as FeedId, { reconnect: false, lastEventId: started });
    try {
      expect(await nextStreamEvent(fromStart)).toMatchObject({ type: 'reset', data: { items: [...posted].reverse() } });
    } finally {
      fromStart.close();
    }
  });
});

/** The first events a stream resumed after `lastEventId` sends, up to two. */
async function nextEventOf(api: FeedClient, feed: string, lastEventId: string): Promise<FeedStreamEvent[]> {
  const stream = api.api.stream(feed as FeedId, { reconnect: false, lastEventId });
  try {
    return [await nextStreamEvent(stream), await nextStreamEvent(stream)];
  } finally {
    stream.close();
  }
}

import { FeedClient, startCluster, startNatsServer, type Deployment, type NatsServerHandle } from '@feedmill/harness';

let nats: NatsServerHandle | undefined;
let deployment: Deployment | undefined;

afterEach(async () => {
  await deployment?.stop();
  await nats?.stop();
});

it('answers writes its full JetStream store cannot keep with 503 unavailable, and keeps serving what it stored', async () => {
  // JetStream's storage runs out after a few dozen 48 KiB posts: the cluster's full disk.
  nats = await startNatsServer({ maxFileStore: '3MB' });
  deployment = await startCluster({ natsUrl: nats.url, stream: 'FULL' });
  const api = new FeedClient(deployment.baseUrl);
  expect((await api.follow('timeline:alice', 'user:bob')).status).toBe(204);
  const big = 'x'.repeat(48 * 1024);
  const kept: string[] = [];
  let refusal: { status: number; body: unknown } | undefined;
  for (let i = 0; i < 200 && !refusal; i++) {
    const answer = await api.post('user:bob', { actor: 'bob', verb: 'post', object: `o${i}`, extra: { big } });
    if (answer.status === 201) kept.push(answer.body.id);
    else refusal = { status: answer.status, body: answer.body };
  }
  expect(refusal).toEqual({ status: 503, body: expect.objectContaining({ code: 'unavailable', message: expect.stringContaining('kept nothing') }) });
  expect(kept.length).toBeGreaterThan(0);
  const follow = await api.follow('timeline:carol', 'user:bob');
  expect({ status: follow.status, code: (follow.body as { code?: string } | undefined)?.code }).toEqual({ status: 503, code: 'unavailable' });
  expect((await api.readAll('user:bob', 10)).map((activity) => activity.id)).toEqual([...kept].reverse());
}, 120_000);

it('answers pages larger than a NATS message, of a timeline and of a producer feed', async () => {
  nats = await startNatsServer();
  deployment = await startCluster({ natsUrl: nats.url, stream: 'LARGE' });
  const api = new FeedClient(deployment.baseUrl);
  expect((await api.follow('timeline:alice', 'user:bob')).status).toBe(204);
  const big = 'x'.repeat(48 * 1024);
  const posted: string[] = [];
  for (let i = 0; i < 30; i++) posted.push((await api.post('user:bob', { actor: 'bob', verb: 'post', object: `o${i}`, extra: { big } })).body.id);
  const newestFirst = [...posted].reverse();
  // 30 activities of 48 KiB: 1.5 MB of page, past NATS's 1 MiB message.
  const ids = async (feed: string) => (await api.page(feed, 30)).body.items.map((activity) => activity.id);
  expect(await ids('user:bob')).toEqual(newestFirst);
  const deadline = Date.now() + 20_000;
  while ((await ids('timeline:alice')).length < 30 && Date.now() < deadline) await new Promise((settle) => setTimeout(settle, 100));
  expect(await ids('timeline:alice')).toEqual(newestFirst);
}, 120_000);

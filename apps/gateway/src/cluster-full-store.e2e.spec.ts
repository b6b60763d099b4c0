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

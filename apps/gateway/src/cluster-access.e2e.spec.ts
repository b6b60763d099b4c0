import { FeedClient, hs256Tokens, startCluster, startNatsServer, waitUntilSettled, type Deployment, type NatsServerHandle } from '@feedmill/harness';

const secret = 'cluster access secret of sixteen characters';

/** Tokens, private feeds and follow requests across five processes: graph decides, fan-out delivers, the gateway waits for timeline. */
describe('cluster with tokens: private feeds and follow requests', () => {
  let nats: NatsServerHandle;
  let deployment: Deployment;
  let owners: FeedClient;
  const tokenFor = hs256Tokens(secret);

  beforeAll(async () => {
    nats = await startNatsServer();
    deployment = await startCluster({ natsUrl: nats.url, stream: 'ACCESS', env: { FEEDMILL_JWT_SECRET: secret } });
    owners = new FeedClient(deployment.baseUrl, tokenFor);
  });
  afterAll(async () => {
    await deployment?.stop();
    await nats?.stop();
  });

  it('delivers a private feed only once its owner approves, and takes it back at once from a removed follower', async () => {
    await expect(new FeedClient(deployment.baseUrl).api.readFeed('user:bob')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    const first = (await owners.post('user:bob', { actor: 'bob', verb: 'post', object: 'one' })).body.id;
    expect(await owners.api.putSettings('user:bob', { private: true })).toEqual({ private: true });
    expect((await owners.follow('timeline:alice', 'user:bob')).status).toBe(202);
    await waitUntilSettled(owners);
    expect(await owners.readAll('timeline:alice')).toEqual([]);
    await owners.api.approveFollowRequest('user:bob', 'timeline:alice');
    await waitUntilSettled(owners);
    expect((await owners.readAll('timeline:alice')).map((a) => a.id)).toEqual([first]);
    await owners.api.removeFollower('user:bob', 'timeline:alice');
    expect(await owners.readAll('timeline:alice')).toEqual([]);
  });
});

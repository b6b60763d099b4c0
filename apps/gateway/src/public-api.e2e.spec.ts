import { hs256Tokens, startCluster, startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { describePublicApi, RATE_LIMIT } from '@feedmill/testing';

const secret = 'cluster public api secret of sixteen characters';

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
});

describePublicApi(
  'cluster of five processes over NATS',
  () => startCluster({ natsUrl: nats.url, stream: 'PUBLIC_API', env: { FEEDMILL_JWT_SECRET: secret, RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT) } }),
  hs256Tokens(secret),
);

import { startCluster, startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { describeFeedScenarios } from '@feedmill/testing';

let nats: NatsServerHandle;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
});

describeFeedScenarios('cluster of five processes over NATS', (env) => startCluster({ natsUrl: nats.url, stream: 'E2E', env }));

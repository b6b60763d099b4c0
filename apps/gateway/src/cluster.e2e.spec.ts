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

describeFeedScenarios('cluster of three fan-out processes and two timeline processes sharing four partitions', (env) =>
  startCluster({ natsUrl: nats.url, stream: 'E2EPARTITIONS', env, fanoutWorkers: 3, timelinePartitions: 4, timelineReplicas: 2 }),
);

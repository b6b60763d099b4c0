import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timelineModels } from '@feedmill/contracts';
import { startStandalone } from '@feedmill/harness';
import { describeFeedScenarios } from '@feedmill/testing';

const variants = [
  ...timelineModels.map((model) => ({ model, embed: true, httpWorkers: 0 })),
  { model: 'ring' as const, embed: false, httpWorkers: 0 },
  // The same scenarios with HTTP answered by worker processes in front of the services.
  { model: 'ring' as const, embed: true, httpWorkers: 2 },
];

for (const { model, embed, httpWorkers } of variants) {
  describeFeedScenarios(
    httpWorkers === 0 ? 'standalone' : `standalone with ${httpWorkers} HTTP workers`,
    async (env) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'feedmill-e2e-'));
      const deployment = await startStandalone({ dataDir, env: { ...env, HTTP_WORKERS: String(httpWorkers) } });
      return {
        ...deployment,
        stop: async () => {
          await deployment.stop();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
    model,
    embed,
  );
}

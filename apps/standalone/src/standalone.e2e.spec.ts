import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timelineModels } from '@feedmill/contracts';
import { startStandalone } from '@feedmill/harness';
import { describeFeedScenarios } from '@feedmill/testing';

const variants = [...timelineModels.map((model) => ({ model, embed: true })), { model: 'ring' as const, embed: false }];

for (const { model, embed } of variants) {
  describeFeedScenarios(
    'standalone',
    async (env) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'feedmill-e2e-'));
      const deployment = await startStandalone({ dataDir, env });
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

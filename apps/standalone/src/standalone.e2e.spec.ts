import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timelineModels } from '@feedmill/contracts';
import { hs256Tokens, startStandalone } from '@feedmill/harness';
import { describeFeedScenarios } from '@feedmill/testing';

const secret = 'scenario secret of sixteen characters or more';

const variants = [
  ...timelineModels.map((model) => ({ model, embed: true, httpWorkers: 0, tokens: false })),
  { model: 'ring' as const, embed: false, httpWorkers: 0, tokens: false },
  // The same scenarios with HTTP answered by worker processes in front of the services.
  { model: 'ring' as const, embed: true, httpWorkers: 2, tokens: false },
  // And with tokens checked, each request made as the user who owns its feed.
  { model: 'hybrid' as const, embed: true, httpWorkers: 0, tokens: true },
];

for (const { model, embed, httpWorkers, tokens } of variants) {
  describeFeedScenarios(
    httpWorkers === 0 ? 'standalone' : `standalone with ${httpWorkers} HTTP workers`,
    async (env) => {
      const dataDir = await mkdtemp(join(tmpdir(), 'feedmill-e2e-'));
      const deployment = await startStandalone({ dataDir, env: { ...env, HTTP_WORKERS: String(httpWorkers), ...(tokens && { FEEDMILL_JWT_SECRET: secret }) } });
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
    tokens ? hs256Tokens(secret) : undefined,
  );
}

// What the throughput scripts start from: the benchmark's medium workload, its graph imported
// through the bulk endpoint as the benchmark imports it. After `npm run build`.
import { profiles } from '@feedmill/bench/dist/profiles.js';
import { importBatches, Workload } from '@feedmill/bench/dist/workload.js';
import { FeedClient, waitUntilEveryServiceCaughtUp } from '@feedmill/harness';

/** Resolves once every service of the deployment at `baseUrl` stands at the same position, all it was sent applied. */
export function everythingApplied(baseUrl, timeoutMs = 300_000) {
  return waitUntilEveryServiceCaughtUp(new FeedClient(baseUrl), timeoutMs);
}

/** The medium workload (seed 42), once its graph is imported into the deployment at `baseUrl` and applied. */
export async function mediumWorkloadImported(baseUrl) {
  const workload = new Workload(profiles.medium, 42);
  const api = new FeedClient(baseUrl);
  for (const edges of importBatches(workload.edges)) {
    const answer = await api.call('POST', '/v1/follows', { follows: edges.map(([reader, producer]) => ({ source: `timeline:r${reader}`, target: `user:p${producer}` })) });
    if (answer.status !== 200) throw new Error(`an import answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  }
  await everythingApplied(baseUrl);
  return workload;
}

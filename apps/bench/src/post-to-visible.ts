import { FeedClient } from '@feedmill/harness';
import { Latencies } from './latency.js';
import type { Workload } from './workload.js';

/**
 * Time from a post's 201 to the post being readable on the first page of one of the
 * author's followers: fan-out's latency as a reader sees it. Runs `count` probes, one at a
 * time, beside whatever load is running.
 *
 * Under load, posts made after the probe can reach the reader in the same delivery and push
 * it below the first page before a poll sees it. Deliveries are applied in log order, so a
 * first page holding an activity posted after the probe shows the probe was delivered too.
 */
export async function measurePostToVisible(baseUrl: string, workload: Workload, count: number, stop: () => boolean): Promise<Latencies> {
  const api = new FeedClient(baseUrl);
  const latencies = new Latencies();
  for (let probe = 0; probe < count && !stop(); probe++) {
    const probed = workload.nextProbe();
    if (!probed) continue;
    const { producer } = probed;
    const reader = workload.readers[probed.reader]!;
    const posted = await api.post(workload.producers[producer]!, { actor: `p${producer}`, verb: 'probe', object: `probe:${probe}` });
    if (posted.status !== 201) throw new Error(`probe post answered ${posted.status}`);
    const acknowledged = performance.now();
    for (;;) {
      const page = await api.page(reader, 5);
      if (page.body.items.some((item) => item.id === posted.body.id || item.time > posted.body.time)) break;
      if (performance.now() - acknowledged > 60_000) throw new Error(`probe ${posted.body.id} never reached ${reader}: ${await whereIs(api, reader, posted.body.id)}`);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    latencies.recordMs(performance.now() - acknowledged);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return latencies;
}

/** Where a probe that was never seen stands in the reader's timeline, for the error message. */
async function whereIs(api: FeedClient, reader: string, id: string): Promise<string> {
  // The API's largest page.
  const items = (await api.page(reader, 100)).body.items ?? [];
  const index = items.findIndex((item) => item.id === id);
  return index === -1 ? `not among its newest ${items.length} entries` : `at index ${index} of its timeline`;
}

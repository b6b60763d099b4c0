import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { staticPartitionsOf, timelinePartitionOf, type Activity } from '@feedmill/contracts';
import { FeedClient, startApp, startCluster, startNatsServer, waitFor, waitUntilSettled, type Deployment, type NatsServerHandle } from '@feedmill/harness';

/**
 * Timelines in four partitions shared by two timeline processes. One is killed (SIGKILL)
 * while posts keep coming: its partitions are lost with it. Started again (each process has
 * its fixed place), or taken over by the other (processes claim partitions by leases), they
 * are held empty, and fan-out brings them up by replaying the log into them alone, so that
 * every reader, whichever partition it is in, ends with every post exactly once.
 */
const STREAM = 'TIMELINEPARTITIONS';
const PARTITIONS = 4;
const REPLICAS = 2;
const READERS = Array.from({ length: 24 }, (_, index) => `timeline:reader-${index}`);

let nats: NatsServerHandle;
let cluster: Deployment | undefined;
let configDir: string;
let env: Record<string, string>;
beforeAll(async () => {
  nats = await startNatsServer();
  configDir = await mkdtemp(join(tmpdir(), 'feedmill-timeline-partitions-'));
  // Ring timelines store every delivery, whether or not the reader has read: what a reader sees is what was delivered.
  await writeFile(join(configDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 100 } } }));
  env = { FEED_CONFIG: join(configDir, 'feeds.json') };
});
afterAll(async () => {
  await cluster?.stop();
  await nats?.stop();
  await rm(configDir, { recursive: true, force: true });
});

const objects = (items: Activity[]) => items.map((activity) => activity.object);

/** Whether every service is ready (a `/readyz` of 200), and how many partitions answer the timeline service. */
async function timelineStatus(api: FeedClient): Promise<{ ready: boolean; partitionsAnswering: number }> {
  const { ready, services } = await api.api.readiness();
  return { ready, partitionsAnswering: services.find((s) => s.service === 'timeline')!.counters!['partitionsAnswering']! };
}

/** The author posts `count` times; `posted` (newest first) grows with each post. */
async function post(api: FeedClient, posted: string[], prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const object = `${prefix}-${i}`;
    expect((await api.post('user:author', { actor: 'author', verb: 'post', object })).status).toBe(201);
    posted.unshift(object);
  }
}

async function expectEveryReaderHolds(api: FeedClient, posted: string[]): Promise<void> {
  for (const reader of READERS) {
    const items = await api.readAll(reader);
    expect({ reader, objects: objects(items) }).toEqual({ reader, objects: posted });
    expect(new Set(items.map((activity) => activity.id)).size).toBe(posted.length);
  }
}

it('serves a killed timeline process’s partitions again once it restarts, every entry present once, by replay', async () => {
  cluster = await startCluster({ natsUrl: nats.url, stream: STREAM, env, timelinePartitions: PARTITIONS, timelineReplicas: REPLICAS });
  const api = new FeedClient(cluster.baseUrl);
  const lost = new Set(staticPartitionsOf(PARTITIONS, REPLICAS, 0));
  // The readers fall in every partition, some of them in the killed process's.
  expect(new Set(READERS.map((reader) => timelinePartitionOf(reader, PARTITIONS)))).toEqual(new Set([0, 1, 2, 3]));

  for (const reader of READERS) expect((await api.follow(reader, 'user:author')).status).toBe(204);
  const posted: string[] = [];
  await post(api, posted, 'before', 5);
  await waitUntilSettled(api);
  await expectEveryReaderHolds(api, posted);

  const at = cluster.processes.findIndex((p) => p.name === 'timeline-0');
  await cluster.processes[at]!.kill();
  // Posts are taken while the partitions are gone: they wait in the log.
  await post(api, posted, 'while-down', 5);
  // A reader of a partition still held reads on; readiness says a partition has no owner.
  const kept = READERS.find((reader) => !lost.has(timelinePartitionOf(reader, PARTITIONS)))!;
  expect(objects(await api.readAll(kept)).slice(-5)).toEqual(posted.slice(-5));
  // The status itself, as a load balancer's probe sees it.
  expect((await api.call('GET', '/readyz')).status).toBe(503);

  cluster.processes[at] = startApp(
    'timeline',
    { ...env, NATS_URL: nats.url, LOG: 'jetstream', JETSTREAM_STREAM: STREAM, TIMELINE_PARTITIONS: String(PARTITIONS), TIMELINE_REPLICAS: String(REPLICAS), TIMELINE_REPLICA_INDEX: '0' },
    'timeline-0',
  );
  await post(api, posted, 'after', 3);
  await waitFor(async () => ((await api.api.readiness()).ready ? true : undefined), { what: 'the restarted partitions to answer', timeoutMs: 30_000 });
  await waitUntilSettled(api);
  await expectEveryReaderHolds(api, posted);
});

it('moves a killed timeline process’s partitions to the other by their leases, every entry present once, by replay', async () => {
  await cluster?.stop();
  cluster = await startCluster({
    natsUrl: nats.url,
    stream: `${STREAM}LEASES`,
    env: { ...env, TIMELINE_PARTITION_LEASE_MS: '1000' },
    timelinePartitions: PARTITIONS,
    timelineReplicas: REPLICAS,
    timelineOwnership: 'leases',
  });
  const api = new FeedClient(cluster.baseUrl);
  for (const reader of READERS) expect((await api.follow(reader, 'user:author')).status).toBe(204);
  const posted: string[] = [];
  await post(api, posted, 'before', 5);
  await waitUntilSettled(api);
  await expectEveryReaderHolds(api, posted);

  await cluster.processes.find((p) => p.name === 'timeline-0')!.kill();
  await post(api, posted, 'while-moving', 5);
  // It held partitions: they answer no more, until the other process takes them over.
  expect((await timelineStatus(api)).partitionsAnswering).toBeLessThan(PARTITIONS);
  await waitFor(async () => ((await timelineStatus(api)).ready ? true : undefined), { what: 'the other process to take the partitions over', timeoutMs: 30_000 });
  expect((await timelineStatus(api)).partitionsAnswering).toBe(PARTITIONS);
  await post(api, posted, 'after', 3);
  await waitUntilSettled(api);
  await expectEveryReaderHolds(api, posted);
});

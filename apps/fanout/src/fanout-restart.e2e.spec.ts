import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedClient, startApp, startCluster, startNatsServer, waitUntilSettled, type Deployment, type NatsServerHandle } from '@feedmill/harness';

/**
 * In a cluster, the fan-out process may restart while timeline keeps running: it then
 * resumes where timeline stands, and its follower index, read from the JetStream log up to
 * there, must hold every follow and unfollow before it.
 */
let nats: NatsServerHandle;
let cluster: Deployment | undefined;
let configDir: string;
let env: Record<string, string>;
beforeAll(async () => {
  nats = await startNatsServer();
  configDir = await mkdtemp(join(tmpdir(), 'feedmill-fanout-restart-'));
  // Ring timelines store every delivery, whether or not the reader has read.
  await writeFile(join(configDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
  env = { FEED_CONFIG: join(configDir, 'feeds.json') };
});
afterAll(async () => {
  await cluster?.stop();
  await nats?.stop();
  await rm(configDir, { recursive: true, force: true });
});

async function delivered(api: FeedClient): Promise<number> {
  return (await api.counters('timeline'))['delivered']!;
}

it('a restarted fan-out process reaches every follower as of where timeline stands', async () => {
  const stream = 'FANOUTRESTART';
  cluster = await startCluster({ natsUrl: nats.url, stream, env });
  const api = new FeedClient(cluster.baseUrl);
  for (const reader of ['timeline:r', 'timeline:s', 'timeline:t']) expect((await api.follow(reader, 'user:a')).status).toBe(204);
  expect((await api.post('user:a', { actor: 'a', verb: 'post', object: 'before' })).status).toBe(201);
  expect((await api.unfollow('timeline:s', 'user:a')).status).toBe(204);
  await waitUntilSettled(api);
  const before = await delivered(api);
  expect(before).toBe(3);

  const at = cluster.processes.findIndex((p) => p.name === 'fanout');
  await cluster.processes[at]!.stop();
  // The deployment stops what its list holds: the new process takes the old one's place.
  cluster.processes[at] = startApp('fanout', { ...env, NATS_URL: nats.url, LOG: 'jetstream', JETSTREAM_STREAM: stream });
  expect((await api.post('user:a', { actor: 'a', verb: 'post', object: 'after' })).status).toBe(201);
  await waitUntilSettled(api);

  expect(await delivered(api)).toBe(before + 2);
  const objects = async (reader: string) => (await api.readAll(reader)).map((a) => a.object);
  expect({ r: await objects('timeline:r'), s: await objects('timeline:s'), t: await objects('timeline:t') }).toEqual({ r: ['after', 'before'], s: [], t: ['after', 'before'] });
});

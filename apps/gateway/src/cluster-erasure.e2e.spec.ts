import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectSealedJetStreamLog, JetStreamFeedKeyStore } from '@feedmill/event-log';
import { FeedClient, startCluster, startNatsServer, waitUntilSettled, type Deployment, type NatsServerHandle } from '@feedmill/harness';
import { apiAnswers, ERASURE_FEED_CONFIG, erasedFeedInLog, ErasureMarker, postMarkedActivities } from '@feedmill/testing';

let nats: NatsServerHandle | undefined;
let deployment: Deployment | undefined;
let configDir: string;

afterEach(async () => {
  await deployment?.stop();
  await nats?.stop();
  await rm(configDir, { recursive: true, force: true });
});

it('erases a feed in cluster mode: no API answer and no byte of the JetStream store holds its content after a restart', async () => {
  configDir = await mkdtemp(join(tmpdir(), 'feedmill-cluster-erasure-'));
  const configPath = join(configDir, 'feeds.json');
  await writeFile(configPath, JSON.stringify(ERASURE_FEED_CONFIG));
  nats = await startNatsServer();
  const options = { natsUrl: nats.url, stream: 'ERASURE', env: { FEED_CONFIG: configPath } };
  deployment = await startCluster(options);
  let api = new FeedClient(deployment.baseUrl);
  const marker = new ErasureMarker();
  await postMarkedActivities(api, marker);
  await waitUntilSettled(api);
  expect(JSON.stringify(await apiAnswers(api, marker))).toContain(`photo-${marker.text}`);

  expect((await api.call('DELETE', '/v1/feeds/user/bob?erase=true')).status).toBe(204);
  expect((await api.call('DELETE', '/v1/feeds/timeline/bob?erase=true')).status).toBe(204);
  const live = await apiAnswers(api, marker);
  expect(JSON.stringify(Object.values(live))).not.toContain(marker.text);
  // Answered once graph applied the erasures too: their follows are gone both ways.
  expect(live['/v1/feeds/user/bob/followers']).toEqual({ status: 200, body: { items: [], next: null } });
  expect(live['/v1/feeds/timeline/bob/following']).toEqual({ status: 200, body: { items: [], next: null } });
  expect(live['/v1/feeds/user/alice/followers']).toEqual({ status: 200, body: { items: [], next: null } });
  // The stream is sealed, so it would hold no marker had the keys stayed: read with its keys,
  // each of bob's posts is a tombstone, and the keys the erasure named left the KV bucket.
  const log = await connectSealedJetStreamLog({ servers: nats.url, streamName: 'ERASURE' });
  const inLog = await erasedFeedInLog(log, 'user:bob');
  await log.close();
  expect(inLog.activities).toEqual([0, 1, 2].map(() => ({ type: 'ContentErased', data: expect.objectContaining({ of: 'ActivityAdded', feed: 'user:bob' }) })));
  expect(inLog.keyIds.length).toBeGreaterThan(0);
  const keys = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'ERASURE_feed_keys' });
  expect((await keys.find(inLog.keyIds.map((id) => ({ feed: 'user:bob', id })))).size).toBe(0);
  expect(await keys.keysOf('user:bob')).toEqual([]);
  await keys.close();

  await deployment.stop();
  deployment = await startCluster(options);
  api = new FeedClient(deployment.baseUrl);
  await waitUntilSettled(api);
  // Rebuilt from the log by fresh processes: the same answers as live.
  expect(await apiAnswers(api, marker)).toEqual(live);
  expect(await marker.filesHolding(nats.storeDir)).toEqual([]);
}, 120_000);

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FEED_KEYS_FILE, openSealedFileLog } from '@feedmill/event-log';
import { FeedClient, startStandalone, waitFor, waitUntilSettled, type Deployment } from '@feedmill/harness';
import { apiAnswers, ERASURE_FEED_CONFIG, erasedFeedInLog, ErasureMarker, postMarkedActivities } from '@feedmill/testing';

let dataDir: string;
let deployment: Deployment | undefined;
let env: Record<string, string>;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-erasure-'));
  const configPath = join(dataDir, 'feeds.json');
  await writeFile(configPath, JSON.stringify(ERASURE_FEED_CONFIG));
  // Snapshots every second, so that some are on disk, marker and all, before the erasure.
  env = { FEED_CONFIG: configPath, SNAPSHOT_EVERY_SECONDS: '1' };
});
afterEach(async () => {
  await deployment?.stop();
  deployment = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

async function start(extra: Record<string, string> = {}): Promise<FeedClient> {
  deployment = await startStandalone({ dataDir, env: { ...env, ...extra } });
  return new FeedClient(deployment.baseUrl);
}

async function stop(): Promise<void> {
  await deployment?.stop();
  deployment = undefined;
}

it('erases a feed: no API answer and no byte under the data directory holds its content, across restarts and a rebuild from the log', async () => {
  const marker = new ErasureMarker();
  let api = await start();
  const { kept } = await postMarkedActivities(api, marker);
  await waitUntilSettled(api);
  const before = JSON.stringify(await apiAnswers(api, marker));
  // The proof could fail: the marker is in the answers, and in the snapshots written since.
  expect(before).toContain(`photo-${marker.text}`);
  await waitFor(async () => ((await marker.filesHolding(dataDir)).some((file) => file.includes('snapshots')) ? true : undefined), { what: 'a snapshot holding the marker', timeoutMs: 10_000 });

  const refused = await api.call('DELETE', '/v1/feeds/user/bob');
  expect(refused).toEqual({ status: 400, body: expect.objectContaining({ code: 'erase_required', field: 'query.erase' }) });
  expect((await api.call('DELETE', '/v1/feeds/user/bob?erase=true')).status).toBe(204);
  expect((await api.call('DELETE', '/v1/feeds/timeline/bob?erase=true')).status).toBe(204);

  const live = await apiAnswers(api, marker);
  expect(JSON.stringify(Object.values(live))).not.toContain(marker.text);
  expect((live['/v1/feeds/timeline/alice?limit=100'] as { body: { items: unknown[] } }).body.items).toEqual([]);
  expect((live['/v1/feeds/user/bob/counts'] as { body: unknown }).body).toEqual({ followers: 0, following: 0 });
  expect((live['/v1/feeds/user/alice/followers'] as { body: { items: unknown[] } }).body.items).toEqual([]);
  expect((live['/v1/feeds/user/alice?limit=100'] as { body: { items: Array<{ id: string }> } }).body.items.map((a) => a.id)).toEqual([kept]);
  // Snapshots taken before the erasure are replaced once every state has applied it (at the
  // latest as the process stops), and deleted.
  await stop();
  expect(await marker.filesHolding(dataDir)).toEqual([]);
  // The log is sealed, so the files would hold no marker had the keys stayed: read with its
  // keys, each of bob's posts is a tombstone, and the keys the erasure named left the key file.
  const log = await openSealedFileLog({ dir: dataDir });
  const inLog = await erasedFeedInLog(log, 'user:bob');
  await log.close();
  expect(inLog.activities).toEqual([0, 1, 2].map(() => ({ type: 'ContentErased', data: expect.objectContaining({ of: 'ActivityAdded', feed: 'user:bob' }) })));
  expect(inLog.keyIds.length).toBeGreaterThan(0);
  const keyFile = await readFile(join(dataDir, FEED_KEYS_FILE), 'utf8');
  for (const id of inLog.keyIds) expect(keyFile).not.toContain(id);

  // Restarted from its snapshots, then rebuilt from the log alone: the same answers as live.
  api = await start();
  await waitUntilSettled(api);
  expect(await apiAnswers(api, marker)).toEqual(live);
  await stop();
  api = await start({ SNAPSHOTS: 'off' });
  await waitUntilSettled(api);
  expect(await apiAnswers(api, marker)).toEqual(live);

  // The feed id can be used again, with a new key.
  const again = await api.post('user:bob', { actor: 'bob', verb: 'post', object: 'new life' });
  expect(again.status).toBe(201);
  await stop();
  expect(await marker.filesHolding(dataDir)).toEqual([]);
  api = await start();
  expect((await api.readAll('user:bob')).map((a) => a.object)).toEqual(['new life']);
}, 120_000);

it('erases a timeline feed with what others addressed to it: its id, used again, starts empty, live and after a rebuild', async () => {
  let api = await start();
  const mention = await api.post('user:ann', { actor: 'ann', verb: 'mention', object: 'hello carol and dan', to: ['alerts:carol', 'alerts:dan'] });
  expect(mention.status).toBe(201);
  await waitUntilSettled(api);
  const addressed = async () => ({
    carol: (await api.readAll('alerts:carol')).map((activity) => activity.id),
    dan: (await api.readAll('alerts:dan')).map((activity) => activity.id),
  });
  expect(await addressed()).toEqual({ carol: [mention.body.id], dan: [mention.body.id] });

  expect((await api.call('DELETE', '/v1/feeds/alerts/carol?erase=true')).status).toBe(204);
  expect(await addressed()).toEqual({ carol: [], dan: [mention.body.id] });
  await stop();
  api = await start({ SNAPSHOTS: 'off' });
  await waitUntilSettled(api);
  expect(await addressed()).toEqual({ carol: [], dan: [mention.body.id] });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { settingsStream, type Activity, type FeedId } from '@feedmill/contracts';
import { openSealedFileLog } from '@feedmill/event-log';
import { FeedClient, readAllEvents, startApp, startStandalone, waitUntilReady, waitUntilSettled, freePort, type Deployment } from '@feedmill/harness';
import { referenceTimelines } from '@feedmill/testing';

const producers = Array.from({ length: 6 }, (_, i) => `user:p${i}` as FeedId);
const readers = Array.from({ length: 12 }, (_, i) => `timeline:r${i}` as FeedId);

let dataDir: string;
let env: Record<string, string>;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-durability-'));
  const configPath = join(dataDir, 'feeds.json');
  await writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', cap: 20 } } }));
  env = { FEED_CONFIG: configPath };
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

/** Each reader follows a few producers, chosen so that every producer has followers. */
async function followSome(api: FeedClient): Promise<void> {
  for (const [r, reader] of readers.entries()) {
    for (const [p, producer] of producers.entries()) if ((r + p) % 3 === 0) expect((await api.follow(reader, producer)).status).toBe(204);
  }
}

async function readEveryFeed(api: FeedClient): Promise<Map<FeedId, string[]>> {
  const feeds = new Map<FeedId, string[]>();
  for (const feed of [...readers, ...producers]) feeds.set(feed, (await api.readAll(feed, 50)).map((a) => a.id));
  return feeds;
}

async function referenceFromLog(): Promise<ReturnType<typeof referenceTimelines>> {
  const log = await openSealedFileLog({ dir: dataDir });
  try {
    return referenceTimelines(await readAllEvents(log));
  } finally {
    await log.close();
  }
}

function expectFeedsToMatchReference(feeds: Map<FeedId, string[]>, reference: ReturnType<typeof referenceTimelines>): void {
  for (const reader of readers) expect({ reader, ids: feeds.get(reader) }).toEqual({ reader, ids: reference.timelineOf(reader).map((a) => a.id) });
  const byFeed = (feed: FeedId) =>
    reference
      .activities()
      .filter((a) => a.feed === feed)
      .sort((a, b) => (a.time === b.time ? (a.id < b.id ? 1 : -1) : a.time < b.time ? 1 : -1))
      .map((a) => a.id);
  for (const producer of producers) expect({ producer, ids: feeds.get(producer) }).toEqual({ producer, ids: byFeed(producer) });
}

it('loses no acknowledged post when killed with SIGKILL mid-stream, and rebuilds timelines equal to the log', async () => {
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const first = startApp('standalone', { ...env, PORT: String(port), FEEDMILL_DATA_DIR: dataDir });
  await waitUntilReady(baseUrl, [first]);
  const api = new FeedClient(baseUrl);
  await followSome(api);

  const acknowledged: Activity[] = [];
  let failed = 0;
  let next = 0;
  const total = 4000;
  const killAfter = 800;
  let killing: Promise<void> | undefined;
  // 32 clients post as fast as they can; the process dies under them.
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < total) {
        const n = next++;
        const producer = producers[n % producers.length]!;
        try {
          const result = await api.post(producer, { actor: producer, verb: 'post', object: `n${n}` });
          if (result.status === 201) acknowledged.push(result.body);
          if (acknowledged.length >= killAfter) killing ??= first.kill();
        } catch {
          failed++;
          if (killing) return;
        }
      }
    }),
  );
  await killing;
  expect(acknowledged.length).toBeGreaterThanOrEqual(killAfter);
  expect(failed).toBeGreaterThan(0);

  const reference = await referenceFromLog();
  const inLog = new Set(reference.activities().map((a) => a.id));
  expect(acknowledged.filter((a) => !inLog.has(a.id))).toEqual([]);

  const second: Deployment = await startStandalone({ dataDir, env, port });
  await waitUntilSettled(api);
  expectFeedsToMatchReference(await readEveryFeed(api), reference);
  await second.stop();
});

it('rebuilds, after a restart, exactly the timelines it had built live', async () => {
  const deployment = await startStandalone({ dataDir, env });
  const api = new FeedClient(deployment.baseUrl);
  await followSome(api);
  const posted: Activity[] = [];
  for (let n = 0; n < 300; n++) {
    const producer = producers[n % producers.length]!;
    const time = new Date(Date.UTC(2026, 0, 1, 0, 0, 0, (n * 37) % 1000)).toISOString();
    posted.push((await api.post(producer, { actor: producer, verb: 'post', object: `n${n}`, time })).body);
    if (n % 7 === 0) await api.remove(producer, posted[n - (n % 5)]!.id);
    if (n === 150) {
      await api.unfollow(readers[0]!, producers[0]!);
      await api.follow(readers[1]!, producers[5]!);
    }
  }
  await waitUntilSettled(api);
  const live = await readEveryFeed(api);
  await deployment.stop();

  const rebuilt = await startStandalone({ dataDir, env, port: Number(new URL(deployment.baseUrl).port) });
  await waitUntilSettled(api);
  const afterRestart = await readEveryFeed(api);
  await rebuilt.stop();

  expect(afterRestart).toEqual(live);
  expect([...live.values()].reduce((n, ids) => n + ids.length, 0)).toBeGreaterThan(300);
  expectFeedsToMatchReference(live, await referenceFromLog());
});

it('ends at start the histories readers kept of a feed whose turn to private a stop interrupted', async () => {
  const deployment = await startStandalone({ dataDir, env });
  const api = new FeedClient(deployment.baseUrl);
  const [bob, alice, carol] = ['user:bob', 'timeline:alice', 'timeline:carol'] as const;
  expect((await api.follow(alice, bob)).status).toBe(204);
  expect((await api.follow(carol, bob)).status).toBe(204);
  const posted = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'before' })).body;
  await api.api.unfollow(alice, bob, { keepHistory: true });
  await waitUntilSettled(api);
  expect((await api.readAll(alice)).map((a) => a.id)).toEqual([posted.id]);
  await deployment.stop();

  // The stop came between the change of settings and the end of the histories kept of the feed.
  const log = await openSealedFileLog({ dir: dataDir });
  try {
    await log.appendToStream(settingsStream(bob), [{ type: 'FeedSettingsChanged', data: { feed: bob, private: true, time: new Date().toISOString() } }]);
  } finally {
    await log.close();
  }

  const restarted = await startStandalone({ dataDir, env, port: Number(new URL(deployment.baseUrl).port) });
  await waitUntilSettled(api);
  expect(await api.api.settings(bob)).toEqual({ private: true });
  expect(await api.readAll(alice)).toEqual([]);
  // An approved follower still reads the private feed.
  expect((await api.readAll(carol)).map((a) => a.id)).toEqual([posted.id]);
  await restarted.stop();
});

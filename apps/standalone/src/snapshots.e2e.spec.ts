import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FeedId } from '@feedmill/contracts';
import { FeedClient, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';

const producers = Array.from({ length: 5 }, (_, i): FeedId => `user:p${i}`);
const readers = Array.from({ length: 10 }, (_, i): FeedId => `timeline:r${i}`);

let dataDir: string;
let env: Record<string, string>;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-snapshots-'));
  const configPath = join(dataDir, 'feeds.json');
  await writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', cap: 30 } } }));
  // Log level `log`, so that the output says which snapshot a start restored.
  env = { FEED_CONFIG: configPath, LOG_LEVEL: 'log' };
});
afterEach(() => rm(dataDir, { recursive: true, force: true }));

/** Follows, posts, removals and an unfollow: every kind of event content and graph project. */
async function populate(api: FeedClient, from: number, count: number): Promise<void> {
  for (const [r, reader] of readers.entries()) {
    for (const [p, producer] of producers.entries()) if ((r + p + from) % 3 === 0) expect((await api.follow(reader, producer)).status).toBe(204);
  }
  for (let n = from; n < from + count; n++) {
    const producer = producers[n % producers.length]!;
    const posted = await api.post(producer, { actor: producer, verb: 'post', object: `n${n}`, foreignId: `f${n}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() });
    expect(posted.status).toBe(201);
    if (n % 9 === 0) expect((await api.remove(producer, posted.body.id)).status).toBe(204);
  }
  expect((await api.unfollow(readers[from % readers.length]!, producers[0]!)).status).toBe(204);
}

/** Everything a reader can see that content and graph answer: feeds, timelines, edges. */
async function everything(api: FeedClient): Promise<unknown> {
  const answers: Record<string, unknown> = {};
  for (const feed of [...readers, ...producers]) {
    const group = feed.replace(':', '/');
    answers[feed] = {
      items: (await api.readAll(feed, 40)).map((a) => a.id),
      followers: (await api.call('GET', `/v1/feeds/${group}/followers?limit=100`)).body,
      following: (await api.call('GET', `/v1/feeds/${group}/following?limit=100`)).body,
      counts: (await api.call('GET', `/v1/feeds/${group}/counts`)).body,
    };
  }
  return answers;
}

async function snapshotFiles(): Promise<string[]> {
  return (await readdir(join(dataDir, 'snapshots'))).sort();
}

async function restart(port: number): Promise<{ deployment: Deployment; api: FeedClient }> {
  const deployment = await startStandalone({ dataDir, env, port });
  const api = new FeedClient(deployment.baseUrl);
  await waitUntilSettled(api);
  return { deployment, api };
}

it('writes snapshots at shutdown, restores them at start, replays only the tail, and answers as before', async () => {
  const first = await startStandalone({ dataDir, env });
  const port = Number(new URL(first.baseUrl).port);
  let api = new FeedClient(first.baseUrl);
  await populate(api, 0, 120);
  await waitUntilSettled(api);
  const before = await everything(api);
  await first.stop();

  const files = await snapshotFiles();
  expect(files).toEqual(['content', 'fanout', 'graph', 'timeline'].map((name) => expect.stringMatching(new RegExp(`^${name}\\.\\d{16}\\.snapshot$`))));

  const second = await restart(port);
  api = second.api;
  const output = second.deployment.processes[0]!.output();
  expect(output).toMatch(/content: restored .*content\.\d{16}\.snapshot/);
  expect(output).toMatch(/graph: restored .*graph\.\d{16}\.snapshot/);
  expect(await everything(api)).toEqual(before);

  // More events on top of the restored state, then another restart: snapshot and tail again.
  await populate(api, 120, 60);
  await waitUntilSettled(api);
  const later = await everything(api);
  await second.deployment.stop();
  expect(await snapshotFiles()).toHaveLength(8);

  const third = await restart(port);
  expect(await everything(third.api)).toEqual(later);
  await third.deployment.stop();
});

it('skips a corrupt newest snapshot with a warning naming it, and serves the same answers from the one before', async () => {
  const first = await startStandalone({ dataDir, env });
  const port = Number(new URL(first.baseUrl).port);
  let api = new FeedClient(first.baseUrl);
  await populate(api, 0, 60);
  await first.stop();
  const second = await restart(port);
  api = second.api;
  await populate(api, 60, 40);
  await waitUntilSettled(api);
  const before = await everything(api);
  await second.deployment.stop();

  const newestContent = (await snapshotFiles()).filter((f) => f.startsWith('content.')).pop()!;
  const path = join(dataDir, 'snapshots', newestContent);
  const bytes = await readFile(path);
  bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
  await writeFile(path, bytes);

  const third = await restart(port);
  const output = third.deployment.processes[0]!.output();
  expect(output).toContain(`skipped snapshot ${path}: checksum mismatch`);
  expect(output).toMatch(/content: restored .*content\.\d{16}\.snapshot/);
  expect(output).not.toContain(`restored ${path}`);
  expect(await everything(third.api)).toEqual(before);
  await third.deployment.stop();
});

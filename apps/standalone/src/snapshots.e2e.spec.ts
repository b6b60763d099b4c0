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
    answers[feed] = {
      items: (await api.readAll(feed, 40)).map((a) => a.id),
      followers: await api.api.followers(feed, { limit: 100 }),
      following: await api.api.following(feed, { limit: 100 }),
      counts: await api.api.counts(feed),
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

describe('every memory state from snapshots, timelines and fan-out included', () => {
  const digests = Array.from({ length: 4 }, (_, i): FeedId => `digest:d${i}`);
  const allReaders = [...readers, ...digests];
  /** Every standalone a test started: stopped after it, whatever it asserted. */
  let running: Deployment[] = [];
  afterEach(async () => {
    await Promise.all(running.map((deployment) => deployment.stop()));
    running = [];
  });

  beforeEach(async () => {
    // Timelines kept from the first follow on (ring), two ways: copies by time, and references by relevance.
    const groups = { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 30 }, digest: { kind: 'timeline', model: 'ring', cap: 10, relevancy: true, embed: false } };
    await writeFile(env.FEED_CONFIG!, JSON.stringify({ groups }));
  });

  /** Single and bulk follows, posts, bumps, updates, removals and an unfollow, from `from` on. */
  async function writeMore(api: FeedClient, from: number): Promise<void> {
    const follows = allReaders.flatMap((reader, r) => producers.filter((_, p) => (r * 3 + p + from) % 4 === 0).map((target) => ({ source: reader, target })));
    const imported = follows.slice(0, follows.length / 2);
    expect(await api.api.followMany(imported)).toBe(imported.length);
    for (const { source, target } of follows.slice(follows.length / 2)) expect((await api.follow(source, target)).status).toBe(204);
    for (let n = from; n < from + 60; n++) {
      const producer = producers[n % producers.length]!;
      const posted = await api.post(producer, { actor: producer, verb: 'post', object: `n${n}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() });
      expect(posted.status).toBe(201);
      if (n % 7 === 0) await api.api.bumpActivity(producer, posted.body.id, new Date(Date.UTC(2026, 0, 2, 0, 0, n)).toISOString());
      if (n % 5 === 0) await api.api.updateActivity(producer, posted.body.id, { object: `n${n} edited`, extra: { n } });
      if (n % 11 === 0) expect((await api.remove(producer, posted.body.id)).status).toBe(204);
    }
    expect((await api.unfollow(follows[from % follows.length]!.source, follows[from % follows.length]!.target)).status).toBe(204);
  }

  /** Every timeline page by page, and what the timeline service counts (entries, deliveries). */
  async function timelinesOf(api: FeedClient): Promise<unknown> {
    const pages: Record<string, unknown> = {};
    for (const reader of allReaders) pages[reader] = (await api.readAll(reader, 7)).map((a) => [a.id, a.object, a.extra, a.bumpedAt, a.updatedAt]);
    return { pages, counters: await api.counters('timeline'), everything: await everything(api) };
  }

  async function started(extra: Record<string, string> = {}, port?: number) {
    const deployment = await startStandalone({ dataDir, env: { ...env, ...extra }, ...(port ? { port } : {}) });
    running.push(deployment);
    const api = new FeedClient(deployment.baseUrl);
    await waitUntilSettled(api);
    return { deployment, api, port: Number(new URL(deployment.baseUrl).port), output: () => deployment.processes[0]!.output() };
  }

  it('restores timelines and the follower index, goes on delivering exactly once, and answers as a full replay does', async () => {
    const first = await started();
    await writeMore(first.api, 0);
    await waitUntilSettled(first.api);
    await first.deployment.stop();

    // From snapshots: nothing replayed, and what comes after the snapshot (follows that
    // backfill, posts, bumps, updates, removals) reaches the timelines once, as it would have.
    const second = await started({}, first.port);
    expect(second.output()).toMatch(/timeline: restored .*timeline\.\d{16}\.snapshot/);
    expect(second.output()).toMatch(/fanout: restored .*fanout\.\d{16}\.snapshot/);
    expect(second.output()).not.toMatch(/follower index read from the log/);
    await writeMore(second.api, 60);
    await waitUntilSettled(second.api);
    const fromSnapshots = await timelinesOf(second.api);
    await second.deployment.stop();

    const replayed = await started({ SNAPSHOTS: 'off' }, first.port);
    expect(replayed.output()).not.toMatch(/restored/);
    expect(await timelinesOf(replayed.api)).toEqual(fromSnapshots);
    await replayed.deployment.stop();
  });

  it("reads the follows between fan-out's older snapshot and timeline's from the log, and delivers as before", async () => {
    const first = await started();
    await writeMore(first.api, 0);
    await waitUntilSettled(first.api);
    await first.deployment.stop();
    const second = await started({}, first.port);
    await writeMore(second.api, 60);
    await waitUntilSettled(second.api);
    await second.deployment.stop();
    const [older, newest] = (await snapshotFiles()).filter((f) => f.startsWith('fanout.'));
    await writeFile(join(dataDir, 'snapshots', newest!), 'not a snapshot');

    const third = await started({}, first.port);
    const positions = (file: string) => Number(file.split('.')[1]);
    expect(third.output()).toMatch(new RegExp(`fanout: restored ${older!.replace(/\./g, '\\.')}`));
    expect(third.output()).toMatch(new RegExp(`follower index read from the log between positions ${positions(older!)} and ${positions(newest!)}`));
    await writeMore(third.api, 120);
    await waitUntilSettled(third.api);
    const fromSnapshots = await timelinesOf(third.api);
    await third.deployment.stop();
    const replayed = await started({ SNAPSHOTS: 'off' }, first.port);
    expect(await timelinesOf(replayed.api)).toEqual(fromSnapshots);
  });

  it('skips snapshots that cover more than the log holds, and replays what it holds', async () => {
    const first = await started();
    await writeMore(first.api, 0);
    await waitUntilSettled(first.api);
    await first.deployment.stop();
    // The log loses its last events (restored from an older copy, say): every snapshot is ahead of it.
    const log = join(dataDir, 'events.log');
    const bytes = await readFile(log);
    // Where each group write starts (its frame, `{"g":…}`), and how many records come before it.
    const writes: Array<{ start: number; recordsBefore: number }> = [];
    let records = 0;
    for (let at = 0; at < bytes.length; at += 8 + bytes.readUInt32LE(at)) {
      if (bytes.toString('latin1', at + 8, at + 13) === '{"g":') writes.push({ start: at, recordsBefore: records });
      else records++;
    }
    // An older copy ends where a write ended: the last writes that hold at least five records go.
    const cut = writes.filter((write) => records - write.recordsBefore >= 5).pop()!;
    await writeFile(log, bytes.subarray(0, cut.start));

    const shorter = await started({}, first.port);
    for (const name of ['content', 'graph', 'timeline']) expect(shorter.output()).toMatch(new RegExp(`skipped snapshot ${name}\\.\\d{16}\\.snapshot: it covers position ${records}, the log ends at ${cut.recordsBefore}`));
    const fromShorterLog = await timelinesOf(shorter.api);
    await shorter.deployment.stop();
    const replayed = await started({ SNAPSHOTS: 'off' }, first.port);
    expect(await timelinesOf(replayed.api)).toEqual(fromShorterLog);
    await replayed.deployment.stop();
  });

  it('replays the whole log for timelines when their newest snapshot is damaged, or of another feed config', async () => {
    const first = await started();
    await writeMore(first.api, 0);
    await waitUntilSettled(first.api);
    const before = await timelinesOf(first.api);
    await first.deployment.stop();

    for (const name of ['timeline', 'fanout']) {
      const file = (await snapshotFiles()).filter((f) => f.startsWith(`${name}.`)).pop()!;
      const path = join(dataDir, 'snapshots', file);
      const damaged = await readFile(path);
      damaged[damaged.length - 100]! ^= 0x01;
      await writeFile(path, damaged);
    }
    const second = await started({}, first.port);
    expect(second.output()).toMatch(/skipped snapshot .*timeline\.\d{16}\.snapshot: checksum mismatch/);
    // Fan-out starts where timeline stands, at 0, and builds its index as it delivers.
    expect(second.output()).not.toMatch(/fanout: restored/);
    expect(await timelinesOf(second.api)).toEqual(before);
    await second.deployment.stop();

    // Another cap: the timelines a snapshot holds would not be those of this config.
    const groups = { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 12 }, digest: { kind: 'timeline', model: 'ring', cap: 10, relevancy: true, embed: false } };
    await writeFile(env.FEED_CONFIG!, JSON.stringify({ groups }));
    const third = await started({}, first.port);
    expect(third.output()).toMatch(/skipped snapshot .*timeline\.\d{16}\.snapshot: it was taken under another feed config/);
    const otherConfig = await timelinesOf(third.api);
    await third.deployment.stop();
    const replayed = await started({ SNAPSHOTS: 'off' }, first.port);
    expect(await timelinesOf(replayed.api)).toEqual(otherConfig);
    await replayed.deployment.stop();
  });
});

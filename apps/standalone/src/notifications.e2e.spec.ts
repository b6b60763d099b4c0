import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GroupPage } from '@feedmill/client';
import { FeedClient, startStandalone, waitFor, waitUntilSettled, type Deployment } from '@feedmill/harness';

let dataDir: string;
let configPath: string;
let deployment: Deployment | undefined;

const writeConfig = (aggregate: Record<string, unknown>) =>
  writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, alerts: { kind: 'timeline', model: 'ring', cap: 50, notifications: true, aggregate } } }));
const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute)).toISOString();
const shapeOf = (page: GroupPage) => page.items.map((g) => `${g.verb} ${g.object ?? '-'} ${g.activityCount} ${g.seen ? 'seen' : 'new'} ${g.read ? 'read' : 'unread'}`);

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-notifications-'));
  configPath = join(dataDir, 'feeds.json');
  await writeConfig({ by: ['verb', 'object'], windowMinutes: 60 });
});
afterEach(async () => {
  await deployment?.stop();
  deployment = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

it('regroups history and keeps the marks when the rule changes and the timelines are rebuilt, and keeps the marks in snapshots', async () => {
  deployment = await startStandalone({ dataDir, env: { FEED_CONFIG: configPath } });
  let api = new FeedClient(deployment.baseUrl);
  const groups = () => api.api.readGroups('alerts:ann');
  await api.follow('alerts:ann', 'user:bob');
  for (const [minute, verb, object] of [[1, 'like', 'o1'], [2, 'like', 'o2'], [3, 'comment', 'o1']] as const) await api.post('user:bob', { actor: 'bob', verb, object, time: at(minute) });
  await waitUntilSettled(api);
  const before = await groups();
  expect(shapeOf(before)).toEqual(['comment o1 1 new unread', 'like o2 1 new unread', 'like o1 1 new unread']);
  // Read: the two oldest groups; seen: everything.
  expect(await api.api.markRead('alerts:ann', { ids: [before.items[1]!.id, before.items[2]!.id] })).toEqual({ unseen: 1, unread: 1 });
  expect(await api.api.markSeen('alerts:ann', { all: true })).toEqual({ unseen: 0, unread: 1 });

  // By verb alone: the likes are one group, which no mark of a single group names: unread, but seen (up to the newest).
  await writeConfig({ by: ['verb'], windowMinutes: 60 });
  await api.api.startRebuild();
  await waitFor(async () => ((await api.api.rebuildStatus()).state === 'done' ? true : undefined), { what: 'the rebuild' });
  const regrouped = await groups();
  expect(shapeOf(regrouped)).toEqual(['comment - 1 seen unread', 'like - 2 seen unread']);
  expect(regrouped).toMatchObject({ unseen: 0, unread: 2 });
  expect(await api.api.markRead('alerts:ann', { ids: [regrouped.items[1]!.id] })).toEqual({ unseen: 0, unread: 1 });

  // A restart restores the marks from the timeline snapshot (replaying only the tail after it).
  const port = Number(new URL(deployment.baseUrl).port);
  await deployment.stop();
  expect((await readdir(join(dataDir, 'snapshots'))).some((file) => file.startsWith('timeline.'))).toBe(true);
  deployment = await startStandalone({ dataDir, env: { FEED_CONFIG: configPath }, port });
  api = new FeedClient(deployment.baseUrl);
  await waitUntilSettled(api);
  expect(shapeOf(await groups())).toEqual(['comment - 1 seen unread', 'like - 2 seen read']);
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedClient, startCluster, startNatsServer, waitUntilEveryServiceCaughtUp, type ClusterDeployment, type NatsServerHandle } from '@feedmill/harness';

/**
 * A timeline process on memory stores, killed and started again, holds nothing until fan-out
 * has replayed the log into it. Until it stands where the log stood when it started, it says
 * it is not ready, and a read waits for it (or answers 503 after a while): a page of a partly
 * replayed store would show older entries as the newest.
 */
let nats: NatsServerHandle | undefined;
let cluster: ClusterDeployment | undefined;
let configDir: string;

afterEach(async () => {
  await cluster?.stop();
  await nats?.stop();
  await rm(configDir, { recursive: true, force: true });
});

/** A cluster on a private nats-server, `ring` timelines of 100, on log stream `stream`. */
async function ringCluster(stream: string): Promise<{ deployment: ClusterDeployment; api: FeedClient }> {
  configDir = await mkdtemp(join(tmpdir(), 'feedmill-timeline-restart-'));
  await writeFile(join(configDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 100 } } }));
  nats = await startNatsServer();
  const deployment = (cluster = await startCluster({ natsUrl: nats.url, stream, env: { FEED_CONFIG: join(configDir, 'feeds.json') } }));
  return { deployment, api: new FeedClient(deployment.baseUrl) };
}

it('says it is not ready, and serves no page without the newest post, while a restarted timeline process is replayed', async () => {
  const { deployment, api } = await ringCluster('TIMELINERESTART');
  const readers = Array.from({ length: 100 }, (_, index) => `timeline:r${index}`);
  expect((await api.call('POST', '/v1/follows', { follows: readers.map((source) => ({ source, target: 'user:p' })) })).status).toBe(200);
  // Enough history that the replay takes a while: 20,000 posts into 100 timelines.
  for (let batch = 0; batch < 20; batch++) {
    const activities = Array.from({ length: 1000 }, (_, index) => ({ feed: 'user:p', actor: 'p', verb: 'post', object: `b${batch}-${index}` }));
    expect((await api.call('POST', '/v1/activities', { activities })).status).toBe(201);
  }
  const newest = (await api.post('user:p', { actor: 'p', verb: 'post', object: 'newest' })).body.id;
  const head = await waitUntilEveryServiceCaughtUp(api, 120_000);

  await deployment.processes.find((process) => process.name === 'timeline')!.kill();
  deployment.restart('timeline');
  const seen = { pages: 0, refused: 0, notReady: 0 };
  for (;;) {
    const { services } = await api.api.readiness().catch(() => ({ services: [] as Array<{ service: string; ready: boolean; position: number }> }));
    const timeline = services.find((status) => status.service === 'timeline');
    // Ready only where the log stood when it started.
    if (timeline?.ready) expect(timeline.position).toBeGreaterThanOrEqual(head);
    else seen.notReady++;
    const page = await api.page('timeline:r7', 3);
    if (page.status === 200) {
      seen.pages++;
      expect(page.body.items[0]?.id).toBe(newest);
      if (timeline?.ready) break;
    } else {
      expect({ status: page.status, code: (page.body as unknown as { code: string }).code }).toEqual({ status: 503, code: 'unavailable' });
      seen.refused++;
    }
  }
  expect(seen.notReady).toBeGreaterThan(0);
  expect(seen.pages).toBeGreaterThan(0);
}, 180_000);

it('answers an unfollow and a follow 204 while the readers’ timelines do not answer: both are in the log, and the timelines apply them once back', async () => {
  const { deployment, api } = await ringCluster('TIMELINEDOWN');
  expect((await api.follow('timeline:alice', 'user:bob')).status).toBe(204);
  expect((await api.post('user:bob', { actor: 'bob', verb: 'post', object: 'hello' })).status).toBe(201);
  await waitUntilEveryServiceCaughtUp(api, 30_000);
  expect((await api.readAll('timeline:alice')).map((activity) => activity.object)).toEqual(['hello']);

  await deployment.processes.find((process) => process.name === 'timeline')!.kill();
  const unfollowed = await api.unfollow('timeline:alice', 'user:bob');
  expect({ status: unfollowed.status, code: (unfollowed.body as { code?: string } | undefined)?.code }).toEqual({ status: 204, code: undefined });
  expect(await api.api.following('timeline:alice')).toEqual({ items: [], next: null });
  const followed = await api.follow('timeline:carol', 'user:bob');
  expect({ status: followed.status, code: (followed.body as { code?: string } | undefined)?.code }).toEqual({ status: 204, code: undefined });
  deployment.restart('timeline');
  await waitUntilEveryServiceCaughtUp(api, 60_000);
  expect(await api.readAll('timeline:alice')).toEqual([]);
  expect((await api.readAll('timeline:carol')).map((activity) => activity.object)).toEqual(['hello']);
}, 120_000);

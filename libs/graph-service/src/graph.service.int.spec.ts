import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultFeedConfig, followBatchBytes, MAX_BATCH_BYTES, type FeedId, type FollowManyRequest } from '@feedmill/contracts';
import { FeedGroups } from '@feedmill/config';
import { FileEventLog, JetStreamEventLog, type EventLog } from '@feedmill/event-log';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { MemoryGraphStore } from '@feedmill/stores';
import { GraphService } from './graph.service.js';

const uuid = (n: number) => `${n.toString(16).padStart(8, '0')}-5f4e-4a51-9d3c-2f1e8a6b4c10`;
const groups = new FeedGroups(defaultFeedConfig);
const time = '2026-01-01T00:00:00.000Z';

/** A graph service on `log`, caught up; stopped after the test. */
async function graphOn(log: EventLog): Promise<{ graph: GraphService; store: MemoryGraphStore }> {
  const store = new MemoryGraphStore();
  const graph = new GraphService(log, store, groups);
  await graph.onApplicationBootstrap();
  running.push(graph);
  return { graph, store };
}
const running: GraphService[] = [];
afterEach(async () => {
  for (const graph of running.splice(0)) await graph.onModuleDestroy();
});

describe('GraphService.followMany on the file log', () => {
  let dir: string;
  let log: FileEventLog;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'feedmill-graph-'));
    log = await FileEventLog.open({ dir });
  });
  afterEach(async () => {
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('records the new edges of a batch as one event, once, and answers the count of the request', async () => {
    const { graph, store } = await graphOn(log);
    await graph.follow({ follower: 'timeline:a', target: 'user:x', time });
    const follows: Array<[FeedId, FeedId]> = [['timeline:a', 'user:x'], ['timeline:a', 'user:y'], ['timeline:b', 'user:x'], ['timeline:a', 'user:y']];
    expect(await graph.followMany({ id: 'b1', time, follows })).toBe(4);
    expect(await log.headPosition()).toBe(2);
    expect((await log.readStream('import-follows-b1')).map((e) => e.data)).toEqual([{ id: 'b1', time, follows: [['timeline:a', 'user:y'], ['timeline:b', 'user:x']] }]);
    expect(await store.followers('user:x', undefined, 10)).toEqual(['timeline:a', 'timeline:b']);
    // Every edge exists now: a second import records nothing.
    expect(await graph.followMany({ id: 'b2', time, follows })).toBe(4);
    expect(await log.headPosition()).toBe(2);
  });

  it('refuses the whole batch, naming the item, when a follower is not a timeline feed', async () => {
    const { graph } = await graphOn(log);
    await expect(graph.followMany({ id: 'b3', time, follows: [['timeline:a', 'user:x'], ['user:z', 'user:x']] })).rejects.toMatchObject({
      code: 'group_cannot_follow',
      field: 'follows[1].source',
    });
    expect(await log.headPosition()).toBe(0);
  });

  it('is read back, after a restart, to the same edges', async () => {
    const { graph, store } = await graphOn(log);
    await graph.followMany({ id: 'b4', time, follows: [['timeline:a', 'user:x'], ['timeline:c', 'user:x']] });
    await graph.unfollow({ follower: 'timeline:a', target: 'user:x', time });
    const restarted = await graphOn(log);
    expect(await restarted.store.followers('user:x', undefined, 10)).toEqual(await store.followers('user:x', undefined, 10));
    expect(await restarted.store.followers('user:x', undefined, 10)).toEqual(['timeline:c']);
  });
});

describe('GraphService.followMany on JetStream', () => {
  let server: NatsServerHandle;
  let log: JetStreamEventLog;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  afterAll(async () => {
    await server.stop();
  });
  beforeEach(async () => {
    log = await JetStreamEventLog.connect({ servers: server.url, streamName: `GRAPH${Date.now()}` });
  });
  afterEach(async () => {
    await log.close();
  });

  it('fits 10,000 follows between UUID feeds in one message of the default max_payload (1 MiB), read back whole', async () => {
    const { graph } = await graphOn(log);
    const request: FollowManyRequest = { id: uuid(0), time, follows: Array.from({ length: 10_000 }, (_, i) => [`timeline:${uuid(i)}`, `user:${uuid(i + 1)}`]) };
    expect(followBatchBytes(request)).toBeGreaterThan(900_000);
    expect(await graph.followMany(request)).toBe(10_000);
    expect(await log.headPosition()).toBe(1);
    const [event] = await log.readStream(`import-follows-${uuid(0)}`);
    expect((event!.data as { follows: unknown[] }).follows).toHaveLength(10_000);
    const restarted = await graphOn(log);
    expect(await restarted.store.counts(`user:${uuid(10_000)}`)).toEqual({ followers: 1, following: 0 });
  });

  it('refuses a batch whose event would pass the limit, writing nothing', async () => {
    const { graph } = await graphOn(log);
    const long = 'x'.repeat(100);
    const request: FollowManyRequest = { id: 'big', time, follows: Array.from({ length: 5_000 }, (_, i) => [`timeline:${long}${i}`, `user:${long}${i}`]) };
    expect(followBatchBytes(request)).toBeGreaterThan(MAX_BATCH_BYTES);
    await expect(graph.followMany(request)).rejects.toMatchObject({ code: 'payload_too_large', field: 'follows' });
    expect(await log.headPosition()).toBe(0);
  });
});

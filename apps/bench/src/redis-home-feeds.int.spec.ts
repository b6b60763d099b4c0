import type { Redis } from 'ioredis';
import { closeAll, connectOrExplain, openConnection, RedisRunLock } from './redis-connect.js';
import { feedKey, FEED_KEEP, redisTarget } from './redis-design.js';
import { fanoutInThisThread } from './redis-fanout.js';
import { RedisHomeFeeds } from './redis-home-feeds.js';

/**
 * The Redis baseline's design on a real Redis, in a database of its own (14) held with the
 * benchmark's run lock, so that it never meets a benchmark run. Where no Redis answers,
 * the suite says so and runs nothing.
 */
const target = redisTarget(process.env['REDIS_TEST_URL'] ?? 'redis://127.0.0.1:6379/14');
const connected = await connectOrExplain(target, 'feedmill-bench-test');

it('says quickly, in one line, that no Redis answers where none listens', async () => {
  const started = performance.now();
  const result = await connectOrExplain(redisTarget('redis://127.0.0.1:1/14'), 'feedmill-bench-test');
  expect(performance.now() - started).toBeLessThan(3_000);
  expect(result).toEqual({ reason: 'no Redis answered at redis://127.0.0.1:1/14: connect ECONNREFUSED 127.0.0.1:1' });
});

if ('redis' in connected) {
  const admin = connected.redis;
  let lock: RedisRunLock;
  let connections: Redis[];
  let feeds: RedisHomeFeeds;

  beforeAll(async () => {
    lock = (await RedisRunLock.flushAndHold(admin, 60_000))!;
    const clients = [openConnection(target, 'test-client-0'), openConnection(target, 'test-client-1')];
    const workers = [openConnection(target, 'test-fanout-0'), openConnection(target, 'test-fanout-1')];
    connections = [...clients, ...workers];
    await Promise.all(connections.map((redis) => redis.connect()));
    feeds = new RedisHomeFeeds(clients, fanoutInThisThread(workers));
    await feeds.startWorkers();
  });

  afterAll(async () => {
    await feeds.stopWorkers();
    await lock.flushAndRelease();
    closeAll([admin, ...connections]);
  });

  it('holds its database: no second run gets in while it runs', async () => {
    expect(await admin.exists(RedisRunLock.key)).toBe(1);
    const other = openConnection(target, 'test-other');
    await other.connect();
    try {
      expect(await RedisRunLock.flushAndHold(other, 0)).toBeUndefined();
    } finally {
      other.disconnect();
    }
  });

  it('delivers a post to every follower and to no one else, readable newest first', async () => {
    for (const reader of ['ra', 'rb', 'rc']) await feeds.follow(reader, 'p1');
    await feeds.follow('rd', 'p2');
    const before = feeds.delivered;
    const first = await feeds.post('p1', { actor: 'p1', verb: 'post', object: 'object:1' });
    const second = await feeds.post('p1', { actor: 'p1', verb: 'post', object: 'object:2' });
    await feeds.drained();
    expect(feeds.delivered - before).toBe(6);
    expect(second.id).toBeGreaterThan(first.id);
    expect((await feeds.newest('rb', 20)).map((p) => p.object)).toEqual(['object:2', 'object:1']);
    expect(await feeds.newest('rd', 20)).toEqual([]);
    expect(await feeds.inFeed('rc', first.id)).toBe(true);
    expect(await feeds.inFeed('rd', first.id)).toBe(false);
    expect(JSON.parse(await feeds.readPage('ra', 1))).toEqual({ items: [second] });
  });

  it(`keeps the newest ${FEED_KEEP} entries of a feed`, async () => {
    await feeds.follow('busy', 'p3');
    const posts = [];
    for (let i = 0; i < FEED_KEEP + 30; i++) posts.push(await feeds.post('p3', { actor: 'p3', verb: 'post', object: `object:${i}` }));
    await feeds.drained();
    expect(await admin.zcard(feedKey('busy'))).toBe(FEED_KEEP);
    const newest = await feeds.newest('busy', 25);
    expect(newest.map((p) => p.id)).toEqual(posts.slice(-25).reverse().map((p) => p.id));
    expect(await feeds.inFeed('busy', posts[29]!.id)).toBe(false);
    expect(await feeds.inFeed('busy', posts[30]!.id)).toBe(true);
  });

  it('counts a job that fails, and goes on with the next', async () => {
    const failuresBefore = feeds.fanoutFailures;
    // A follower set of the wrong type makes the job's SMEMBERS fail.
    await admin.set('followers:broken', 'not a set');
    await feeds.post('broken', { actor: 'broken', verb: 'post', object: 'object:x' });
    const after = await feeds.post('p1', { actor: 'p1', verb: 'post', object: 'object:3' });
    await feeds.drained();
    expect(feeds.fanoutFailures).toBe(failuresBefore + 1);
    expect(feeds.firstFanoutFailure).toMatch(/WRONGTYPE/);
    expect(await feeds.inFeed('ra', after.id)).toBe(true);
  });
} else {
  console.log(`SKIPPED: the Redis home-feed design: ${connected.reason}`);
  it.todo('the Redis home-feed design (start Redis or set REDIS_TEST_URL to run it)');
}

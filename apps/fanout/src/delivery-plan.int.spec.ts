import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * A failed lookup must fail its batch (which fan-out retries), never the process: Node
 * ends a process on a rejection nobody handles. Checked in a child process running the
 * built module, because the test runner intercepts unhandled rejections itself.
 */
it('fails the batch, not the process, when a lookup fails while others are pending', () => {
  const script = `
    const { planDeliveries } = await import(${JSON.stringify(resolve('apps/fanout/dist/delivery-plan.js'))});
    const lookups = {
      followers: () => new Promise((done) => setTimeout(() => done([]), 50)),
      recent: async () => { throw new Error('content is down'); },
      isTimeline: () => true,
      capOf: () => 1,
      backfills: () => true,
      activities: async () => [],
    };
    const event = (type, data, position) => ({ stream: 's', revision: position - 1, position, type, data, metadata: { v: 1 }, recordedAt: 't' });
    const events = [
      event('FeedFollowed', { follower: 'timeline:t', target: 'user:b', time: 't' }, 1),
      event('ActivityAdded', { activity: { id: 'a1', feed: 'user:a', actor: 'a', verb: 'v', object: 'o', time: '2026-01-01T00:00:00.000Z' } }, 2),
    ];
    try {
      await planDeliveries(events, lookups);
      console.log('no error');
    } catch (error) {
      await new Promise((done) => setTimeout(done, 100));
      console.log('rejected: ' + error.message);
    }
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect({ status: child.status, stdout: child.stdout.trim() }).toEqual({ status: 0, stdout: 'rejected: content is down' });
});

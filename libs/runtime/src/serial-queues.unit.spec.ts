import { FeedmillError } from '@feedmill/contracts';
import { SerialQueues } from './serial-queues.js';

describe('SerialQueues', () => {
  it('runs tasks of one key one at a time, in order, even when one fails', async () => {
    const queues = new SerialQueues();
    const order: string[] = [];
    const task = (name: string, ms: number, fail = false) => async () => {
      order.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      order.push(`end ${name}`);
      if (fail) throw new FeedmillError('conflict', name);
    };
    await Promise.allSettled([queues.run('k', task('a', 20, true)), queues.run('k', task('b', 1)), queues.run('other', task('c', 5))]);
    expect(order.indexOf('end a')).toBeLessThan(order.indexOf('start b'));
    expect(order.indexOf('start c')).toBeLessThan(order.indexOf('end a'));
  });
});

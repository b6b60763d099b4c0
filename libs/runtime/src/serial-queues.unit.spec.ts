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

  it('runs a task over many keys after every earlier task of each key, and before every later one', async () => {
    const queues = new SerialQueues();
    const order: string[] = [];
    const task = (name: string, ms: number) => async () => {
      order.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      order.push(`end ${name}`);
    };
    await Promise.all([
      queues.run('a', task('a1', 20)),
      queues.run('b', task('b1', 5)),
      queues.runAll(['a', 'b', 'a'], task('ab', 5)),
      queues.run('b', task('b2', 1)),
      queues.run('c', task('c1', 1)),
    ]);
    expect(order.indexOf('start ab')).toBeGreaterThan(order.indexOf('end a1'));
    expect(order.indexOf('start ab')).toBeGreaterThan(order.indexOf('end b1'));
    expect(order.indexOf('start b2')).toBeGreaterThan(order.indexOf('end ab'));
    expect(order.indexOf('start c1')).toBeLessThan(order.indexOf('end a1'));
  });
});

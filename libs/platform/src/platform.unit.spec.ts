import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { FeedmillError } from '@feedmill/contracts';
import { loadFeedConfig } from './config/feed-config-file.js';
import { loadRuntimeConfig } from './config/runtime-config.js';
import { parseInput } from './validation.js';
import { SerialQueues } from './serial-queues.js';

describe('parseInput', () => {
  const schema = z.strictObject({ verb: z.string(), nested: z.strictObject({ n: z.number() }).optional() });

  it('names the first bad field, with where it came from', () => {
    expect(() => parseInput(schema, { verb: 3 }, 'body')).toThrow(expect.objectContaining({ code: 'invalid_request', field: 'body.verb' }));
    expect(() => parseInput(schema, { verb: 'v', nested: { n: 1, extra: 2 } }, 'body')).toThrow(
      expect.objectContaining({ field: 'body.nested.extra', message: 'body.nested.extra: is not a known field' }),
    );
    expect(parseInput(schema, { verb: 'v' })).toEqual({ verb: 'v' });
  });
});

describe('configuration', () => {
  it('fills defaults and names the variable that is wrong', () => {
    expect(loadRuntimeConfig({}).PORT).toBe(3000);
    expect(() => loadRuntimeConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadRuntimeConfig({ LOG: 'mongo' })).toThrow(/LOG/);
    expect(() => loadRuntimeConfig({ LOG: 'kurrentdb' })).toThrow(/KURRENTDB_URL/);
    expect(() => loadRuntimeConfig({ STORE: 'mongodb' })).toThrow(/MONGODB_URL/);
    expect(loadRuntimeConfig({}).STORE).toBe('memory');
    expect(loadRuntimeConfig({ LOG: 'kurrentdb', KURRENTDB_URL: 'kurrentdb://127.0.0.1:2113?tls=false' }).LOG).toBe('kurrentdb');
  });

  it('names the file and the key of a bad feed config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'feedmill-config-'));
    const path = join(dir, 'feeds.json');
    writeFileSync(path, JSON.stringify({ groups: { timeline: { kind: 'timeline', cap: -1 } } }));
    expect(() => loadFeedConfig(path)).toThrow(new RegExp(`${path}.*groups\\.timeline\\.cap`));
    writeFileSync(path, '{ not json');
    expect(() => loadFeedConfig(path)).toThrow(/cannot read it as JSON/);
    expect(loadFeedConfig(undefined).groups['user']).toEqual({ kind: 'producer' });
  });
});

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

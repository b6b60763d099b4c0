import { decodeFanoutJob, DEDICATED_DB, encodeFanoutJob, isLoopback, parseInfo, redisTarget, SnowflakeIds, trimStopRank } from './redis-design.js';

describe('SnowflakeIds', () => {
  const at = Date.UTC(2026, 4, 1, 12, 0, 0, 250);

  it('orders ids by time, then by the order they were made within a millisecond', () => {
    const ids = new SnowflakeIds();
    const made = [ids.next(at), ids.next(at), ids.next(at), ids.next(at + 1), ids.next(at + 40)];
    expect([...made].sort((a, b) => a - b)).toEqual(made);
    expect(new Set(made).size).toBe(made.length);
    expect(made.map(SnowflakeIds.timeOf)).toEqual([at, at, at, at + 1, at + 40]);
  });

  it('keeps growing when the clock steps back', () => {
    const ids = new SnowflakeIds();
    const first = ids.next(at);
    const second = ids.next(at - 5_000);
    expect(second).toBeGreaterThan(first);
  });

  it('borrows the next millisecond when one runs out of sequence', () => {
    const ids = new SnowflakeIds();
    const made = Array.from({ length: 2 ** SnowflakeIds.SEQUENCE_BITS + 2 }, () => ids.next(at));
    for (let i = 1; i < made.length; i++) expect(made[i]).toBe(made[i - 1]! + 1);
    expect(SnowflakeIds.timeOf(made[made.length - 1]!)).toBe(at + 1);
    // The borrowed millisecond is not handed out twice when the clock reaches it.
    expect(ids.next(at + 1)).toBeGreaterThan(made[made.length - 1]!);
  });

  it('stays an exact double, as a sorted-set score must, for decades', () => {
    const late = new SnowflakeIds().next(Date.UTC(2090, 0, 1));
    expect(Number.isSafeInteger(late)).toBe(true);
    expect(Number(String(late))).toBe(late);
    expect(late + 1).not.toBe(late);
  });
});

describe('fan-out jobs', () => {
  it('round-trip the post id and the producer', () => {
    const job = { id: 123_456_789_012_345, producer: 'p42' };
    expect(decodeFanoutJob(encodeFanoutJob(job))).toEqual(job);
  });

  it('refuse a payload that is not a job', () => {
    for (const payload of ['', 'p42', '12 ', ' p42', 'x p42', '1.5 p42']) expect(() => decodeFanoutJob(payload)).toThrow(/not a fan-out job/);
  });
});

describe('trimStopRank', () => {
  it('keeps the newest members: ZREMRANGEBYRANK 0 -801 leaves 800', () => {
    expect(trimStopRank(800)).toBe(-801);
    // Over members ranked 0..n-1 (lowest score first), removing 0..n+stop leaves -stop-1 of them.
    const n = 1000;
    const removed = n + trimStopRank(800) + 1;
    expect(n - removed).toBe(800);
  });
});

describe('redisTarget', () => {
  it('uses the dedicated database unless the URL names one', () => {
    expect(redisTarget('redis://127.0.0.1:6379')).toEqual({ shown: 'redis://127.0.0.1:6379', host: '127.0.0.1', port: 6379, db: DEDICATED_DB, tls: false });
    expect(redisTarget('redis://cache.internal/3')).toMatchObject({ host: 'cache.internal', port: 6379, db: 3 });
    expect(redisTarget('redis://cache.internal/')).toMatchObject({ db: DEDICATED_DB });
  });

  it('takes credentials and TLS, and never shows the password', () => {
    const target = redisTarget('rediss://bench:s3cret@redis.example:6380/2');
    expect(target).toMatchObject({ host: 'redis.example', port: 6380, db: 2, username: 'bench', password: 's3cret', tls: true });
    expect(target.shown).not.toContain('s3cret');
  });

  it('refuses what is not a Redis URL, naming the variable', () => {
    expect(() => redisTarget('localhost:6379')).toThrow(/REDIS_URL/);
    expect(() => redisTarget('http://localhost:6379')).toThrow(/REDIS_URL must start with redis/);
    expect(() => redisTarget('redis://localhost/x')).toThrow(/database number/);
  });
});

describe('isLoopback', () => {
  it('tells a server on this machine', () => {
    expect(['127.0.0.1', '127.0.1.1', 'localhost', '::1'].map(isLoopback)).toEqual([true, true, true, true]);
    expect(['10.0.0.5', 'redis', '128.0.0.1'].map(isLoopback)).toEqual([false, false, false]);
  });
});

describe('parseInfo', () => {
  it('reads the fields of an INFO reply', () => {
    const info = parseInfo('# Memory\r\nused_memory:1112664\r\nused_memory_human:1.06M\r\n\r\n# Server\r\nredis_version:7.0.15\r\n');
    expect(info).toEqual({ used_memory: '1112664', used_memory_human: '1.06M', redis_version: '7.0.15' });
  });
});

import { runClientLoad } from './client-load.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('runClientLoad', () => {
  it('makes exactly the calls asked for, never more at once than it has clients', async () => {
    let running = 0;
    let most = 0;
    const result = await runClientLoad({
      clients: 4,
      amount: 50,
      next: () => ({
        kind: 'post',
        run: async () => {
          most = Math.max(most, ++running);
          await pause(1);
          running--;
        },
      }),
    });
    expect(result.byKind['post']).toMatchObject({ ok: 50, failed: 0 });
    expect(result.byKind['post']!.latency.count).toBe(50);
    expect(most).toBe(4);
    expect(result.errors).toBe(0);
  });

  it('stops when the plan has no more calls', async () => {
    let left = 7;
    const result = await runClientLoad({ clients: 3, amount: 100, next: () => (left-- > 0 ? { kind: 'follow', run: async () => undefined } : undefined) });
    expect(result.byKind['follow']!.ok).toBe(7);
  });

  it('runs for a duration, keeping kinds apart', async () => {
    let turn = 0;
    const result = await runClientLoad({
      clients: 2,
      seconds: 0.3,
      next: () => ({ kind: turn++ % 3 === 0 ? 'post' : 'read', run: () => pause(2) }),
    });
    expect(result.seconds).toBeGreaterThanOrEqual(0.3);
    expect(result.seconds).toBeLessThan(1);
    const reads = result.byKind['read']!.ok;
    const posts = result.byKind['post']!.ok;
    expect(posts).toBeGreaterThan(5);
    expect(reads / posts).toBeGreaterThan(1.5);
    expect(reads / posts).toBeLessThan(2.5);
  });

  it('counts failures apart from successes and keeps the first message', async () => {
    let n = 0;
    const result = await runClientLoad({
      clients: 2,
      amount: 10,
      next: () => ({ kind: 'read', run: async () => (++n % 5 === 0 ? Promise.reject(new Error(`refused ${n}`)) : undefined) }),
    });
    expect(result.byKind['read']).toMatchObject({ ok: 8, failed: 2 });
    expect(result.errors).toBe(2);
    expect(result.firstError).toBe('read: refused 5');
  });

  it('paces calls to at most the rate asked, whatever the clients could do', async () => {
    const result = await runClientLoad({ clients: 8, seconds: 0.5, pace: 100, next: () => ({ kind: 'post', run: async () => undefined }) });
    // Slots every 10 ms over 0.5 s: 50 of them, and never more.
    expect(result.byKind['post']!.ok).toBeLessThanOrEqual(51);
    expect(result.byKind['post']!.ok).toBeGreaterThan(25);
  });
});

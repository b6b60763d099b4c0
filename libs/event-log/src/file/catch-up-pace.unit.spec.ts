import { CatchUpPacing } from './catch-up-pace.js';

describe('catch-up pacing', () => {
  let slowest: number;
  const pacing = (mostWaitMs = 10_000) => new CatchUpPacing(() => slowest, 100, mostWaitMs);
  beforeEach(() => (slowest = 0));

  it('lets a subscription catching up read to a lead past the slowest, and holds it back there', () => {
    const pace = pacing().begin(1_000);
    expect(pace.allowed(0, 50)).toBe(50);
    expect(pace.held).toBe(false);
    expect(pace.allowed(80, 50)).toBe(20);
    expect(pace.allowed(100, 50)).toBe(0);
    expect(pace.held).toBe(true);
    slowest = 30;
    expect(pace.allowed(100, 50)).toBe(30);
    expect(pace.held).toBe(false);
  });

  it('never holds a subscription past the head it began at: following the head, it reads what there is', () => {
    const pace = pacing().begin(500);
    expect(pace.allowed(500, 50)).toBe(50);
    expect(pace.allowed(900, 50)).toBe(50);
    expect(pace.held).toBe(false);
  });

  it('wakes a held subscription when another reads on, not before', async () => {
    const shared = pacing();
    const ahead = shared.begin(1_000);
    const behind = shared.begin(1_000);
    expect(ahead.allowed(100, 50)).toBe(0);
    let woken = false;
    const waited = ahead.waitForOthers(100, new AbortController().signal).then(() => (woken = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(woken).toBe(false);
    slowest = 50;
    expect(behind.allowed(0, 50)).toBe(50);
    await waited;
    expect(ahead.allowed(100, 50)).toBe(50);
  });

  it('does not hold one that is two leads or more ahead: the slowest would not reach what it reads while it is kept decoded', () => {
    const pace = pacing().begin(1_000);
    expect(pace.allowed(150, 50)).toBe(0);
    expect(pace.allowed(200, 50)).toBe(50);
    expect(pace.held).toBe(false);
  });

  it('after being held the longest in a row, however often it is woken, reads a lead of records unheld, then is paced again', async () => {
    const shared = pacing(60);
    const pace = shared.begin(10_000);
    const started = performance.now();
    const waking = setInterval(() => shared.moved(), 10);
    try {
      let waits = 0;
      while (pace.allowed(100, 50) === 0) {
        await pace.waitForOthers(100, new AbortController().signal);
        waits++;
      }
      expect(waits).toBeGreaterThan(2);
      expect(performance.now() - started).toBeGreaterThanOrEqual(55);
    } finally {
      clearInterval(waking);
    }
    expect(pace.allowed(199, 50)).toBe(50);
    slowest = 150;
    expect(pace.allowed(200, 50)).toBe(50);
    expect(pace.allowed(250, 50)).toBe(0);
  });

  it('stops waiting when its subscription stops', async () => {
    const pace = pacing().begin(1_000);
    expect(pace.allowed(100, 50)).toBe(0);
    const stop = new AbortController();
    const waited = pace.waitForOthers(100, stop.signal);
    stop.abort();
    await waited;
    // An abort is not a wait that ran out: it is still held.
    expect(pace.allowed(100, 50)).toBe(0);
  });
});

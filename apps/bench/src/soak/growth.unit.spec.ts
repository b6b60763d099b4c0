import { growthVerdict, type SoakRow } from './growth.js';

const row = (heapAfterGcMb: number, logEvents = 0): SoakRow => ({ atSeconds: 0, requests: 100, errors: 0, p50Ms: 1, p99Ms: 5, healthzMs: 1, rssMb: 200, heapAfterGcMb, loopDelayP99Ms: 10, loopDelayMaxMs: 20, logEvents });

describe('soak growth verdict', () => {
  it('passes a heap that stays level, however it wobbles', () => {
    const verdict = growthVerdict([100, 104, 98, 101, 103, 99, 102, 100, 97].map((mb) => row(mb)), 20);
    expect(verdict.grew).toBe(false);
    expect(verdict.growthPercent).toBeCloseTo(((99.67 - 100.67) / 100.67) * 100, 0);
  });

  it('fails a heap whose last third sits more than the allowance above its first', () => {
    const verdict = growthVerdict([100, 100, 100, 110, 115, 120, 125, 130, 135].map((mb, i) => row(mb, i * 10_000)), 20);
    expect(verdict).toMatchObject({ grew: true, firstThirdMb: 100, lastThirdMb: 130 });
    // 30 MB over the 60,000 events between the thirds' means.
    expect(verdict.retainedBytesPerEvent).toBeCloseTo(500, 5);
    expect(verdict.reason).toMatch(/\+30\.0% \(above the 20% allowed\), 500 B more per event/);
  });

  it('gives no verdict of growth on fewer than three rows', () => {
    expect(growthVerdict([row(100), row(300)], 20)).toMatchObject({ grew: false, reason: expect.stringMatching(/too few/) });
  });
});

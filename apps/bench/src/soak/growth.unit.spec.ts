import { growthVerdict, type SoakRow } from './growth.js';

const row = (heapAfterGcMb: number, p99Ms = 5): SoakRow => ({ atSeconds: 0, requests: 100, errors: 0, p50Ms: 1, p99Ms, healthzMs: 1, rssMb: 200, heapAfterGcMb, loopDelayP99Ms: 10, loopDelayMaxMs: 20, logEvents: 0 });

describe('soak growth verdict', () => {
  it('passes a heap that stays level, however it wobbles', () => {
    const verdict = growthVerdict([100, 104, 98, 101, 103, 99, 102, 100, 97].map((mb) => row(mb)), 20);
    expect(verdict.grew).toBe(false);
    expect(verdict.growthPercent).toBeCloseTo(((99.67 - 100.67) / 100.67) * 100, 0);
  });

  it('fails a heap whose last third sits more than the allowance above its first', () => {
    const verdict = growthVerdict([100, 100, 100, 110, 115, 120, 125, 130, 135].map((mb) => row(mb)), 20);
    expect(verdict).toMatchObject({ grew: true, firstThirdMb: 100, lastThirdMb: 130 });
    expect(verdict.reason).toMatch(/\+30\.0% \(above the 20% allowed\)/);
  });

  it('gives no verdict of growth on fewer than three rows', () => {
    expect(growthVerdict([row(100), row(300)], 20)).toMatchObject({ grew: false, reason: expect.stringMatching(/too few/) });
  });
});

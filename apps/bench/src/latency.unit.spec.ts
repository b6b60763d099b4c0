import { Latencies } from './latency.js';

describe('Latencies', () => {
  it('reports ordered percentiles that never pass the maximum', () => {
    const latencies = new Latencies();
    for (const ms of [20.438, 20.2, 6.1, 5.9, 12.3]) latencies.recordMs(ms);
    const s = latencies.summary();
    expect(s.count).toBe(5);
    expect(s.max).toBeCloseTo(20.438, 2);
    expect(s.p50).toBeLessThanOrEqual(s.p95);
    expect(s.p95).toBeLessThanOrEqual(s.p99);
    expect(s.p99).toBeLessThanOrEqual(s.max);
    expect(s.p50).toBeCloseTo(12.3, 1);
  });
});

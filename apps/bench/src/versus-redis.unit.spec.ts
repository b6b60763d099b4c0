import type { LatencySummary } from './latency.js';
import type { RedisBaselineResults } from './redis-baseline.js';
import type { BenchResults } from './report.js';
import { advantage, formatFigure, formatRatio, versusRedis } from './versus-redis.js';

describe('advantage', () => {
  it('is above 1 when feedmill is better, whichever way the figure is better', () => {
    expect(advantage(2_000, 1_000, 'higher')).toBe(2);
    expect(advantage(500, 1_000, 'higher')).toBe(0.5);
    // Latency and memory: less is better, so the ratio is Redis ÷ feedmill.
    expect(advantage(2, 8, 'lower')).toBe(4);
    expect(advantage(8, 2, 'lower')).toBe(0.25);
  });

  it('keeps three significant digits', () => {
    expect(advantage(1, 3, 'higher')).toBe(0.333);
    expect(advantage(12_345, 1, 'higher')).toBe(12_300);
  });

  it('has no value where a side has none, or a zero', () => {
    expect(advantage(null, 5, 'higher')).toBeNull();
    expect(advantage(5, null, 'lower')).toBeNull();
    expect(advantage(0, 5, 'higher')).toBeNull();
    expect(advantage(5, 0, 'lower')).toBeNull();
    expect(advantage(Number.NaN, 5, 'lower')).toBeNull();
  });
});

describe('formatRatio', () => {
  it('shows two significant digits', () => {
    expect([27.4, 3.44, 1, 0.314, 0.0517, null].map(formatRatio)).toEqual(['27×', '3.4×', '1.0×', '0.31×', '0.052×', 'n/a']);
  });
});

describe('formatFigure', () => {
  it('shows rates, milliseconds and KiB', () => {
    expect(formatFigure(12_345, '/s')).toBe('12,345 /s');
    expect(formatFigure(4.951, 'ms')).toBe('4.951 ms');
    expect(formatFigure(17.44, 'B')).toBe('17.4 B');
    expect(formatFigure(null, 'B')).toBe('n/a');
  });
});

describe('versusRedis', () => {
  const latency = (p50: number, p99: number, count = 100): LatencySummary => ({ count, mean: p50, p50, p95: p99, p99, max: p99 });
  const feedmill: Pick<BenchResults, 'loading' | 'fanout' | 'posts' | 'reads' | 'postToVisibleMs' | 'memory'> = {
    loading: { followsPerSecond: 3_000, followsSettledPerSecond: 2_500, followLatencyMs: latency(5, 50), warmPostsPerSecond: 800, warmPostLatencyMs: latency(20, 140) },
    fanout: { deliveries: 1_000, seconds: 1, deliveriesPerSecond: 90_000 },
    posts: { acceptedPerSecond: 240, latencyMs: latency(20, 53) },
    reads: { http: { readsPerSecond: 4_800, latencyMs: latency(5, 16) }, inProcess: { readsPerSecond: 1, latencyMs: latency(1, 1) } },
    postToVisibleMs: latency(8, 20, 40),
    memory: { bytesPerFollowEdge: 100, bytesPerTimelineEntry: 20, timelineEntryMethod: 'test' },
  };
  const redis = {
    available: true,
    loading: { edges: 10, edgesPerSecond: 40_000, edgeLatencyMs: latency(1, 5) },
    warm: { posts: 10, postsPerSecond: 8_000, postLatencyMs: latency(2, 22), deliveries: 1_000, seconds: 3, deliveriesPerSecond: 30_000 },
    mixed: { seconds: 15, postsPerSecond: 160, postLatencyMs: latency(2.5, 32), readsPerSecond: 3_200, readLatencyMs: latency(5.5, 64) },
    postToVisibleMs: latency(9, 54, 40),
    memory: { usedMemoryBefore: 0, usedMemoryAfter: 0, entries: 0, postBodies: 0, bytesPerTimelineEntry: 40 },
  } as unknown as Extract<RedisBaselineResults, { available: true }>;

  it('pairs every shared figure, with ratios that favour whichever side is better', () => {
    const rows = new Map(versusRedis(feedmill, redis).map((row) => [row.figure, row]));
    expect(rows.get('timeline reads (mixed phase)')).toEqual({ figure: 'timeline reads (mixed phase)', unit: '/s', feedmill: 4_800, redis: 3_200, better: 'higher', ratioIs: 'feedmill ÷ Redis', ratio: 1.5 });
    expect(rows.get('read latency p99 (mixed phase)')).toMatchObject({ feedmill: 16, redis: 64, better: 'lower', ratioIs: 'Redis ÷ feedmill', ratio: 4 });
    expect(rows.get('follow edges imported (10,000 per request)')).toMatchObject({ ratio: 0.075 });
    expect(rows.get('fan-out deliveries until visible (warm-up)')).toMatchObject({ ratio: 3 });
    expect(rows.get('memory per timeline entry, activities apart')).toMatchObject({ feedmill: 20, redis: 40, unit: 'B', ratio: 2 });
    expect(rows.size).toBe(14);
  });

  it('leaves a ratio out where feedmill has no figure', () => {
    const rows = versusRedis({ ...feedmill, memory: { bytesPerFollowEdge: null, bytesPerTimelineEntry: null, timelineEntryMethod: 'test' }, postToVisibleMs: latency(0, 0, 0) }, redis);
    const byName = new Map(rows.map((row) => [row.figure, row]));
    expect(byName.get('memory per timeline entry, activities apart')).toMatchObject({ feedmill: null, ratio: null });
    expect(byName.get('post to visible p50')).toMatchObject({ feedmill: null, redis: null, ratio: null });
  });
});

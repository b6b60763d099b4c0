import type { RedisBaselineResults } from './redis-baseline.js';
import type { BenchResults } from './report.js';

/** Which way a figure is better. */
export type Better = 'higher' | 'lower';

/** One figure both systems have, side by side. */
export interface VersusRedisRow {
  figure: string;
  unit: '/s' | 'ms' | 'B';
  feedmill: number | null;
  redis: number | null;
  better: Better;
  /** How {@link ratio} is taken, so that results.json says it too. */
  ratioIs: 'feedmill ÷ Redis' | 'Redis ÷ feedmill';
  /**
   * feedmill's advantage: feedmill ÷ Redis where higher is better (rates), Redis ÷ feedmill
   * where lower is better (latency, memory), so that above 1 feedmill is better either way.
   * Null where a side has no figure.
   */
  ratio: number | null;
}

/** feedmill's advantage over Redis for a figure: above 1, feedmill is better. */
export function advantage(feedmill: number | null, redis: number | null, better: Better): number | null {
  if (feedmill === null || redis === null || !(feedmill > 0) || !(redis > 0) || !Number.isFinite(feedmill) || !Number.isFinite(redis)) return null;
  const ratio = better === 'higher' ? feedmill / redis : redis / feedmill;
  return Number(ratio.toPrecision(3));
}

/** A ratio with two significant digits: `12×`, `3.4×`, `0.31×`, `0.0052×`. */
export function formatRatio(ratio: number | null): string {
  if (ratio === null) return 'n/a';
  if (ratio >= 10) return `${Math.round(ratio)}×`;
  if (ratio >= 1) return `${ratio.toFixed(1)}×`;
  return `${ratio.toPrecision(2)}×`;
}

export function formatFigure(value: number | null, unit: VersusRedisRow['unit']): string {
  if (value === null) return 'n/a';
  if (unit === '/s') return `${value.toLocaleString('en')} /s`;
  if (unit === 'B') return `${value.toFixed(1)} B`;
  return `${value} ms`;
}

type Available = Extract<RedisBaselineResults, { available: true }>;

/** Every figure of feedmill's report that the Redis baseline also has. */
export function versusRedis(r: Pick<BenchResults, 'loading' | 'fanout' | 'posts' | 'reads' | 'postToVisibleMs' | 'memory'>, redis: Available): VersusRedisRow[] {
  const row = (figure: string, unit: VersusRedisRow['unit'], feedmill: number | null, theirs: number | null, better: Better): VersusRedisRow => ({
    figure,
    unit,
    feedmill,
    redis: theirs,
    better,
    ratioIs: better === 'higher' ? 'feedmill ÷ Redis' : 'Redis ÷ feedmill',
    ratio: advantage(feedmill, theirs, better),
  });
  const probes = r.postToVisibleMs.count > 0 && redis.postToVisibleMs.count > 0;
  return [
    row('follow edges imported (10,000 per request)', '/s', r.loading.followsPerSecond, redis.loading.edgesPerSecond, 'higher'),
    row('follow import request p99', 'ms', r.loading.followLatencyMs.p99, redis.loading.edgeLatencyMs.p99, 'lower'),
    row('posts accepted (warm-up, posts only)', '/s', r.loading.warmPostsPerSecond, redis.warm.postsPerSecond, 'higher'),
    row('post latency p99 (warm-up)', 'ms', r.loading.warmPostLatencyMs.p99, redis.warm.postLatencyMs.p99, 'lower'),
    row('fan-out deliveries until visible (warm-up)', '/s', r.fanout.deliveriesPerSecond, redis.warm.deliveriesPerSecond, 'higher'),
    row('posts accepted (mixed phase)', '/s', r.posts.acceptedPerSecond, redis.mixed.postsPerSecond, 'higher'),
    row('post latency p50 (mixed phase)', 'ms', r.posts.latencyMs.p50, redis.mixed.postLatencyMs.p50, 'lower'),
    row('post latency p99 (mixed phase)', 'ms', r.posts.latencyMs.p99, redis.mixed.postLatencyMs.p99, 'lower'),
    row('timeline reads (mixed phase)', '/s', r.reads.http.readsPerSecond, redis.mixed.readsPerSecond, 'higher'),
    row('read latency p50 (mixed phase)', 'ms', r.reads.http.latencyMs.p50, redis.mixed.readLatencyMs.p50, 'lower'),
    row('read latency p99 (mixed phase)', 'ms', r.reads.http.latencyMs.p99, redis.mixed.readLatencyMs.p99, 'lower'),
    row('post to visible p50', 'ms', probes ? r.postToVisibleMs.p50 : null, probes ? redis.postToVisibleMs.p50 : null, 'lower'),
    row('post to visible p99', 'ms', probes ? r.postToVisibleMs.p99 : null, probes ? redis.postToVisibleMs.p99 : null, 'lower'),
    row('memory per timeline entry, activities apart', 'B', r.memory.bytesPerTimelineEntry, redis.memory.bytesPerTimelineEntry, 'lower'),
  ];
}

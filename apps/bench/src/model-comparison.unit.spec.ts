import { checkGoals, comparisonMarkdown, type ModelComparison, type ModelFigures, type ModelRun } from './model-comparison.js';
import { workByPhase } from './timeline-work.js';

const latency = (p50: number, p99: number) => ({ count: 1_000, mean: p50, p50, p95: p99, p99, max: p99 * 2 });

/** A measured run with made-up figures: the work before and in the mixed phase, and the read p99. */
function measured(model: string, work: { written: number; queried: number; mixedWritten?: number; mixedQueried?: number }, readP99: number, more: Partial<ModelFigures> = {}): ModelRun {
  return {
    model,
    outcome: 'measured',
    figures: {
      work: workByPhase({ entriesWritten: work.written, feedsQueried: work.queried }, { entriesWritten: work.mixedWritten ?? 0, feedsQueried: work.mixedQueried ?? 0 }),
      warmUp: { posts: 4_000, deliveries: work.written, secondsUntilDelivered: 4, postsPerSecondUntilDelivered: 1_000 },
      mixed: { seconds: 15, posts: 3_000, reads: 60_000, postsPerSecond: 200, readsPerSecond: 4_000, postLatencyMs: latency(5, 20), readLatencyMs: latency(readP99 / 4, readP99), loadAverage: 1.5, meanCores: 1.2 },
      failures: { httpNon2xx: 0, transportErrors: 0 },
      timelines: model === 'ring' ? null : { reference: 'ring', readers: 200, entries: 5_000, matches: 200, mismatches: 0, examples: [] },
      ...more,
    },
  };
}

const statuses = (goals: ReturnType<typeof checkGoals>) => Object.fromEntries(goals.map((g) => [g.goal, g.status]));

describe('checkGoals', () => {
  const ring = measured('ring', { written: 900_000, queried: 0, mixedWritten: 300_000 }, 10);
  const pull = measured('pull', { written: 0, queried: 0, mixedQueried: 500_000 }, 14);

  it('meets every goal on celebrity when hybrid does under a third of all push, less than all pull, and reads within twice its p99', () => {
    const hybrid = measured('hybrid', { written: 100_000, queried: 0, mixedWritten: 50_000, mixedQueried: 200_000 }, 19.9);
    expect(statuses(checkGoals('celebrity', [ring, pull, hybrid]))).toEqual({
      'hybrid does less total work than ring (all push)': 'met',
      'hybrid does less total work than pull (all pull)': 'met',
      "hybrid does at most a third of ring's total work": 'met',
      "hybrid's read p99 is at most twice ring's": 'met',
    });
  });

  it('says which goal is missed, with the figures behind it', () => {
    // 550,000 in all: less than ring's 1,200,000 but more than a third of it, and more than pull's 500,000; a p99 just over twice ring's.
    const hybrid = measured('hybrid', { written: 300_000, queried: 0, mixedWritten: 100_000, mixedQueried: 150_000 }, 20.5);
    const goals = checkGoals('celebrity', [ring, pull, hybrid]);
    expect(statuses(goals)).toEqual({
      'hybrid does less total work than ring (all push)': 'met',
      'hybrid does less total work than pull (all pull)': 'not met',
      "hybrid does at most a third of ring's total work": 'not met',
      "hybrid's read p99 is at most twice ring's": 'not met',
    });
    expect(goals.map((g) => g.detail)).toEqual([
      '550,000 against 1,200,000 (0.46×)',
      '550,000 against 500,000 (1.10×)',
      '0.46× of it, at most 0.33× wanted',
      '20.5 ms against 10 ms (2.05×, at most 2× wanted)',
    ]);
  });

  it('holds equal work to be not less, and a third exactly, or twice the p99 exactly, to be within', () => {
    const hybrid = measured('hybrid', { written: 400_000, queried: 0, mixedQueried: 100_000 }, 20);
    const equalToPull = checkGoals('celebrity', [ring, pull, hybrid]);
    expect(statuses(equalToPull)).toMatchObject({ 'hybrid does less total work than pull (all pull)': 'not met', "hybrid's read p99 is at most twice ring's": 'met' });
    const third = measured('hybrid', { written: 400_000, queried: 0 }, 1);
    expect(statuses(checkGoals('celebrity', [ring, pull, third]))).toMatchObject({ "hybrid does at most a third of ring's total work": 'met' });
  });

  it('asks for a third of all push only on the celebrity profile', () => {
    const hybrid = measured('hybrid', { written: 1_000_000, queried: 0 }, 10);
    expect(checkGoals('small', [ring, pull, hybrid]).map((g) => g.goal)).toEqual([
      'hybrid does less total work than ring (all push)',
      'hybrid does less total work than pull (all pull)',
      "hybrid's read p99 is at most twice ring's",
    ]);
  });

  it('checks nothing it has no figures for, and says why', () => {
    const skipped: ModelRun = { model: 'hybrid', outcome: 'skipped', reason: "this build's timeline models are ring, cache, pull" };
    const goals = checkGoals('small', [ring, skipped]);
    expect(goals.every((g) => g.status === 'not checked')).toBe(true);
    expect(goals[0]!.detail).toBe("hybrid was skipped: this build's timeline models are ring, cache, pull");
    const hybrid = measured('hybrid', { written: 1, queried: 0 }, 1);
    expect(checkGoals('small', [ring, hybrid]).map((g) => [g.status, g.detail])).toEqual([
      ['met', '1 against 1,200,000 (0.00×)'],
      ['not checked', 'pull was not run'],
      ['met', '1 ms against 10 ms (0.10×, at most 2× wanted)'],
    ]);
  });

  it('holds no run against another when a side had failed requests or timelines that differ', () => {
    const failing = measured('hybrid', { written: 1, queried: 0 }, 1, { failures: { httpNon2xx: 3, transportErrors: 1 } });
    expect(checkGoals('small', [ring, pull, failing]).map((g) => [g.status, g.detail])[0]).toEqual(['not checked', "hybrid's run had 4 failed requests"]);
    const differing = measured('hybrid', { written: 1, queried: 0 }, 1, {
      timelines: { reference: 'ring', readers: 200, entries: 5_000, matches: 190, mismatches: 10, examples: [] },
    });
    expect(checkGoals('small', [ring, pull, differing])[1]).toEqual({ goal: 'hybrid does less total work than pull (all pull)', status: 'not checked', detail: "hybrid's timelines differ from ring's for 10 readers" });
    const brokenRing: ModelRun = { model: 'ring', outcome: 'failed', reason: 'post answered 500' };
    expect(checkGoals('small', [brokenRing, pull, measured('hybrid', { written: 1, queried: 0 }, 1)])[0]!.detail).toBe('ring was failed: post answered 500');
  });
});

describe('comparisonMarkdown', () => {
  const runs: ModelRun[] = [
    measured('ring', { written: 900_000, queried: 0, mixedWritten: 300_000 }, 10),
    measured('pull', { written: 0, queried: 0, mixedQueried: 500_000 }, 14, {
      timelines: { reference: 'ring', readers: 200, entries: 5_000, matches: 199, mismatches: 1, examples: ['r7: 1 only in ring (p3 object:9), 0 only in pull'] },
    }),
    { model: 'hybrid', outcome: 'skipped', reason: "the deployment did not start: feedmill: FEED_CONFIG /tmp/feeds.json: groups.timeline.model: Invalid option: expected one of \"ring\"|\"cache\"|\"pull\"" },
  ];
  const comparison: ModelComparison = {
    workload: {
      profile: 'celebrity',
      mode: 'standalone',
      seed: 42,
      command: 'npm run bench:models -- --profile celebrity',
      readers: 10_000,
      producers: 1_000,
      followEdges: 109_054,
      celebrities: 8,
      celebrityEdges: 63_940,
      neverReadShare: 0.9,
      warmPosts: 4_000,
      mixedSeconds: 15,
      mixedReaders: 16,
      mixedPostsPerSecond: 200,
      loadGenerator: 'wrk',
      checkedReaders: 200,
    },
    machine: { cpus: 2, cpuModel: 'AMD EPYC', memoryGiB: 24, node: 'v20.20.2' },
    startedAt: '2025-01-01T00:00:00.000Z',
    durationSeconds: 120,
    runs,
    goals: checkGoals('celebrity', runs),
  };
  const md = comparisonMarkdown(comparison);

  it('puts every model in one table: total work and its parts, posts/s, reads/s, read p50 / p99', () => {
    expect(md).toContain('| model | total work | vs ring | entries written | feeds queried | posts/s (mixed) | reads/s (mixed) | read p50 / p99 ms |');
    expect(md).toContain('| ring | 1,200,000 | 1.00× | 1,200,000 | 0 | 200 | 4,000 | 2.5 / 10 | 1,000 | 0 |');
    expect(md).toContain('| pull | 500,000 | 0.42× | 0 | 500,000 | 200 | 4,000 | 3.5 / 14 | 1,000 | 0 |');
    expect(md).toContain('| hybrid | skipped | | | | | | | | |');
    expect(md).toContain('- hybrid skipped: the deployment did not start: feedmill: FEED_CONFIG');
  });

  it('shows the work by phase and per mixed-phase request', () => {
    expect(md).toContain('| ring | 900,000 = 900,000 + 0 | 300,000 = 300,000 + 0 | 4.8 | 1.5 | 1.2 |');
    expect(md).toContain('| pull | 0 = 0 + 0 | 500,000 = 0 + 500,000 | 7.9 | 1.5 | 1.2 |');
  });

  it('states the workload, with the celebrities’ share of the edges', () => {
    expect(md).toContain('10,000 readers (90% never read), 1,000 producers, 8 of them celebrities with 63,940 of the edges (59%), 109,054 follow edges imported');
    expect(md).toContain('Reproduce: `npm run bench:models -- --profile celebrity` (seed 42).');
  });

  it('says loudly where timelines differ, and lists each goal with its status', () => {
    expect(md).toContain("- pull: **different from ring's for 1 readers**, the same for 199, 5,000 entries\n  - r7: 1 only in ring (p3 object:9), 0 only in pull");
    expect(md).toContain('- **not checked**: hybrid does less total work than ring (all push): hybrid was skipped: the deployment did not start');
    expect(md.match(/^- \*\*(met|not met|not checked)\*\*/gm)).toHaveLength(4);
  });
});

/** One row of the soak: what was measured over one interval. */
export interface SoakRow {
  atSeconds: number;
  requests: number;
  errors: number;
  p50Ms: number;
  p99Ms: number;
  healthzMs: number;
  rssMb: number;
  heapAfterGcMb: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  /** Events in the log at the end of the interval. */
  logEvents: number;
}

export interface GrowthVerdict {
  grew: boolean;
  /** Mean heap after GC in the first and the last third of the run (MB). */
  firstThirdMb: number;
  lastThirdMb: number;
  growthPercent: number;
  /** Mean p99 latency in the first and last third (ms). */
  firstThirdP99Ms: number;
  lastThirdP99Ms: number;
  /**
   * Heap after GC gained per event the log gained between the thirds' means (bytes): what
   * the memory stores keep per event (each activity stream's revision, say), to tell a
   * leak from what the log's growth explains.
   */
  retainedBytesPerEvent: number;
  reason: string;
}

const mean = (values: number[]) => values.reduce((sum, v) => sum + v, 0) / Math.max(1, values.length);

/**
 * Growth, as the soak fails on it: the heap after a full collection, averaged over the last
 * third of the rows, more than `maxGrowthPercent` above its average over the first third
 * (the workload keeps what the server must retain bounded: each producer's live posts and
 * each timeline's cap). Too few rows to have thirds is no verdict of growth.
 */
export function growthVerdict(rows: readonly SoakRow[], maxGrowthPercent: number): GrowthVerdict {
  const third = Math.floor(rows.length / 3);
  if (third === 0) {
    return { grew: false, firstThirdMb: NaN, lastThirdMb: NaN, growthPercent: NaN, firstThirdP99Ms: NaN, lastThirdP99Ms: NaN, retainedBytesPerEvent: NaN, reason: `${rows.length} rows: too few for thirds, no verdict` };
  }
  const first = rows.slice(0, third);
  const last = rows.slice(rows.length - third);
  const firstThirdMb = mean(first.map((r) => r.heapAfterGcMb));
  const lastThirdMb = mean(last.map((r) => r.heapAfterGcMb));
  const growthPercent = ((lastThirdMb - firstThirdMb) / firstThirdMb) * 100;
  const grew = growthPercent > maxGrowthPercent;
  const events = mean(last.map((r) => r.logEvents)) - mean(first.map((r) => r.logEvents));
  const retainedBytesPerEvent = events > 0 ? ((lastThirdMb - firstThirdMb) * 1e6) / events : NaN;
  return {
    grew,
    firstThirdMb,
    lastThirdMb,
    growthPercent,
    firstThirdP99Ms: mean(first.map((r) => r.p99Ms)),
    lastThirdP99Ms: mean(last.map((r) => r.p99Ms)),
    retainedBytesPerEvent,
    reason: `heap after GC ${firstThirdMb.toFixed(1)} MB in the first third, ${lastThirdMb.toFixed(1)} MB in the last: ${growthPercent >= 0 ? '+' : ''}${growthPercent.toFixed(1)}% (${grew ? 'above' : 'within'} the ${maxGrowthPercent}% allowed), ${Number.isFinite(retainedBytesPerEvent) ? `${retainedBytesPerEvent.toFixed(0)} B` : 'nothing'} more per event the log gained`,
  };
}

import * as hdr from 'hdr-histogram-js';

/** p50 / p95 / p99 / max in milliseconds, with the count and mean behind them. */
export interface LatencySummary {
  count: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** Latencies of a run, however they were measured. */
export interface LatencyRecord {
  readonly count: number;
  summary(): LatencySummary;
  /** Values (ms) whose distribution is that of the run, for the charts. */
  samples(): number[];
}

/**
 * Latencies recorded into an HDR histogram at microsecond resolution, so that percentiles
 * stay exact to three significant digits without keeping every sample.
 */
export class Latencies implements LatencyRecord {
  private readonly histogram = hdr.build({ lowestDiscernibleValue: 1, highestTrackableValue: 600_000_000, numberOfSignificantValueDigits: 3 });
  /** A bounded sample of raw values, for the distribution charts. */
  private readonly sample: number[] = [];

  recordMs(ms: number): void {
    const micros = Math.max(1, Math.round(ms * 1000));
    this.histogram.recordValue(micros);
    if (this.sample.length < 20_000) this.sample.push(ms);
    else {
      const slot = Math.floor(Math.random() * this.histogram.totalCount);
      if (slot < this.sample.length) this.sample[slot] = ms;
    }
  }

  get count(): number {
    return this.histogram.totalCount;
  }

  summary(): LatencySummary {
    const ms = (micros: number) => Math.round(micros) / 1000;
    const max = this.histogram.maxValue;
    // A percentile is reported as the top of its bucket, which can pass the exact maximum.
    const at = (percentile: number) => ms(Math.min(max, this.histogram.getValueAtPercentile(percentile)));
    return { count: this.histogram.totalCount, mean: ms(this.histogram.mean), p50: at(50), p95: at(95), p99: at(99), max: ms(max) };
  }

  samples(): number[] {
    return [...this.sample];
  }
}

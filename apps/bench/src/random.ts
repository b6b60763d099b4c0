/**
 * Seeded randomness: the same seed gives the same workload, so that two runs, or two
 * machines, measure the same thing.
 */
export type Random = () => number;

/** mulberry32: small, fast, and good enough to shape a workload. */
export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Draws ranks 0..n-1 with probability proportional to 1 / (rank + 1)^s: rank 0 is the
 * most popular. Inverse CDF over precomputed cumulative weights.
 */
export class Zipf {
  private readonly cumulative: Float64Array;

  constructor(
    readonly n: number,
    readonly s: number,
  ) {
    this.cumulative = new Float64Array(n);
    let sum = 0;
    for (let rank = 0; rank < n; rank++) {
      sum += 1 / Math.pow(rank + 1, s);
      this.cumulative[rank] = sum;
    }
  }

  /** Probability of a rank. */
  share(rank: number): number {
    const previous = rank === 0 ? 0 : this.cumulative[rank - 1]!;
    return (this.cumulative[rank]! - previous) / this.cumulative[this.n - 1]!;
  }

  draw(random: Random): number {
    const target = random() * this.cumulative[this.n - 1]!;
    let lo = 0;
    let hi = this.n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

/** A random permutation of 0..n-1 (Fisher–Yates). */
export function shuffled(n: number, random: Random): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const swap = order[i]!;
    order[i] = order[j]!;
    order[j] = swap;
  }
  return order;
}

import { profiles } from './profiles.js';
import { seededRandom, Zipf } from './random.js';
import { Workload } from './workload.js';

const profile = { ...profiles.small, readers: 2_000, producers: 400 };

describe('Workload', () => {
  it('is the same for the same seed and different for another', () => {
    const a = new Workload(profile, 7);
    const b = new Workload(profile, 7);
    const c = new Workload(profile, 8);
    expect(b.edges).toEqual(a.edges);
    expect(Array.from({ length: 50 }, () => b.nextPoster())).toEqual(Array.from({ length: 50 }, () => a.nextPoster()));
    expect(c.edges).not.toEqual(a.edges);
  });

  it('gives follower counts a heavy tail: a handful for most, a large share for the top producers', () => {
    const summary = new Workload(profile, 1).followerCountSummary();
    expect(summary.p50).toBeLessThan(15);
    expect(summary.max).toBeGreaterThan(20 * Math.max(1, summary.p50));
    expect(summary.max).toBeGreaterThan(profile.readers / 4);
  });

  it('never follows the same producer twice from one reader', () => {
    const workload = new Workload(profile, 3);
    expect(new Set(workload.edges.map(([r, p]) => `${r}/${p}`)).size).toBe(workload.edges.length);
  });

  it('leaves the never-reading share of readers out of the reads', () => {
    const workload = new Workload(profile, 4);
    const readers = new Set(Array.from({ length: 20_000 }, () => workload.nextReader()));
    expect(readers.size).toBeLessThanOrEqual(Math.round(profile.readers * (1 - profile.neverReadShare)));
  });
});

describe('Zipf', () => {
  it('draws rank 0 about as often as its share says', () => {
    const zipf = new Zipf(100, 1);
    const random = seededRandom(9);
    let zeros = 0;
    for (let i = 0; i < 50_000; i++) if (zipf.draw(random) === 0) zeros++;
    expect(zeros / 50_000).toBeCloseTo(zipf.share(0), 1);
    expect(zipf.share(0)).toBeGreaterThan(zipf.share(1));
  });
});

import { createHash } from 'node:crypto';
import { profiles } from './profiles.js';
import { seededRandom, Zipf } from './random.js';
import { drawPosts, Workload } from './workload.js';

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

describe('Workload of the existing profiles', () => {
  // Results of earlier runs stay comparable: these are the draws of seed 42 before celebrities existed.
  it.each([
    ['small', 19_821, '6f26b4739bcc6e70', [451, 598, 520, 302, 147, 485, 228, 409, 348, 263], [2663, 551, 1238, 142, 74, 2675, 867, 2515, 224, 2911]],
    ['medium', 193_956, '579869848c2afc56', [672, 517, 1690, 2813, 4943, 3038, 946, 1827, 4002, 3237], [26677, 16028, 21833, 4370, 10736, 23805, 14856, 5746, 20440, 16120]],
  ] as const)('draws the same graph, posters and readers for %s as it always did', (name, edges, digest, posters, readers) => {
    const workload = new Workload(profiles[name], 42);
    expect(workload.edges).toHaveLength(edges);
    expect(createHash('sha256').update(workload.edges.map((edge) => edge.join(',')).join(';')).digest('hex').slice(0, 16)).toBe(digest);
    expect(drawPosts(workload, 10).map((post) => post.producer)).toEqual(posters);
    expect(Array.from({ length: 10 }, () => workload.nextReader())).toEqual(readers);
  });
});

describe('Workload of the celebrity profile', () => {
  const profile = profiles.celebrity;
  const workload = new Workload(profile, 42);
  const celebrity = (producer: number) => producer < profile.celebrities;

  it('has each celebrity followed by about its share of all readers, and the rest a power-law graph', () => {
    for (let producer = 0; producer < profile.celebrities; producer++) {
      expect(workload.followersOf[producer]!.length / profile.readers).toBeCloseTo(profile.celebrityFollowShare, 1);
    }
    const celebrities = workload.followersOf.slice(0, profile.celebrities).map((followers) => followers.length);
    const others = workload.followersOf.slice(profile.celebrities).map((followers) => followers.length);
    // Every celebrity has more followers than anyone else; most others have a handful, the most popular thousands.
    expect(Math.max(...others)).toBeLessThan(Math.min(...celebrities));
    expect(others.sort((a, b) => a - b)[Math.floor(others.length / 2)]).toBeLessThan(15);
    expect(others[others.length - 1]).toBeGreaterThan(20 * others[Math.floor(others.length / 2)]!);
  });

  it('gives the few celebrities about half of all follow edges', () => {
    const theirs = workload.edges.filter(([, producer]) => celebrity(producer)).length;
    expect(profile.celebrities).toBeLessThanOrEqual(10);
    expect(theirs / workload.edges.length).toBeGreaterThan(0.5);
    expect(theirs / workload.edges.length).toBeLessThan(0.65);
  });

  it('never follows the same producer twice from one reader', () => {
    expect(new Set(workload.edges.map(([r, p]) => `${r}/${p}`)).size).toBe(workload.edges.length);
  });

  it('has the celebrities make their share of posts, each about as many', () => {
    const posts = drawPosts(new Workload(profile, 5), 40_000);
    const byCelebrity = new Array<number>(profile.celebrities).fill(0);
    for (const { producer } of posts) if (celebrity(producer)) byCelebrity[producer]!++;
    const theirs = byCelebrity.reduce((a, b) => a + b, 0);
    expect(theirs / posts.length).toBeCloseTo(profile.celebrityPostShare, 2);
    for (const count of byCelebrity) expect(count / theirs).toBeCloseTo(1 / profile.celebrities, 1);
    expect(posts.some(({ producer }) => !celebrity(producer))).toBe(true);
  });

  it('leaves most readers idle', () => {
    const readers = new Set(Array.from({ length: 20_000 }, () => workload.nextReader()));
    expect(readers.size).toBeLessThanOrEqual(Math.round(profile.readers * (1 - profile.neverReadShare)));
    expect(profile.neverReadShare).toBeGreaterThanOrEqual(0.9);
  });

  it('refuses a profile with no producer beside its celebrities', () => {
    expect(() => new Workload({ ...profile, producers: profile.celebrities }, 1)).toThrow('8 celebrities leave no other producer');
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

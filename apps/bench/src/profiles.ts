/** The sizes of a benchmark run. */
export interface Profile {
  name: 'small' | 'medium' | 'large' | 'celebrity';
  readers: number;
  producers: number;
  /** Mean follows per reader in the power-law graph (celebrities apart); each reader's count is drawn from an exponential around it. */
  meanFollows: number;
  /**
   * Producers outside the power-law graph that most readers follow (the first ones, `p0`
   * up): the accounts whose every post, pushed, is written into most timelines.
   */
  celebrities: number;
  /** Chance that a reader follows each celebrity. */
  celebrityFollowShare: number;
  /** Share of all posts made by the celebrities, spread evenly among them. */
  celebrityPostShare: number;
  /** Zipf exponent of producer popularity: who gets followed. */
  popularitySkew: number;
  /** Zipf exponent of producer post rates and of reader read rates. */
  activitySkew: number;
  /** Share of readers that never read. */
  neverReadShare: number;
  /** Posts made before the measured mixed phase, so that timelines have history. */
  warmPosts: number;
  /** Length of the mixed read/write phase. */
  mixedSeconds: number;
  /** Readers in the mixed phase: connections (clients) that each read timelines one request at a time. */
  mixedReaders: number;
  /** Posts in flight at most in the mixed phase: connections (clients) that each post one request at a time. */
  mixedPosters: number;
  /** Posts per second in the mixed phase, paced, the same on every system compared: reads are measured under this write load. */
  mixedPostsPerSecond: number;
  /** Connections (clients) of the warm-up posts, which measure fan-out. */
  connections: number;
  /** Post-to-visible measurements. */
  probes: number;
  /** Timeline reads of each kind in the in-process comparison. */
  inProcessReads: number;
  /** Timeline entries delivered by each side of the fan-out comparison. */
  baselineDeliveries: number;
}

const base = { baselineDeliveries: 30_000, celebrities: 0, celebrityFollowShare: 0, celebrityPostShare: 0, popularitySkew: 1.2, activitySkew: 1.0, neverReadShare: 0.3, mixedReaders: 16, mixedPosters: 8, mixedPostsPerSecond: 500, connections: 32 };

export const profiles: Record<Profile['name'], Profile> = {
  small: { ...base, name: 'small', mixedPostsPerSecond: 200, readers: 3_000, producers: 600, meanFollows: 7, warmPosts: 4_000, mixedSeconds: 15, probes: 40, inProcessReads: 500 },
  medium: { ...base, name: 'medium', readers: 30_000, producers: 5_000, meanFollows: 7, warmPosts: 40_000, mixedSeconds: 60, probes: 100, inProcessReads: 2_000, connections: 64 },
  large: { ...base, name: 'large', readers: 250_000, producers: 20_000, meanFollows: 4.5, warmPosts: 150_000, mixedSeconds: 120, probes: 150, inProcessReads: 2_000, connections: 64 },
  /**
   * Where pushing everything costs most: 8 celebrities with about 8,000 followers each (59% of
   * the 109,054 follow edges of seed 42) making a tenth of all posts, and 90% of readers who
   * never read. All push writes about 900 entries per post (3.7 million for the warm-up's
   * posts), nearly all into timelines nobody reads. A run takes about as long as `small`'s.
   */
  celebrity: {
    ...base,
    name: 'celebrity',
    readers: 10_000,
    producers: 1_000,
    meanFollows: 5,
    celebrities: 8,
    celebrityFollowShare: 0.8,
    celebrityPostShare: 0.1,
    neverReadShare: 0.9,
    warmPosts: 4_000,
    mixedSeconds: 15,
    mixedPostsPerSecond: 200,
    probes: 40,
    inProcessReads: 500,
  },
};

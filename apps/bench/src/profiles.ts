/** The sizes of a benchmark run. */
export interface Profile {
  name: 'small' | 'medium' | 'large';
  readers: number;
  producers: number;
  /** Mean follows per reader; each reader's count is drawn from an exponential around it. */
  meanFollows: number;
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

const base = { baselineDeliveries: 30_000, popularitySkew: 1.2, activitySkew: 1.0, neverReadShare: 0.3, mixedReaders: 16, mixedPosters: 8, mixedPostsPerSecond: 500, connections: 32 };

export const profiles: Record<Profile['name'], Profile> = {
  small: { ...base, name: 'small', mixedPostsPerSecond: 200, readers: 3_000, producers: 600, meanFollows: 7, warmPosts: 4_000, mixedSeconds: 15, probes: 40, inProcessReads: 500 },
  medium: { ...base, name: 'medium', readers: 30_000, producers: 5_000, meanFollows: 7, warmPosts: 40_000, mixedSeconds: 60, probes: 100, inProcessReads: 2_000, connections: 64 },
  large: { ...base, name: 'large', readers: 250_000, producers: 20_000, meanFollows: 4.5, warmPosts: 150_000, mixedSeconds: 120, probes: 150, inProcessReads: 2_000, connections: 64 },
};

import type { Profile } from './profiles.js';
import { seededRandom, shuffled, Zipf, type Random } from './random.js';

export type FeedName = string;

/**
 * A social graph and the draws of who posts and who reads, all from one seed. Follower
 * counts follow a power law (producer popularity is Zipf-distributed, so most producers
 * have a handful of followers and the top few a large share of all readers); post rates
 * and read rates are Zipf-skewed too, and a share of readers never reads. A profile may add
 * celebrities beside that graph: producers `0` to `celebrities - 1`, each followed by a set
 * share of all readers, making a set share of all posts.
 */
export class Workload {
  readonly readers: FeedName[];
  readonly producers: FeedName[];
  /** [reader index, producer index] pairs. */
  readonly edges: Array<[number, number]> = [];
  readonly followersOf: number[][];
  /** Producers `0` to `celebrities - 1`. */
  readonly celebrities: number;
  private readonly random: Random;
  private readonly posting: Zipf;
  private readonly postingOrder: Uint32Array;
  private readonly reading: Zipf;
  private readonly readingOrder: Uint32Array;

  constructor(
    readonly profile: Profile,
    readonly seed: number,
  ) {
    this.random = seededRandom(seed);
    this.readers = Array.from({ length: profile.readers }, (_, i) => `timeline:r${i}`);
    this.producers = Array.from({ length: profile.producers }, (_, i) => `user:p${i}`);
    this.followersOf = Array.from({ length: profile.producers }, () => []);

    // With no celebrities, every draw below is the one it was before they existed: a profile's workload stays the same.
    this.celebrities = profile.celebrities;
    const others = profile.producers - profile.celebrities;
    if (others < 1) throw new Error(`profile ${profile.name}: ${profile.celebrities} celebrities leave no other producer`);
    const popularity = new Zipf(others, profile.popularitySkew);
    const popularityOrder = shuffled(others, this.random);
    for (let reader = 0; reader < profile.readers; reader++) {
      const wanted = Math.min(others, 1 + Math.floor(-Math.log(1 - this.random()) * (profile.meanFollows - 1)));
      const chosen = new Set<number>();
      for (let attempts = 0; chosen.size < wanted && attempts < wanted * 20; attempts++) chosen.add(this.celebrities + popularityOrder[popularity.draw(this.random)]!);
      for (let celebrity = 0; celebrity < this.celebrities; celebrity++) if (this.random() < profile.celebrityFollowShare) chosen.add(celebrity);
      for (const producer of chosen) {
        this.edges.push([reader, producer]);
        this.followersOf[producer]!.push(reader);
      }
    }

    // Who posts much is independent of who is followed much.
    this.posting = new Zipf(others, profile.activitySkew);
    this.postingOrder = shuffled(others, this.random);
    const readingCount = Math.max(1, Math.round(profile.readers * (1 - profile.neverReadShare)));
    this.reading = new Zipf(readingCount, profile.activitySkew);
    this.readingOrder = shuffled(profile.readers, this.random).subarray(0, readingCount);
  }

  nextPoster(): number {
    if (this.celebrities > 0 && this.random() < this.profile.celebrityPostShare) return Math.floor(this.random() * this.celebrities);
    return this.celebrities + this.postingOrder[this.posting.draw(this.random)]!;
  }

  nextReader(): number {
    return this.readingOrder[this.reading.draw(this.random)]!;
  }

  /**
   * A post-to-visible probe: a poster drawn as posts are (retried a while when it has no
   * followers) and one of its followers to watch; undefined when no draw had followers.
   */
  nextProbe(): { producer: number; reader: number } | undefined {
    let producer = this.nextPoster();
    for (let tries = 0; this.followersOf[producer]!.length === 0 && tries < 100; tries++) producer = this.nextPoster();
    const followers = this.followersOf[producer]!;
    if (followers.length === 0) return undefined;
    return { producer, reader: followers[Math.floor(this.chance() * followers.length)]! };
  }

  /** A draw of [0, 1), from the workload's own stream. */
  chance(): number {
    return this.random();
  }

  /** The largest follower counts, for the report. */
  followerCountSummary(): { max: number; p50: number; p99: number; producersWithoutFollowers: number } {
    const counts = this.followersOf.map((f) => f.length).sort((a, b) => a - b);
    const at = (q: number) => counts[Math.min(counts.length - 1, Math.floor(q * counts.length))]!;
    return { max: counts[counts.length - 1]!, p50: at(0.5), p99: at(0.99), producersWithoutFollowers: counts.filter((c) => c === 0).length };
  }
}

/** A post as a client makes it: to its producer's feed. */
export interface PlannedPost {
  producer: number;
  object: string;
}

/** What the mixed phase's readers and posters ask for, in order (cycled if they ask for more). */
export interface MixedPlan {
  reads: number[];
  posts: PlannedPost[];
}

/** Planned reads and posts of a mixed phase, cycled when a phase makes more (medium's 60 s at 500 posts/s cycles its posts once and a half). */
const MIXED_PLAN_READS = 100_000;
const MIXED_PLAN_POSTS = 20_000;

/** The next `count` posts of the workload's sequence. */
export function drawPosts(workload: Workload, count: number): PlannedPost[] {
  return Array.from({ length: count }, () => ({ producer: workload.nextPoster(), object: `object:${Math.floor(workload.chance() * 1e9)}` }));
}

/** The mixed phase's requests, drawn once so that feedmill and the Redis baseline make the same ones. */
export function drawMixedPlan(workload: Workload): MixedPlan {
  return { reads: Array.from({ length: MIXED_PLAN_READS }, () => workload.nextReader()), posts: drawPosts(workload, MIXED_PLAN_POSTS) };
}

/** Follows per bulk import request: the most `POST /v1/follows` takes. */
export const IMPORT_BATCH = 10_000;
/** Import requests in flight, on both sides of the comparison. */
export const IMPORT_REQUESTS_IN_FLIGHT = 2;

/** The graph's edges in import batches, in order. */
export function importBatches<Edge>(edges: readonly Edge[], size = IMPORT_BATCH): Edge[][] {
  const batches: Edge[][] = [];
  for (let start = 0; start < edges.length; start += size) batches.push(edges.slice(start, start + size));
  return batches;
}

import type { EdgeBound, FeedId } from '@feedmill/contracts';
import { FollowerIndex } from '@feedmill/feed-models';
import { SnapshotCorruptError, SnapshotMismatchError, SnapshotReader, SnapshotWriter, type SnapshotState, type Snapshottable } from '@feedmill/stores';

/**
 * Fan-out's follower index as a snapshot state, so that a start reads only the log's tail
 * for it: the followers and feeds once each as strings, every feed's followers as numbers in
 * one array, which feeds have had an activity, and the bounded and kept edges (a follow's
 * `since`, a kept history's end) as columns. The index is the one fan-out holds at the
 * time ({@link current}); a restore hands fan-out a new one ({@link install}).
 */
export class FollowerIndexSnapshots implements Snapshottable {
  readonly name = 'fanout';

  /**
   * @param groups names the feed config the index keeps its followers by: a snapshot taken
   *   under another is not restored.
   */
  constructor(
    private readonly current: () => FollowerIndex,
    private readonly install: (index: FollowerIndex) => void,
    private readonly groups: string,
  ) {}

  /** The index's position: it moves with every batch fan-out delivers. */
  get appliedEvents(): number {
    return this.current().position;
  }

  takeSnapshot(): SnapshotState {
    const index = this.current();
    const { position, followerIds, targetIds, posted, followers, bounds = [] } = index.toState();
    const writer = new SnapshotWriter().strings([this.groups]).strings(followerIds).strings(targetIds).uint8s(posted);
    writer.strings(bounds.map((bound) => bound.feed)).strings(bounds.map((bound) => bound.reader)).strings(bounds.map((bound) => bound.since ?? ''));
    writer.float64s(Float64Array.from(bounds, (bound) => bound.followedAt ?? -1)).float64s(Float64Array.from(bounds, (bound) => bound.unfollowedAt ?? -1));
    writer.int32s(followers.counts).int32s(followers.members);
    return { position, payload: writer.finish() };
  }

  restoreSnapshot(snapshot: SnapshotState): void {
    const reader = new SnapshotReader(snapshot.payload);
    const [takenUnder] = reader.strings();
    if (takenUnder !== this.groups) throw new SnapshotMismatchError('it was taken under another feed config');
    const followerIds = reader.presentStrings() as FeedId[];
    const targetIds = reader.presentStrings() as FeedId[];
    const posted = reader.uint8s();
    const boundFeeds = reader.presentStrings() as FeedId[];
    const boundReaders = reader.presentStrings() as FeedId[];
    const sinces = reader.presentStrings();
    const followedAts = reader.float64s();
    const unfollowedAts = reader.float64s();
    const counts = reader.int32s();
    const members = reader.int32s();
    reader.end();
    const count = boundFeeds.length;
    if (boundReaders.length !== count || sinces.length !== count || followedAts.length !== count || unfollowedAts.length !== count) {
      throw new SnapshotCorruptError(`bounded edges of ${count} feeds, ${boundReaders.length} readers, ${sinces.length} bounds, ${followedAts.length} and ${unfollowedAts.length} positions`);
    }
    const bounds = boundFeeds.map((feed, i) => {
      const bound: EdgeBound & { reader: FeedId } = { feed, reader: boundReaders[i]! };
      if (sinces[i] !== '') bound.since = sinces[i]!;
      if (followedAts[i]! >= 0) bound.followedAt = followedAts[i]!;
      if (unfollowedAts[i]! >= 0) bound.unfollowedAt = unfollowedAts[i]!;
      return bound;
    });
    let index: FollowerIndex;
    try {
      index = FollowerIndex.fromState({ position: snapshot.position, followerIds, targetIds, posted, followers: { counts, members }, bounds }, this.current().keeps);
    } catch (error) {
      throw new SnapshotCorruptError(`the follower index does not hold together: ${(error as Error).message}`);
    }
    this.install(index);
  }
}

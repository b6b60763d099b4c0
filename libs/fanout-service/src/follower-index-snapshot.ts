import type { FeedId } from '@feedmill/contracts';
import { FollowerIndex } from '@feedmill/feed-models';
import { SnapshotCorruptError, SnapshotMismatchError, SnapshotReader, SnapshotWriter, type SnapshotState, type Snapshottable } from '@feedmill/stores';

/**
 * Fan-out's follower index as a snapshot state, so that a start reads only the log's tail
 * for it: the followers and feeds once each as strings, every feed's followers as numbers in
 * one array, and which feeds have had an activity. The index is the one fan-out holds at the
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
    const { position, followerIds, targetIds, posted, followers } = index.toState();
    const writer = new SnapshotWriter().strings([this.groups]).strings(followerIds).strings(targetIds).uint8s(posted).int32s(followers.counts).int32s(followers.members);
    return { position, payload: writer.finish() };
  }

  restoreSnapshot(snapshot: SnapshotState): void {
    const reader = new SnapshotReader(snapshot.payload);
    const [takenUnder] = reader.strings();
    if (takenUnder !== this.groups) throw new SnapshotMismatchError('it was taken under another feed config');
    const followerIds = reader.presentStrings() as FeedId[];
    const targetIds = reader.presentStrings() as FeedId[];
    const posted = reader.uint8s();
    const counts = reader.int32s();
    const members = reader.int32s();
    reader.end();
    let index: FollowerIndex;
    try {
      index = FollowerIndex.fromState({ position: snapshot.position, followerIds, targetIds, posted, followers: { counts, members } }, this.current().keeps);
    } catch (error) {
      throw new SnapshotCorruptError(`the follower index does not hold together: ${(error as Error).message}`);
    }
    this.install(index);
  }
}

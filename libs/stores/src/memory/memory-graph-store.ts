import { upcastEvent, type FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { GraphStore } from '../ports.js';
import { ProjectionPosition } from '../projection-position.js';
import { StreamRevisions } from '../stream-revisions.js';
import { hasSorted, insertSorted, pageAfter, removeSorted } from './sorted-strings.js';

/** Follow edges both ways, each side kept sorted for stable paging. */
export class MemoryGraphStore implements GraphStore {
  readonly name = 'graph';
  private readonly followersOf = new Map<FeedId, FeedId[]>();
  private readonly followingOf = new Map<FeedId, FeedId[]>();
  private readonly revisions = new StreamRevisions();
  private readonly applied = new ProjectionPosition();

  async position(): Promise<number> {
    return this.applied.value;
  }

  async reach(position: number | undefined): Promise<void> {
    await this.applied.reach(position);
  }

  async apply(events: readonly RecordedEvent[]): Promise<void> {
    for (const event of events) this.applyOne(event);
    const last = events[events.length - 1];
    if (last) this.applied.advanceTo(last.position);
  }

  async applyOwn(event: RecordedEvent): Promise<void> {
    this.applyOne(event);
  }

  private applyOne(recorded: RecordedEvent): void {
    if (recorded.type !== 'FeedFollowed' && recorded.type !== 'FeedUnfollowed') return;
    const event = upcastEvent(recorded.type, recorded.data, recorded.metadata['v'] as number | undefined);
    if (!event || (event.type !== 'FeedFollowed' && event.type !== 'FeedUnfollowed')) return;
    if (!this.revisions.claim(recorded)) return;
    const { follower, target } = event.data;
    if (event.type === 'FeedFollowed') {
      insertSorted(listOf(this.followersOf, target), follower);
      insertSorted(listOf(this.followingOf, follower), target);
    } else {
      removeSorted(listOf(this.followersOf, target), follower);
      removeSorted(listOf(this.followingOf, follower), target);
    }
  }

  async streamRevision(stream: string): Promise<number> {
    return this.revisions.of(stream);
  }

  async isFollowing(follower: FeedId, target: FeedId): Promise<boolean> {
    return hasSorted(this.followingOf.get(follower), target);
  }

  async followers(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return pageAfter(this.followersOf.get(feed), after, limit) as FeedId[];
  }

  async following(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return pageAfter(this.followingOf.get(feed), after, limit) as FeedId[];
  }

  async counts(feed: FeedId): Promise<{ followers: number; following: number }> {
    return { followers: this.followersOf.get(feed)?.length ?? 0, following: this.followingOf.get(feed)?.length ?? 0 };
  }
}

function listOf(map: Map<FeedId, FeedId[]>, key: FeedId): FeedId[] {
  let list = map.get(key);
  if (!list) map.set(key, (list = []));
  return list;
}

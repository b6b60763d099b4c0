import { upcastEvent, type FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { GraphStore } from '../ports.js';
import { MemoryProjection } from './memory-projection.js';
import { hasSorted, insertSorted, pageAfter, removeSorted } from './sorted-strings.js';

/** Follow edges both ways, each side kept sorted for stable paging. */
export class MemoryGraphStore extends MemoryProjection implements GraphStore {
  readonly name = 'graph';
  protected readonly eventTypes = new Set(['FeedFollowed', 'FeedUnfollowed']);
  private readonly followersOf = new Map<FeedId, FeedId[]>();
  private readonly followingOf = new Map<FeedId, FeedId[]>();

  protected evolve(recorded: RecordedEvent): void {
    const event = upcastEvent(recorded.type, recorded.data, recorded.metadata['v'] as number | undefined);
    if (event?.type !== 'FeedFollowed' && event?.type !== 'FeedUnfollowed') return;
    const { follower, target } = event.data;
    if (event.type === 'FeedFollowed') {
      insertSorted(listOf(this.followersOf, target), follower);
      insertSorted(listOf(this.followingOf, follower), target);
    } else {
      removeSorted(listOf(this.followersOf, target), follower);
      removeSorted(listOf(this.followingOf, follower), target);
    }
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

import type { DeliverRequest, FeedId, PositionedEvent, TimelineDelivery } from '@feedmill/contracts';
import { chunkDeliveries } from './delivery-chunks.js';
import { authorOf } from './delivery-plan.js';

/** Events planned and delivered together, and the log position the target stands at once they are in. */
export interface FanOutSegment {
  events: PositionedEvent[];
  to: number;
}

/**
 * Cuts a batch's events (ending at log position `to`) so that each post, removal, bump or
 * update by a feed with more than `minReaders` followers stands alone and ends at its own
 * position (unless it is an item of an import, which stays with the import's other items). Its deliveries can then be applied as jobs in any order while the target stands
 * just before it, and the target moves past it only once they are all in: nothing after it
 * in the log (an unfollow, a removal) can be overtaken by one of its jobs.
 *
 * Counts are taken from `followerCount` as the batch starts, ignoring the batch's own
 * follows: they only choose where to cut, and planning each segment on its own delivers
 * what planning the whole batch would, wherever the cuts fall.
 */
export function segmentAroundLargeFanOuts(
  events: readonly PositionedEvent[],
  to: number,
  followerCount: (feed: FeedId) => number,
  minReaders: number,
): FanOutSegment[] {
  const segments: FanOutSegment[] = [];
  let current: PositionedEvent[] = [];
  for (let index = 0; index < events.length; index++) {
    const positioned = events[index]!;
    // The items of an import share its position, and are never cut apart: a cut ends at a
    // position, and the items after it would end where the target already stands.
    const sharesPosition = events[index - 1]?.position === positioned.position || events[index + 1]?.position === positioned.position;
    const author = authorOf(positioned.event);
    if (sharesPosition || author === undefined || followerCount(author) <= minReaders) {
      current.push(positioned);
      continue;
    }
    if (current.length > 0) segments.push({ events: current, to: positioned.position - 1 });
    segments.push({ events: [positioned], to: positioned.position });
    current = [];
  }
  // The rest, or nothing but the batch's end (events that are not feed events still move the target).
  if (current.length > 0 || segments.length === 0 || segments[segments.length - 1]!.to < to) segments.push({ events: current, to });
  return segments;
}

/** A post, removal, bump or update: a delivery of one change to many readers. */
export type ReadersDelivery = Extract<TimelineDelivery, { readers: readonly FeedId[] }>;

/** Whether a delivery goes to more than `minReaders` readers, and so is worth sharing out as jobs. */
export function isLargeDelivery(delivery: TimelineDelivery, minReaders: number): delivery is ReadersDelivery {
  return 'readers' in delivery && delivery.readers.length > minReaders;
}

/**
 * A delivery's readers in pieces, each a request as large as fan-out sends itself
 * ({@link chunkDeliveries}: at most `MAX_READERS_PER_DELIVERY` readers a piece, within
 * the byte budget of a request), and each fenced: timeline applies it only while it stands at
 * `fence`, and it leaves the position there. Applied in any order, and any number of times (a
 * timeline ignores an entry it holds, and a removal of what it does not hold), the pieces
 * make the whole delivery; once timeline has moved on, a late one is refused.
 */
export function deliveryJobs(delivery: ReadersDelivery, fence: number): DeliverRequest[] {
  return chunkDeliveries([delivery]).map((deliveries) => ({ after: fence, position: fence, deliveries }));
}

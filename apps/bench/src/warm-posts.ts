import { sortKeyOf, type PositionedEvent } from '@feedmill/contracts';

/** A post as the baseline replays it: whose feed, and what the client sent. */
export interface ReplayedPost {
  producer: string;
  actor: string;
  verb: string;
  object: string;
}

/**
 * The posts feedmill accepted at log positions `after` < position <= `upTo`, in the order
 * its timelines show them (time, then id).
 *
 * The load generator sends the same sequence of posts to both systems, but over many
 * connections at once, so each system receives them in its own interleaving and neighbours
 * can swap places. Replaying feedmill's order to the baseline makes both hold the same
 * timelines, entry for entry, so that they can be compared exactly.
 */
export function postsInTimelineOrder(events: readonly PositionedEvent[], after: number, upTo: number): ReplayedPost[] {
  const added = events.flatMap(({ position, event }) => (event.type === 'ActivityAdded' && position > after && position <= upTo ? [event.data.activity] : []));
  return added
    .map((activity) => ({ key: sortKeyOf(activity), activity }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
    .map(({ activity }) => ({ producer: activity.feed.slice(activity.feed.indexOf(':') + 1), actor: activity.actor, verb: activity.verb, object: activity.object }));
}

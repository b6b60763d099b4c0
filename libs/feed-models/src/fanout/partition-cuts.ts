import type { PositionedEvent } from '@feedmill/contracts';
import type { FanOutSegment } from './large-fan-outs.js';

/**
 * Cuts a batch's events (log positions `from` exclusive to `to` inclusive) wherever a timeline
 * partition stands inside it, so that every partition stands at the start of each segment it
 * takes part in, or past its end. A partition behind the others (one taken over empty, or
 * restored from an older snapshot) then gets, segment by segment, what it misses, fenced at
 * its own position, while those already past a segment are left out of it. Without a
 * partition inside the batch, the batch is one segment.
 */
export function cutAtPartitionPositions(events: readonly PositionedEvent[], from: number, to: number, positions: readonly number[]): FanOutSegment[] {
  const cuts = [...new Set(positions.filter((position) => position > from && position < to))].sort((a, b) => a - b);
  cuts.push(to);
  const segments: FanOutSegment[] = [];
  let next = 0;
  for (const end of cuts) {
    const start = next;
    while (next < events.length && events[next]!.position <= end) next++;
    segments.push({ events: events.slice(start, next), to: end });
  }
  return segments;
}

import type { FeedEvent } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';

/** Records events as a log would: positions across streams, revisions within each. */
export function recordEvents(events: Array<[string, FeedEvent]>, firstPosition = 1): RecordedEvent[] {
  const revisions = new Map<string, number>();
  return events.map(([stream, event], index) => {
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    return { stream, revision, position: firstPosition + index, type: event.type, data: event.data, metadata: { v: 1 }, recordedAt: 't' };
  });
}

import { feedEvents, type FeedLogEvent } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';

/** Records events as a log would: positions across streams, revisions within each. */
export function recordEvents(events: Array<[string, FeedLogEvent]>, firstPosition = 1): RecordedEvent[] {
  const revisions = new Map<string, number>();
  return events.map(([stream, event], index) => {
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    return { stream, revision, position: firstPosition + index, ...feedEvents.encode(event), recordedAt: 't' };
  });
}

/** The event a record holds, as its writer decided it: what `applyOwn` is handed with the record. */
export function decidedOf(record: RecordedEvent): FeedLogEvent {
  return feedEvents.decode(record)!;
}

export { activityAt } from '@feedmill/feed-models/testing';

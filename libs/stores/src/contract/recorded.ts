import { feedEvents, type Activity, type FeedLogEvent, type FeedId } from '@feedmill/contracts';
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

/** An activity posted at a second of 2026-01-01 (UTC). */
export function activityAt(id: string, feed: FeedId, second: number, extra: Partial<Activity> = {}): Activity {
  return { id, feed, actor: 'a', verb: 'post', object: 'o', time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(), ...extra };
}

import { decodeFeedEvents, type PositionedEvent } from '@feedmill/contracts';
import type { EventLog, RecordedEvent } from '@feedmill/event-log';
import { followerIndexEventTypes, type FollowerIndex } from '@feedmill/feed-models';

/** Read in batches larger than fan-out's: only what the index takes in is decoded. */
const READ_BATCH = 4096;


/**
 * Brings `index` from its position to `to` by reading the log's follows, unfollows, added
 * activities and erasures in between ({@link followerIndexEventTypes}), as the live fan-out
 * takes them in. The log is the index's only source, as for every projection: nothing else has to
 * be kept in step with timeline's position, which is where fan-out resumes. Stops early,
 * leaving the index where it got to, once `signal` aborts.
 *
 * An event that does not decode is left out: the live fan-out dead-letters it and applies
 * nothing of it either.
 */
export async function advanceFromLog(log: EventLog, index: FollowerIndex, to: number, signal: AbortSignal): Promise<void> {
  if (index.position >= to || signal.aborted) return;
  let reached!: () => void;
  const done = new Promise<void>((resolve) => (reached = resolve));
  const subscription = log.subscribeToAll({
    from: index.position,
    maxBatch: READ_BATCH,
    onEvents: (records) => {
      const last = records[records.length - 1]!.position;
      index.advance(decodeIndexed(records, to), Math.min(last, to));
      if (last >= to) reached();
    },
  });
  let abort!: () => void;
  const aborted = new Promise<void>((resolve) => signal.addEventListener('abort', (abort = () => resolve()), { once: true }));
  try {
    // Caught up also settles it: every event up to `to` existed when the subscription began.
    await Promise.race([done, subscription.caughtUp, aborted]);
  } finally {
    signal.removeEventListener('abort', abort);
    await subscription.stop();
  }
  // Caught up before an event at `to` itself (a log with gaps in its positions).
  if (!signal.aborted) index.advance([], to);
}

function decodeIndexed(records: readonly RecordedEvent[], to: number): PositionedEvent[] {
  const indexed: PositionedEvent[] = [];
  for (const record of records) {
    if (record.position > to || !followerIndexEventTypes.has(record.type)) continue;
    try {
      indexed.push(...decodeFeedEvents([record]));
    } catch {
      // Malformed, or of a version newer than this build: see above.
    }
  }
  return indexed;
}

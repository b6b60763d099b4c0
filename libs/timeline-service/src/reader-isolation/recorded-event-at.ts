import type { EventLog, RecordedEvent } from '@feedmill/event-log';

/**
 * The event the log holds at `position`, or undefined when it holds none there. The log is
 * read from that position, one event, then left: a rare lookup (naming a dead letter's
 * event), not one for a hot path.
 */
export async function recordedEventAt(log: EventLog, position: number): Promise<RecordedEvent | undefined> {
  let found: RecordedEvent | undefined;
  let arrived!: () => void;
  const first = new Promise<void>((resolve) => (arrived = resolve));
  const subscription = log.subscribeToAll({
    from: Math.max(0, position - 1),
    maxBatch: 1,
    onEvents: (events) => {
      found ??= events[0];
      arrived();
    },
  });
  try {
    // A log that ends before `position` is caught up without a first event.
    await Promise.race([first, subscription.caughtUp]);
  } finally {
    await subscription.stop();
  }
  return found?.position === position ? found : undefined;
}

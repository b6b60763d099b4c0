import type { EventLog, RecordedEvent } from '@feedmill/event-log';
import { FeedClient } from './feed-client.js';
import { waitFor } from './wait-for.js';

/** Every event in a log, read through its subscription until caught up. */
export async function readAllEvents(log: EventLog): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  const subscription = log.subscribeToAll({ onEvents: (batch) => void events.push(...batch) });
  await subscription.caughtUp;
  await subscription.stop();
  return events;
}

/** Waits until fan-out and graph have applied everything content has: timelines are settled. */
export async function waitUntilSettled(api: FeedClient, timeoutMs = 30_000, intervalMs = 25): Promise<number> {
  return waitFor(
    async () => {
      const { ready, services } = await api.api.readiness();
      if (!ready) return undefined;
      const positions = new Map(services.map((s) => [s.service, s.position]));
      const head = positions.get('content')!;
      return positions.get('fanout') === head && positions.get('graph') === head ? head : undefined;
    },
    { timeoutMs, intervalMs, what: 'fan-out to catch up with the log' },
  );
}

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
      // HTTP workers' copies of the timelines (HTTP_WORKER_READS=copy) have what fan-out delivered.
      const copiesBehind = services.find((s) => s.service === 'timeline')?.counters?.['replicasBehind'] ?? 0;
      return copiesBehind === 0 && positions.get('fanout') === head && positions.get('graph') === head ? head : undefined;
    },
    { timeoutMs, intervalMs, what: 'fan-out to catch up with the log' },
  );
}

/**
 * Waits until every service is ready and stands at the same log position, timeline
 * included: after a timeline process restarted empty, fan-out's own position is already at
 * the head while it replays the log into the new one.
 */
export async function waitUntilEveryServiceCaughtUp(api: FeedClient, timeoutMs = 60_000): Promise<number> {
  return waitFor(
    async () => {
      const { status, body } = await api.call<{ services: Array<{ position: number; ready?: boolean }> }>('GET', '/readyz').catch(() => ({ status: 0, body: undefined }));
      if (status !== 200 || !body) return undefined;
      const positions = new Set(body.services.map((s) => s.position));
      return positions.size === 1 && body.services.every((s) => s.ready !== false) ? [...positions][0] : undefined;
    },
    { timeoutMs, intervalMs: 100, what: 'every service to catch up with the log' },
  );
}

import type { StreamEvent } from '@feedmill/contracts';

/** One event as Server-Sent Events write it: its id (for `Last-Event-ID`), its type, its data as one line of JSON. */
export function sseFrame(event: StreamEvent): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`;
}

/** A comment line: clients ignore it, proxies see traffic and keep the connection open. */
export const SSE_HEARTBEAT = ': heartbeat\n\n';

/** How long a client waits before it reconnects (EventSource's `retry`). */
export const SSE_RETRY = 'retry: 2000\n\n';

/** The sequence number of an event id `<epoch>-<seq>`, with its epoch. */
export function parseEventId(id: string): { epoch: string; seq: number } | undefined {
  const dash = id.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const seq = Number(id.slice(dash + 1));
  return Number.isInteger(seq) ? { epoch: id.slice(0, dash), seq } : undefined;
}

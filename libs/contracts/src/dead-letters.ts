import { z } from 'zod';
import { eventCodec, type StoredEvent } from './event-codec.js';

/**
 * What fan-out could not deliver, kept in the event log so that it survives restarts: a log
 * event that kept failing, with the reason, until it is replayed. Fan-out's own operational
 * events: no projection of feeds reads them.
 */
export const DEAD_LETTER_STREAM = 'deadletters-fanout';

const deadLetteredData = z.strictObject({
  /** The log position, stream and revision of the event that could not be delivered. */
  position: z.number().int().min(0),
  stream: z.string(),
  revision: z.number().int().min(0),
  type: z.string(),
  reason: z.string(),
  attempts: z.number().int().min(1),
  time: z.string(),
});

export const deadLetterEvents = eventCodec({
  DeliveryDeadLettered: { schema: deadLetteredData },
  DeadLetterReplayed: { schema: z.strictObject({ position: z.number().int().min(0), time: z.string() }) },
});
export type DeadLetterEvent = NonNullable<ReturnType<typeof deadLetterEvents.decode>>;
export type DeadLetter = z.output<typeof deadLetteredData>;

/** The dead letters not replayed yet, oldest first, from the dead-letter stream's events. */
export function openDeadLetters(events: readonly StoredEvent[]): DeadLetter[] {
  const open = new Map<number, DeadLetter>();
  for (const recorded of events) {
    const event = deadLetterEvents.decode(recorded);
    if (event?.type === 'DeliveryDeadLettered') open.set(event.data.position, event.data);
    else if (event?.type === 'DeadLetterReplayed') open.delete(event.data.position);
  }
  return [...open.values()].sort((a, b) => a.position - b.position);
}

export const deadLetterListSchema = z.strictObject({ items: z.array(deadLetteredData) });
export type DeadLetterList = z.output<typeof deadLetterListSchema>;

export const deadLetterReplaySchema = z.strictObject({
  /** Delivered again, as the log now stands. */
  replayed: z.number().int(),
  /** Failed again: still dead letters. */
  failed: z.number().int(),
  items: z.array(deadLetteredData),
});
export type DeadLetterReplay = z.output<typeof deadLetterReplaySchema>;

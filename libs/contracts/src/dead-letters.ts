import { z } from 'zod';
import { eventCodec, type StoredEvent } from './event-codec.js';
import { feedIdSchema, type FeedId } from './feeds.js';

/**
 * What could not be delivered, kept in the event log so that it survives restarts: a log
 * event that kept failing for fan-out, or for one reader in timeline, with the reason, until
 * it is replayed. Operational events: no projection of feeds reads them.
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

/**
 * An event whose deliveries kept failing for one reader alone (a store error on its entry,
 * a document grown too large): timeline applied it for every other reader.
 */
const readerDeadLetteredData = deadLetteredData.extend({
  /** The reader whose deliveries failed. */
  reader: feedIdSchema,
});

export const deadLetterEvents = eventCodec({
  DeliveryDeadLettered: { schema: deadLetteredData },
  ReaderDeliveryDeadLettered: { schema: readerDeadLetteredData },
  DeadLetterReplayed: {
    schema: z.strictObject({
      position: z.number().int().min(0),
      /** Set when the letter replayed was one reader's: the event's letter for all stays open. */
      reader: feedIdSchema.optional(),
      time: z.string(),
    }),
  },
});
export type DeadLetterEvent = NonNullable<ReturnType<typeof deadLetterEvents.decode>>;
/** A dead letter as listed: an event's for all its readers, or one reader's when `reader` is set. */
export type DeadLetter = z.output<typeof deadLetteredData> & { reader?: FeedId };
export type ReaderDeadLetter = z.output<typeof readerDeadLetteredData>;

/** A letter is an event's, or one reader's of an event: each is replayed apart. */
const letterKey = (position: number, reader: FeedId | undefined): string => (reader === undefined ? `${position}` : `${position} ${reader}`);

/** The dead letters not replayed yet, oldest first (an event's before its readers'), from the dead-letter stream's events. */
export function openDeadLetters(events: readonly StoredEvent[]): DeadLetter[] {
  const open = new Map<string, DeadLetter>();
  for (const recorded of events) {
    const event = deadLetterEvents.decode(recorded);
    if (event?.type === 'DeliveryDeadLettered') open.set(letterKey(event.data.position, undefined), event.data);
    else if (event?.type === 'ReaderDeliveryDeadLettered') open.set(letterKey(event.data.position, event.data.reader), event.data);
    else if (event?.type === 'DeadLetterReplayed') open.delete(letterKey(event.data.position, event.data.reader));
  }
  return [...open.values()].sort((a, b) => a.position - b.position || (a.reader ?? '').localeCompare(b.reader ?? ''));
}

const listedDeadLetter = deadLetteredData.extend({ reader: feedIdSchema.optional() });

export const deadLetterListSchema = z.strictObject({ items: z.array(listedDeadLetter) });
export type DeadLetterList = z.output<typeof deadLetterListSchema>;

export const deadLetterReplaySchema = z.strictObject({
  /** Delivered again, as the log now stands. */
  replayed: z.number().int(),
  /** Failed again: still dead letters. */
  failed: z.number().int(),
  items: z.array(listedDeadLetter),
});
export type DeadLetterReplay = z.output<typeof deadLetterReplaySchema>;

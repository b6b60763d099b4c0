import { DEAD_LETTER_STREAM, deadLetterEvents, type FeedId, type ReaderDeadLetter } from '@feedmill/contracts';
import type { EventLog } from '@feedmill/event-log';
import { recordedEventAt } from './recorded-event-at.js';

/** What failed for one reader: the event's position, why, and after how many attempts. */
export interface ReaderFailure {
  reader: FeedId;
  position: number;
  reason: string;
  attempts: number;
}

/** Thrown when a reader's failure names a position at which the log holds no event. */
export class DeadLetterEventNotFoundError extends Error {
  override readonly name = 'DeadLetterEventNotFoundError';
  readonly code = 'dead_letter_event_not_found';

  constructor(
    readonly position: number,
    readonly reader: FeedId,
  ) {
    super(`the log holds no event at position ${position} to dead-letter for ${reader}`);
  }
}

/**
 * Keeps one reader's failed delivery as a dead letter in the log's dead-letter stream, named
 * by its event (stream, revision and type, read from the log), so that fan-out lists it and
 * replays it for that reader alone.
 */
export class ReaderDeadLetters {
  constructor(
    private readonly log: EventLog,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async append({ reader, position, reason, attempts }: ReaderFailure): Promise<ReaderDeadLetter> {
    const event = await recordedEventAt(this.log, position);
    if (!event) throw new DeadLetterEventNotFoundError(position, reader);
    const letter: ReaderDeadLetter = { position, stream: event.stream, revision: event.revision, type: event.type, reader, reason, attempts, time: this.now().toISOString() };
    await this.log.appendToStream(DEAD_LETTER_STREAM, [deadLetterEvents.encode({ type: 'ReaderDeliveryDeadLettered', data: letter })]);
    return letter;
  }
}

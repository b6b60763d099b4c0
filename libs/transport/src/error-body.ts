import { FeedmillError, type ErrorBody } from '@feedmill/contracts';
import { EventLogClosedError, LogAppendRefusedError, LogWriteFailedError, WrongExpectedVersionError } from '@feedmill/event-log';

/** What a failure looks like once it leaves a service: a stable code, never a stack. */
export function toErrorBody(error: unknown): ErrorBody {
  if (error instanceof FeedmillError) return error.toBody();
  if (error instanceof WrongExpectedVersionError) return { code: 'conflict', message: error.message };
  // Nothing was written (a full disk or JetStream store, say), and asking again may succeed: the caller's to retry.
  if (error instanceof LogWriteFailedError || error instanceof LogAppendRefusedError || error instanceof EventLogClosedError) return { code: 'unavailable', message: error.message };
  return { code: 'internal', message: 'internal error' };
}

/** Turns what came back over a transport into a {@link FeedmillError}. */
export function toFeedmillError(error: unknown, subject: string): FeedmillError {
  if (error instanceof FeedmillError) return error;
  const fromBody = FeedmillError.fromBody(error);
  if (fromBody) return fromBody;
  const message = error instanceof Error ? error.message : typeof error === 'object' && error ? JSON.stringify(error) : String(error);
  return new FeedmillError('unavailable', `${subject} failed: ${message}`, undefined, { cause: error });
}

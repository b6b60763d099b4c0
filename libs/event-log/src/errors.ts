import type { ExpectedVersion } from './event-log.port.js';

/** The stream moved on since the caller read it: reload and decide again. */
export class WrongExpectedVersionError extends Error {
  override readonly name = 'WrongExpectedVersionError';
  readonly code = 'wrong_expected_version';

  constructor(
    readonly stream: string,
    readonly expected: ExpectedVersion,
    /** Revision of the stream's last event, or -1 when it does not exist. */
    readonly actual: number,
  ) {
    super(`stream ${stream}: expected version ${String(expected)}, actual ${actual === -1 ? 'no stream' : actual}`);
  }
}

/** A server's push stream of the log ended while a subscription still read it: it is opened again after `position`. */
export class PushStreamEndedError extends Error {
  override readonly name = 'PushStreamEndedError';
  readonly code = 'push_stream_ended';

  constructor(readonly position: number) {
    super(`the log's push stream ended after position ${position}`);
  }
}

/** A server's push stream of the log gave nothing while the log held more: it is closed and opened again after `position`. */
export class PushStreamStalledError extends Error {
  override readonly name = 'PushStreamStalledError';
  readonly code = 'push_stream_stalled';

  constructor(
    readonly position: number,
    readonly head: number,
    quietMs: number,
  ) {
    super(`the log's push stream gave nothing after position ${position} for ${quietMs} ms while the log's head is at ${head}`);
  }
}

export class EventLogClosedError extends Error {
  override readonly name = 'EventLogClosedError';
  constructor(message = 'the event log is closed') {
    super(message);
  }
}

/** Checks an expectation against a stream's current last revision (-1 when absent). */
export function assertExpectedVersion(stream: string, expected: ExpectedVersion | undefined, actual: number): void {
  if (expected === undefined || expected === 'any') return;
  const ok = expected === 'no_stream' ? actual === -1 : expected === actual;
  if (!ok) throw new WrongExpectedVersionError(stream, expected, actual);
}

const CONSUMER_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

export function assertConsumerName(consumer: string): void {
  if (!CONSUMER_PATTERN.test(consumer)) throw new Error(`consumer name ${JSON.stringify(consumer)} must match ${CONSUMER_PATTERN}`);
}

/**
 * The log's server refused an append and stored nothing of it: JetStream out of storage, or
 * past a limit of its stream or account. Asking again may succeed once the operator has made
 * room: services answer it as `unavailable`, as the file log's full disk.
 */
export class LogAppendRefusedError extends Error {
  override readonly name = 'LogAppendRefusedError';
  readonly code = 'log_append_refused';

  constructor(reason: string, options?: { cause?: unknown }) {
    super(`the event log refused the append, and kept nothing of it: ${reason}`, options);
  }
}

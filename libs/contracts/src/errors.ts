/**
 * Every failure a caller can act on is a {@link FeedmillError} with one of these stable
 * codes. Transports (HTTP, RPC) map codes to their own status values in one place each.
 */
export const errorCodes = [
  'invalid_request',
  'invalid_json',
  'invalid_cursor',
  'unauthorized',
  'forbidden',
  'unknown_group',
  'group_not_writable',
  'group_cannot_follow',
  /** A feed's DELETE without `erase=true`: there is no soft delete, and an erasure cannot be undone. */
  'erase_required',
  'not_found',
  'activity_not_found',
  'payload_too_large',
  'unsupported_media_type',
  'conflict',
  'rate_limited',
  'not_ready',
  'unavailable',
  'internal',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

const knownCodes: ReadonlySet<string> = new Set(errorCodes);

export function isErrorCode(value: string): value is ErrorCode {
  return knownCodes.has(value);
}

/** The JSON shape of every error reply, over HTTP and over RPC. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  field?: string;
}

export class FeedmillError extends Error {
  override readonly name = 'FeedmillError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  toBody(): ErrorBody {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }

  /** Rebuilds an error that crossed a transport as a plain {@link ErrorBody}; anything else is undefined. */
  static fromBody(body: unknown): FeedmillError | undefined {
    if (typeof body !== 'object' || body === null) return undefined;
    const { code, message, field } = body as Partial<Record<keyof ErrorBody, unknown>>;
    if (typeof code !== 'string' || !isErrorCode(code) || typeof message !== 'string') return undefined;
    return new FeedmillError(code, message, typeof field === 'string' ? field : undefined);
  }
}

/**
 * Whether a failure says a service or store is unreachable, timed out or not caught up yet
 * (`unavailable`, `not_ready`, here or in a cause): it passes with time, so it is waited
 * out, never dead-lettered.
 */
export function isTransientFailure(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof FeedmillError) return cause.code === 'unavailable' || cause.code === 'not_ready';
  }
  return false;
}

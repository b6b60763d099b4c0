import type { ErrorCode } from '@feedmill/contracts';

/** The JSON body of an error answer. */
export interface ApiErrorBody {
  code: ErrorCode;
  message: string;
  field?: string;
}

/**
 * An answer of the API other than success: its HTTP status and the body's stable `code`,
 * the `field` at fault when the server named one, and its message. A `429` carries the
 * seconds to wait in `retryAfterSeconds`.
 */
export class FeedmillApiError extends Error {
  override readonly name = 'FeedmillApiError';

  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly field?: string,
    /** From `Retry-After`, on a `429 rate_limited`. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }

  /** The error as the server sent it. */
  toBody(): ApiErrorBody {
    return this.field === undefined ? { code: this.code, message: this.message } : { code: this.code, message: this.message, field: this.field };
  }

  /**
   * The error an answer stands for. A body that is not the API's error shape (a proxy's
   * page, say) becomes `internal` (5xx) or `invalid_request` (4xx), with the status in the message.
   */
  static fromAnswer(status: number, body: unknown, retryAfter?: string | null): FeedmillApiError {
    const retryAfterSeconds = retryAfter ? Number(retryAfter) : undefined;
    const seconds = retryAfterSeconds !== undefined && Number.isFinite(retryAfterSeconds) ? retryAfterSeconds : undefined;
    if (isErrorBody(body)) return new FeedmillApiError(status, body.code, body.message, body.field, seconds);
    return new FeedmillApiError(status, status >= 500 ? 'internal' : 'invalid_request', `the server answered ${status} without an error body`, undefined, seconds);
  }
}

function isErrorBody(body: unknown): body is ApiErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const { code, message, field } = body as Record<string, unknown>;
  return typeof code === 'string' && typeof message === 'string' && (field === undefined || typeof field === 'string');
}

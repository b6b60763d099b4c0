/**
 * Every failure a caller can act on is a {@link FeedmillError} with a stable `code`.
 * Transports (HTTP, RPC) map codes to their own status values in one place each.
 */
export const errorStatus = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_cursor: 400,
  unknown_group: 404,
  group_not_writable: 400,
  group_cannot_follow: 400,
  not_found: 404,
  activity_not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  conflict: 409,
  not_ready: 503,
  unavailable: 503,
  internal: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

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

  get status(): number {
    return errorStatus[this.code];
  }

  toBody(): ErrorBody {
    return this.field === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, field: this.field };
  }

  /** Rebuilds an error that crossed a transport as a plain {@link ErrorBody}. */
  static fromBody(body: unknown): FeedmillError | undefined {
    if (typeof body !== 'object' || body === null) return undefined;
    const { code, message, field } = body as Partial<ErrorBody>;
    if (typeof code !== 'string' || !(code in errorStatus) || typeof message !== 'string') return undefined;
    return new FeedmillError(code, message, typeof field === 'string' ? field : undefined);
  }
}

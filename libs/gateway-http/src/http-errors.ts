import { Catch, HttpException, Logger, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { FeedmillError, type ErrorBody, type ErrorCode } from '@feedmill/contracts';

const logger = new Logger('http');

/**
 * The HTTP status of each error code. The codes belong to the domain; what they mean in
 * HTTP is the gateway's business alone.
 */
export const httpStatusOf: Readonly<Record<ErrorCode, number>> = {
  invalid_request: 400,
  invalid_json: 400,
  invalid_cursor: 400,
  unauthorized: 401,
  forbidden: 403,
  unknown_group: 404,
  group_not_writable: 400,
  group_cannot_follow: 400,
  erase_required: 400,
  not_found: 404,
  activity_not_found: 404,
  payload_too_large: 413,
  unsupported_media_type: 415,
  conflict: 409,
  rate_limited: 429,
  not_ready: 503,
  unavailable: 503,
  internal: 500,
};

/**
 * Nest hands Fastify's own request errors (malformed JSON, a body over the limit, an
 * unsupported content type) to the filters as HttpExceptions: the route never ran, so
 * each of them is about the body. 404 is an unknown route.
 */
const httpExceptionCodes: Record<number, { code: ErrorCode; field?: string; message?: string }> = {
  400: { code: 'invalid_json', field: 'body' },
  404: { code: 'not_found', message: 'no such route' },
  413: { code: 'payload_too_large', field: 'body' },
  415: { code: 'unsupported_media_type', field: 'body', message: 'send the body as application/json' },
};

/** Maps anything thrown while serving a request to a status and an {@link ErrorBody}. */
export function toHttpError(error: unknown): { status: number; body: ErrorBody } {
  if (error instanceof FeedmillError) return { status: httpStatusOf[error.code], body: error.toBody() };
  if (error instanceof HttpException && error.getStatus() < 500) {
    const status = error.getStatus();
    const known = httpExceptionCodes[status] ?? { code: 'invalid_request' };
    const body: ErrorBody = { code: known.code, message: known.message ?? error.message };
    if (known.field) body.field = known.field;
    return { status, body };
  }
  logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  return { status: 500, body: { code: 'internal', message: 'internal error' } };
}

@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const { status, body } = toHttpError(exception);
    void host.switchToHttp().getResponse<FastifyReply>().status(status).send(body);
  }
}

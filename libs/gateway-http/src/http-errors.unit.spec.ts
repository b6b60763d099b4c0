import { BadRequestException, NotFoundException, PayloadTooLargeException } from '@nestjs/common';
import { errorCodes, FeedmillError, type ErrorCode } from '@feedmill/contracts';
import { toHttpError } from './http-errors.js';

describe('HTTP errors', () => {
  it('answer every error code with the status the API has always given it', () => {
    const expected: Record<ErrorCode, number> = {
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
    const answered = Object.fromEntries(errorCodes.map((code) => [code, toHttpError(new FeedmillError(code, 'why')).status]));
    expect(answered).toEqual(expected);
  });

  it('carry the error body as it is, field included', () => {
    expect(toHttpError(new FeedmillError('invalid_request', 'body.verb: required', 'body.verb'))).toEqual({
      status: 400,
      body: { code: 'invalid_request', message: 'body.verb: required', field: 'body.verb' },
    });
  });

  it('give Fastify’s own request errors a code about the body', () => {
    expect(toHttpError(new BadRequestException('Unexpected token'))).toEqual({ status: 400, body: { code: 'invalid_json', message: 'Unexpected token', field: 'body' } });
    expect(toHttpError(new PayloadTooLargeException('too big')).body).toEqual({ code: 'payload_too_large', message: 'too big', field: 'body' });
    expect(toHttpError(new NotFoundException('Cannot GET /nope'))).toEqual({ status: 404, body: { code: 'not_found', message: 'no such route' } });
  });
});

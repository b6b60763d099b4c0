import { Catch, Logger, type ExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import { FeedmillError, type ErrorBody } from '@feedmill/contracts';
import { WrongExpectedVersionError } from '@feedmill/event-log';
import { toErrorBody } from './error-body.js';

const logger = new Logger('rpc');

/** The {@link ErrorBody} a failed request is answered with; logs only what a caller cannot fix. */
export function failureBody(exception: unknown): ErrorBody {
  if (!(exception instanceof FeedmillError) && !(exception instanceof WrongExpectedVersionError)) {
    logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
  }
  return toErrorBody(exception);
}

/** Replies to a failed request with its {@link failureBody}. */
@Catch()
export class RpcErrorFilter implements ExceptionFilter {
  catch(exception: unknown): Observable<never> {
    return throwError(() => failureBody(exception));
  }
}

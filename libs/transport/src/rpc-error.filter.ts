import { Catch, Logger, type ExceptionFilter } from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import { FeedmillError } from '@feedmill/contracts';
import { WrongExpectedVersionError } from '@feedmill/event-log';
import { toErrorBody } from './error-body.js';

/** Replies to a failed request with an {@link ErrorBody}; logs only what a caller cannot fix. */
@Catch()
export class RpcErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('rpc');

  catch(exception: unknown): Observable<never> {
    if (!(exception instanceof FeedmillError) && !(exception instanceof WrongExpectedVersionError)) {
      this.logger.error(exception instanceof Error ? (exception.stack ?? exception.message) : String(exception));
    }
    return throwError(() => toErrorBody(exception));
  }
}

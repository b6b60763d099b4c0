import rateLimit from '@fastify/rate-limit';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyRequest } from 'fastify';
import { FeedmillError } from '@feedmill/contracts';
import { describeCaller } from './auth/caller.js';

/** How many `/v1` requests one caller may send. */
export interface RateLimitOptions {
  /** Requests per caller per minute (a fixed window); 0 turns limits off. @defaultValue 0 */
  perMinute: number;
  /** Callers remembered at once; past this the least recently seen is forgotten. @defaultValue 10000 */
  callers?: number;
}

/**
 * Limits the `/v1` requests of each caller to `perMinute`, answering the rest
 * `429 rate_limited` with `Retry-After` (seconds). A caller is the user a token names
 * (`sub`), so all of a user's tokens share one allowance; an admin token, which acts for
 * many users, is a caller of its own; with tokens off, the client's address. A request
 * whose token is refused is answered 401 before it is counted. Health, readiness and the
 * documentation are never limited. Counts are kept in this process: each gateway process
 * (and each of `HTTP_WORKERS`) allows `perMinute` on its own.
 */
export async function limitRates(app: NestFastifyApplication, options: RateLimitOptions): Promise<void> {
  if (!limitsRates(options)) return;
  await app.register(rateLimit, {
    global: true,
    max: options.perMinute,
    timeWindow: 60_000,
    cache: options.callers ?? 10_000,
    // Only the API is limited: probes and the documentation are for operators and tools.
    // By the route matched, not the raw URL: the router decodes `/%761/...` to `/v1/...`.
    allowList: (request: FastifyRequest) => !(request.routeOptions.url ?? '').startsWith('/v1/'),
    keyGenerator: callerKey,
    // The headers of a refusal only: counting down on every answer costs every request.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    addHeaders: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false, 'retry-after': true },
    errorResponseBuilder: (request: FastifyRequest, context: { max: number; after: string }) =>
      new FeedmillError(
        'rate_limited',
        `more than ${context.max} requests a minute from ${request.caller ? describeCaller(request.caller) : 'this address'}: retry in ${context.after}`,
        request.caller ? 'authorization' : undefined,
      ),
  });
}

/** Whether these options limit anything (`perMinute` 0 turns limits off). */
export function limitsRates(options: RateLimitOptions | undefined): boolean {
  return (options?.perMinute ?? 0) > 0;
}

/** The allowance a request counts against: its user's, its admin token's, or its address's. */
function callerKey(request: FastifyRequest): string {
  const caller = request.caller;
  if (!caller) return `address ${request.ip}`;
  if (!caller.admin && caller.sub !== undefined) return `user ${caller.sub}`;
  // The token's own digest, however it was sent (header or query, `Bearer` in any case and
  // spacing): one allowance per token, and the limiter's memory holds no usable token.
  return `token ${caller.tokenDigest ?? 'none'}`;
}

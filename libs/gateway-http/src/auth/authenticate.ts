import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { FeedmillError } from '@feedmill/contracts';
import { toHttpError } from '../http-errors.js';
import { OPEN_ACCESS, type Caller } from './caller.js';
import type { TokenVerifier } from './token-verifier.js';

/** The stream route, the one that takes a token in its query (kept here so that auth does not import the streams). */
export const STREAM_ROUTE = '/v1/feeds/:group/:id/stream';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who sent a `/v1` request, once its token is verified. */
    caller: Caller | null;
  }
  interface FastifyInstance {
    /** No token is configured: every request may do anything. */
    openAccess: boolean;
  }
}

/**
 * Checks the token of every `/v1` request before its route runs, and answers 401 for one
 * that is missing, malformed, badly signed or expired. Without a verifier the API is open,
 * and no request pays for a hook.
 */
export function authenticate(fastify: FastifyInstance, verifier: TokenVerifier | undefined): void {
  fastify.decorateRequest('caller', null);
  fastify.decorate('openAccess', verifier === undefined);
  if (!verifier) return;
  fastify.addHook('onRequest', async (request, reply) => {
    // The route matched, not the raw URL, which may spell `/v1/` percent-encoded.
    const route = request.routeOptions.url ?? '';
    if (!route.startsWith('/v1/')) return;
    try {
      request.caller = await verifier.callerOf(request.headers.authorization ?? (route === STREAM_ROUTE ? queryToken(request) : undefined));
    } catch (error) {
      const failure = toHttpError(error);
      return reply.code(failure.status).send(failure.body);
    }
  });
}

/**
 * A stream's token may come as `?access_token=`: a browser's EventSource cannot set headers.
 * Only streams take it: a URL ends up in logs and histories, and a stream's is read-only.
 */
function queryToken(request: FastifyRequest): string | undefined {
  const token = (request.query as Record<string, unknown> | undefined)?.['access_token'];
  return typeof token === 'string' && token.length > 0 ? `Bearer ${token}` : undefined;
}

/** The request's caller; fails closed if tokens are checked and this one was not. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller) return request.caller;
  if (request.server.openAccess) return OPEN_ACCESS;
  throw new FeedmillError('unauthorized', 'send Authorization: Bearer <token>', 'authorization');
}

/** The caller of a Nest controller's request, as a parameter. */
export const RequestCaller = createParamDecorator((_data: unknown, context: ExecutionContext): Caller => callerOf(context.switchToHttp().getRequest<FastifyRequest>()));

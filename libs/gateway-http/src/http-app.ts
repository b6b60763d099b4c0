import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { errorCodes } from 'fastify';
import { Logger, type LogLevel } from '@nestjs/common';
import type { RuntimeConfig } from '@feedmill/config';
import { processLogger } from '@feedmill/runtime';
import { authenticate } from './auth/authenticate.js';
import { TokenVerifier, type TokenKeys } from './auth/token-verifier.js';
import { answerClientError, answerFrameworkError } from './framework-errors.js';
import { HttpErrorFilter } from './http-errors.js';
import { limitRates, type RateLimitOptions } from './rate-limits.js';
import { carryRequestIds, measureRequests, requestIdOptions } from './http-observability.js';
import { doorStaysShut, FrontDoor, openFrontDoor, parseQueryString } from './front-door.js';
import { serveWebConsole } from './web-console.js';

export interface HttpAppOptions {
  bodyLimit: number;
  logLevel: LogLevel;
  tokens?: TokenKeys;
  /** Requests each caller may send to `/v1`. @defaultValue no limit */
  rateLimit?: RateLimitOptions;
}

/** The HTTP settings of a process's environment. */
export function httpAppOptions(config: RuntimeConfig): HttpAppOptions {
  return { bodyLimit: config.BODY_LIMIT, logLevel: config.LOG_LEVEL, tokens: {
      secret: config.FEEDMILL_JWT_SECRET,
      publicKey: config.FEEDMILL_JWT_PUBLIC_KEY,
      issuer: config.FEEDMILL_JWT_ISSUER,
      audience: config.FEEDMILL_JWT_AUDIENCE,
    },
    rateLimit: { perMinute: config.RATE_LIMIT_PER_MINUTE },
  };
}

/**
 * A Nest application on Fastify whose every error answers `{ code, message, field }`, and
 * whose `/v1` requests need a token signed with `tokens` when any is given.
 */
export async function createHttpApp(module: unknown, options: HttpAppOptions): Promise<NestFastifyApplication> {
  const verifier = TokenVerifier.fromConfig(options.tokens ?? {});
  // Feed reads and posts are answered in front of Fastify, unless the app does per request what the door does not (see FrontDoor).
  const frontDoor = doorStaysShut(options.rateLimit) ? undefined : new FrontDoor(verifier);
  const adapter = new FastifyAdapter({
    bodyLimit: options.bodyLimit,
    // Long ids must reach validation and get our 400, not the router's 414. The door parses queries as the router does.
    routerOptions: { maxParamLength: 1024, querystringParser: parseQueryString },
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    ...requestIdOptions,
    ...(frontDoor && { serverFactory: frontDoor.serverFactory }),
  });
  // Every body the API takes is JSON: Fastify's text parser (and Nest's form parser, left
  // out with `bodyParser: false`) would hand a route a string or a form, which validation
  // refuses as 400 naming a field. A body of any other type is 415, naming the body; an empty
  // one is no body, whatever type it names (curl's `-d ''`, fetch's `body: ''`).
  adapter.getInstance().removeContentTypeParser('text/plain');
  adapter.getInstance().addContentTypeParser('*', { parseAs: 'buffer' }, (request, body: Buffer, done) => {
    if (body.length === 0) done(null, undefined);
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(request.headers['content-type']));
  });
  measureRequests(adapter.getInstance());
  carryRequestIds(adapter.getInstance());
  // No `/metrics` here: this is the public port. Metrics are on the status port (`STATUS_PORT`), which need not be reachable from outside.
  authenticate(adapter.getInstance(), verifier);
  // A route that takes larger bodies (the bulk imports) says so with `@RouteConfig({ bodyLimit })`.
  adapter.getInstance().addHook('onRoute', (route) => {
    const bodyLimit = (route.config as { bodyLimit?: unknown } | undefined)?.bodyLimit;
    if (typeof bodyLimit === 'number') route.bodyLimit = bodyLimit;
  });
  // After the hook above, which may set the post route's body limit the door takes.
  if (frontDoor) openFrontDoor(adapter.getInstance(), frontDoor);
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: processLogger(options.logLevel),
    bufferLogs: false,
    bodyParser: false,
  });
  if (options.rateLimit) await limitRates(app, options.rateLimit);
  await serveWebConsole(app);
  // Global, so that Fastify's errors (raised before any route runs) and unknown routes reach it.
  app.useGlobalFilters(new HttpErrorFilter());
  if (!verifier) new Logger('auth').warn('FEEDMILL_JWT_SECRET is not set: the API is open, and anyone who reaches this port may read and write every feed');
  app.enableShutdownHooks();
  return app;
}

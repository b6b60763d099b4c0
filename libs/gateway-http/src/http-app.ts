import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { LogLevel } from '@nestjs/common';
import { logLevels } from '@feedmill/runtime';
import { HttpErrorFilter } from './http-errors.js';

/** A Nest application on Fastify whose every error answers `{ code, message, field }`. */
export async function createHttpApp(module: unknown, options: { bodyLimit: number; logLevel: LogLevel }): Promise<NestFastifyApplication> {
  // Long ids must reach validation and get our 400, not the router's 414.
  const adapter = new FastifyAdapter({ bodyLimit: options.bodyLimit, routerOptions: { maxParamLength: 1024 } });
  // A route that takes larger bodies (the bulk imports) says so with `@RouteConfig({ bodyLimit })`.
  adapter.getInstance().addHook('onRoute', (route) => {
    const bodyLimit = (route.config as { bodyLimit?: unknown } | undefined)?.bodyLimit;
    if (typeof bodyLimit === 'number') route.bodyLimit = bodyLimit;
  });
  const app = await NestFactory.create<NestFastifyApplication>(module as never, adapter, {
    logger: logLevels(options.logLevel),
    bufferLogs: false,
  });
  // Global, so that Fastify's errors (raised before any route runs) and unknown routes reach it.
  app.useGlobalFilters(new HttpErrorFilter());
  app.enableShutdownHooks();
  return app;
}

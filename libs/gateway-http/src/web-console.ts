import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';

/**
 * The console's files, shipped as they are written (HTML, CSS and one ES module: no build
 * step, nothing fetched from elsewhere). They sit beside `src/` and `dist/` alike, so one
 * path finds them from the sources (tests) and from the build.
 */
export const WEB_CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));

/**
 * Serves the web console at `/` (and its two other files by name). The files are listed once
 * at start and each gets a route of its own (`wildcard: false`): no catch-all route that
 * would answer unknown paths, no hook on other routes, so the API's routes pay nothing.
 * The routes are outside `/v1`: no token, no rate limit (the page asks for a token itself).
 * `no-cache` makes browsers revalidate (a 304 by ETag), so that an upgraded gateway's
 * console is seen at the next load.
 */
export async function serveWebConsole(app: NestFastifyApplication): Promise<void> {
  await app.register(fastifyStatic, {
    root: WEB_CONSOLE_DIR,
    prefix: '/',
    wildcard: false,
    index: ['index.html'],
    decorateReply: false,
    cacheControl: false,
    setHeaders: (response) => response.setHeader('cache-control', 'no-cache'),
  });
}

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifySchema } from 'fastify';

/**
 * The console's files, shipped as they are written (HTML, CSS and one ES module: no build
 * step, nothing fetched from elsewhere). They sit beside `src/` and `dist/` alike, so one
 * path finds them from the sources (tests) and from the build.
 */
export const WEB_CONSOLE_DIR = fileURLToPath(new URL('../console/', import.meta.url));

/** `hide`: what OpenAPI generators and our document's tests read as "not part of the API". */
const HIDDEN = { hide: true } as FastifySchema;

const CONSOLE_FILES = { 'index.html': 'text/html; charset=utf-8', 'console.js': 'text/javascript; charset=utf-8', 'console.css': 'text/css; charset=utf-8' };

/**
 * Serves the web console at `/` (and its files by name). Three small files, read once at
 * start and answered from memory, each on a route of its own: no catch-all route that would
 * answer unknown paths, no hook on other routes, so the API's routes pay nothing. (A static
 * file plugin would do the same with more machinery; the one Nest's Fastify adapter accepts
 * needs an ESM-only dependency that Jest on Node 20 cannot load.)
 * The routes are outside `/v1`: no token, no rate limit (the page asks for a token itself).
 * `no-cache` with an ETag makes browsers revalidate, so that an upgraded gateway's console
 * is seen at the next load; `schema.hide` keeps them out of the API's OpenAPI document.
 */
export async function serveWebConsole(app: NestFastifyApplication): Promise<void> {
  const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
  for (const [name, contentType] of Object.entries(CONSOLE_FILES)) {
    const body = await readFile(WEB_CONSOLE_DIR + name);
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    const urls = name === 'index.html' ? ['/', '/index.html'] : [`/${name}`];
    for (const url of urls) {
      fastify.get(url, { schema: HIDDEN }, (request, reply) => {
        void reply.header('cache-control', 'no-cache').header('etag', etag);
        if (request.headers['if-none-match'] === etag) return reply.code(304).send();
        return reply.type(contentType).send(body);
      });
    }
  }
}

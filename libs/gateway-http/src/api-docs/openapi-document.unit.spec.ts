import 'reflect-metadata';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { defaultFeedConfig, errorCodes, MAX_ACTIVITIES_PER_REQUEST, MAX_FOLLOWS_PER_REQUEST, MAX_REFS } from '@feedmill/contracts';
import { rootModule } from '@feedmill/runtime';
import { stubServiceClient } from '@feedmill/harness';
import { createHttpApp } from '../http-app.js';
import { GatewayModule } from '../gateway.module.js';
import { openApiDocument, type OpenApiDocument } from './openapi-document.js';
import { renderReferencePage } from './reference-page.js';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'put', 'post', 'patch', 'delete'];

/** `GET /v1/feeds/{group}/{id}` for every operation of the document. */
function documentedRoutes(document: OpenApiDocument): string[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => (item as Json)[method]).map((method) => `${method.toUpperCase()} ${path}`),
  );
}

/**
 * Every route the gateway registers on Fastify (its hot routes and Nest's controllers), as
 * OpenAPI writes paths, but the web console's files: they are a page, not the API, and say
 * so with `schema.hide`.
 */
async function registeredRoutes(): Promise<string[]> {
  const app = await createHttpApp(rootModule([GatewayModule], { feedConfig: defaultFeedConfig, client: stubServiceClient({}) }), { bodyLimit: 65_536, logLevel: 'error' });
  const routes: string[] = [];
  (app.getHttpAdapter().getInstance() as FastifyInstance).addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) {
        // HEAD is Fastify's echo of each GET, not a route of ours.
        if (method !== 'HEAD' && !(route.schema as { hide?: boolean } | undefined)?.hide) routes.push(`${method} ${route.url.replace(/:([A-Za-z]+)/g, '{$1}')}`);
      }
    });
  await app.init();
  await app.close();
  return routes;
}

describe('the OpenAPI document', () => {
  const document = openApiDocument();

  it('is valid OpenAPI 3.1', async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('documents every route the gateway registers, and no other', async () => {
    const registered = await registeredRoutes();
    expect(registered.length).toBeGreaterThan(20);
    expect(new Set(documentedRoutes(document))).toEqual(new Set(registered));
  });

  it('leaves out the web console, whose files the gateway serves each on a route of its own, hidden from the document', async () => {
    const app = await createHttpApp(rootModule([GatewayModule], { feedConfig: defaultFeedConfig, client: stubServiceClient({}) }), { bodyLimit: 65_536, logLevel: 'error' });
    await app.init();
    const fastify = app.getHttpAdapter().getInstance() as FastifyInstance;
    try {
      const served = ['/', '/index.html', '/console.js', '/console.css'].filter((url) => fastify.hasRoute({ method: 'GET', url }));
      expect(served).toEqual(['/', '/index.html', '/console.js', '/console.css']);
      // No catch-all: an unknown path is still the API's 404, not a file lookup.
      expect(fastify.hasRoute({ method: 'GET', url: '/*' })).toBe(false);
      expect(Object.keys(document.paths ?? {}).filter((path) => !path.startsWith('/v1/') && !['/healthz', '/readyz', '/openapi.json', '/docs'].includes(path))).toEqual([]);
    } finally {
      await app.close();
    }
  });

  it('names every path parameter of each route', () => {
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      const inPath = [...path.matchAll(/\{([A-Za-z]+)\}/g)].map((match) => match[1]).sort();
      for (const method of METHODS.filter((m) => (item as Json)[m])) {
        const parameters: Json[] = (item as Json)[method].parameters ?? [];
        expect({ route: `${method} ${path}`, names: parameters.filter((p) => p.in === 'path').map((p) => p.name).sort() }).toEqual({ route: `${method} ${path}`, names: inPath });
      }
    }
  });

  it('takes its bodies and limits from the schemas the routes validate with', () => {
    const body = (operationId: string) => findOperation(document, operationId).requestBody.content['application/json'].schema;
    expect(body('addActivity')).toMatchObject({ required: ['actor', 'verb', 'object'], additionalProperties: false });
    expect(Object.keys(body('addActivity').properties)).toEqual(['actor', 'verb', 'object', 'time', 'foreignId', 'extra', 'to', 'refs']);
    expect(body('addActivity').properties.refs).toMatchObject({ type: 'array', maxItems: MAX_REFS });
    expect(body('followMany').properties.follows.maxItems).toBe(MAX_FOLLOWS_PER_REQUEST);
    expect(body('addActivities').properties.activities.maxItems).toBe(MAX_ACTIVITIES_PER_REQUEST);
    // The bulk import takes no `to`: its schema omits it, and so does the document.
    expect(body('addActivities').properties.activities.items.properties.to).toBeUndefined();
    // Refs need no check beyond their shape: an import takes them.
    expect(body('addActivities').properties.activities.items.properties.refs).toMatchObject({ maxItems: MAX_REFS });
    const sliceRef = findOperation(document, 'readSlice').parameters.find((p: Json) => p.in === 'path' && p.name === 'ref');
    expect(sliceRef.schema).toMatchObject({ type: 'string', example: 'applicant:17' });
    // A slice's page is `{ items, next }`, as the route answers: it is not polled, so it has no `newest`.
    const slicePage = findOperation(document, 'readSlice').responses['200'].content['application/json'].schema;
    expect(slicePage.required).toEqual(['items', 'next']);
    expect(JSON.stringify(slicePage)).not.toContain('"newest"');
    const readQuery = findOperation(document, 'readFeed').parameters.filter((p: Json) => p.in === 'query');
    expect(readQuery.map((p: Json) => [p.name, p.schema.maximum])).toEqual([
      ['limit', 100],
      ['cursor', undefined],
      ['after', undefined],
    ]);
  });

  it('describes the follow options and the error body with every code', () => {
    const query = (operationId: string) => findOperation(document, operationId).parameters.filter((p: Json) => p.in === 'query');
    // As the query string carries them, and as the routes check them.
    expect(query('follow')).toEqual([expect.objectContaining({ name: 'copyLimit', schema: expect.objectContaining({ type: 'string', pattern: '^\\d{1,7}$' }) })]);
    expect(query('unfollow')).toEqual([expect.objectContaining({ name: 'keepHistory', schema: expect.objectContaining({ enum: ['true', 'false'] }) })]);
    expect(document.components?.schemas?.['Error']).toMatchObject({ required: ['code', 'message'], properties: { code: { enum: [...errorCodes] } } });
    expect(document.components?.responses?.['Error429']).toMatchObject({ headers: { 'retry-after': expect.any(Object) } });
  });

  it('asks for a bearer token on /v1 and for none on health, readiness and the docs', () => {
    expect(document.security).toEqual([{ bearer: [] }]);
    expect(document.components?.securitySchemes?.['bearer']).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs']) expect((document.paths?.[path] as Json).get.security).toEqual([]);
  });
});

describe('the reference page', () => {
  const document = openApiDocument();
  const page = renderReferencePage(document);

  it('shows every operation with its path', () => {
    for (const route of documentedRoutes(document)) {
      const [method, path] = route.split(' ');
      const operationId = (document.paths?.[path!] as Json)[method!.toLowerCase()].operationId;
      expect(page).toContain(`<article id="${operationId}">`);
      expect(page).toContain(`<code>${path}</code>`);
    }
  });

  it('loads nothing from elsewhere: no script, no stylesheet, no image', () => {
    expect(page).not.toMatch(/<script|<link|<img|src=|@import|url\(/i);
    expect(page).not.toMatch(/href="https?:/i);
  });
});

function findOperation(document: OpenApiDocument, operationId: string): Json {
  for (const item of Object.values(document.paths ?? {})) {
    for (const method of METHODS) if ((item as Json)[method]?.operationId === operationId) return (item as Json)[method];
  }
  throw new Error(`no operation ${operationId}`);
}

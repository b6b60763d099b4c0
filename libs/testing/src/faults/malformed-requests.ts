import fc from 'fast-check';
import type { RawRequest } from '@feedmill/harness';
import type { ApiOperation, JsonSchema, OperationParameter } from './openapi-operations.js';

/** What the generator needs to know of the server it aims at. */
export interface MalformedRequestContext {
  /** A valid value for each path parameter of an operation (`group` → `user` on a post). */
  validPathValue(operation: ApiOperation, parameter: string): string;
  /** Valid bodies for operations whose schema alone does not make one (the bulk imports' feed ids). */
  validBodies: Record<string, unknown>;
  /** A token allowed to do what the requests ask: an admin's. */
  adminToken: string;
  /** `Authorization` values that must be refused: garbage, other schemes, bad signatures, expired, `alg: none`. */
  badAuthorizations: string[];
  /** A valid token of a user who owns none of the feeds the requests name. */
  strangerToken: string;
  /** The server's `BODY_LIMIT`. */
  bodyLimit: number;
}

/** A request that is wrong in at least one way the API's document says is wrong. */
export interface MalformedRequest extends RawRequest {
  operation: string;
  /** What is wrong with it. */
  defect: string;
}

const JSON_TYPE = { 'content-type': 'application/json' };

/**
 * Requests over every operation of the document, each with one defect that the document
 * says makes it invalid (a path or query parameter outside its schema, a body that is not
 * JSON or not the schema's, an over-size body or header, a token that must be refused, a
 * method the path does not take), sometimes with harmless noise on top (unknown headers and
 * query parameters). None of them may be answered with a 5xx, or write anything.
 */
export function malformedRequests(operations: ApiOperation[], context: MalformedRequestContext): fc.Arbitrary<MalformedRequest> {
  const byPath = new Map<string, string[]>();
  for (const op of operations) byPath.set(op.path, [...(byPath.get(op.path) ?? []), op.method]);
  return fc
    .constantFrom(...operations)
    .chain((op) => {
      const defects = [
        { weight: 4, arbitrary: pathParameterDefect(op, context) },
        { weight: 4, arbitrary: queryParameterDefect(op, context) },
        { weight: 8, arbitrary: op.body ? bodyDefect(op, context) : undefined },
        { weight: 3, arbitrary: op.open ? undefined : tokenDefect(op, context) },
        { weight: 2, arbitrary: methodDefect(op, byPath.get(op.path)!, context) },
        { weight: 1, arbitrary: headerSizeDefect(op, context) },
      ].filter((d): d is { weight: number; arbitrary: fc.Arbitrary<MalformedRequest> } => d.arbitrary !== undefined);
      return fc.oneof(...defects);
    })
    .chain((request) => withNoise(request));
}

/** The request as valid as the context makes it, before its defect. */
function baseRequest(op: ApiOperation, context: MalformedRequestContext, overrides: { path?: Record<string, string>; query?: string } = {}): MalformedRequest {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => overrides.path?.[name] ?? encodeURIComponent(context.validPathValue(op, name)));
  const headers: Record<string, string> = op.open ? {} : { authorization: `Bearer ${context.adminToken}` };
  // Required query parameters (`erase=true`) are there, valid, unless the defect is in one of them.
  const overridden = overrides.query?.split('=')[0];
  const required = op.parameters.filter((p) => p.in === 'query' && p.required && encodeURIComponent(p.name) !== overridden).map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(String(validValue(p.schema)))}`);
  const query = [...required, ...(overrides.query ? [overrides.query] : [])].join('&');
  const request: MalformedRequest = { method: op.method, path: query ? `${path}?${query}` : path, headers, operation: `${op.method} ${op.path}`, defect: '' };
  if (op.body) {
    request.body = Buffer.from(JSON.stringify(validBody(op, context)));
    Object.assign(request.headers, JSON_TYPE);
  }
  return request;
}

function validBody(op: ApiOperation, context: MalformedRequestContext): unknown {
  return op.operationId in context.validBodies ? context.validBodies[op.operationId] : validValue(op.body!);
}

/** A value the schema takes, the plainest one. */
function validValue(schema: JsonSchema): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.enum) return schema.enum[0];
  switch (schema.type) {
    case 'object': {
      const properties = schema.properties ?? {};
      const names = schema.required?.length ? schema.required : Object.keys(properties).slice(0, 1);
      return Object.fromEntries(names.map((name) => [name, validValue(properties[name] ?? {})]));
    }
    case 'array':
      return schema.minItems ? Array.from({ length: schema.minItems }, () => validValue(schema.items ?? {})) : [];
    case 'integer':
    case 'number':
      return schema.minimum ?? 1;
    case 'boolean':
      return true;
    case 'string':
      if (schema.format === 'date-time') return '2026-01-01T00:00:00.000Z';
      if (typeof schema.example === 'string') return schema.example;
      return 'x'.repeat(Math.max(1, schema.minLength ?? 1));
    default:
      return {};
  }
}

const BROKEN_ESCAPES = ['%ZZ', '%', '%C3%28', '%E0%A4%A', '%FF', '%ED%A0%80', '%C0%AF'];
const ILLEGAL_IN_IDS = ['%00', '%2F', '..', '%2e%2e', '%20', 'a%0Ab', '%F0%9F%98%80', 'a.b', 'a%3Ab', '%22%3E%3Cscript%3E', '%25'];

function pathParameterDefect(op: ApiOperation, context: MalformedRequestContext): fc.Arbitrary<MalformedRequest> | undefined {
  const parameters = op.parameters.filter((p) => p.in === 'path');
  if (parameters.length === 0) return undefined;
  return fc.constantFrom(...parameters).chain((parameter) =>
    invalidPathValue(op, parameter).map(([kind, value]) => ({ ...baseRequest(op, context, { path: { [parameter.name]: value } }), defect: `path ${parameter.name}: ${kind}` })),
  );
}

/** A path segment the parameter's schema refuses, already encoded (or broken on purpose). */
function invalidPathValue(op: ApiOperation, parameter: OperationParameter): fc.Arbitrary<[string, string]> {
  const { schema } = parameter;
  const refused = (value: string) => !accepts(schema, value);
  const choices: Array<fc.Arbitrary<[string, string]>> = [
    fc.constantFrom(...BROKEN_ESCAPES).map((v): [string, string] => ['broken percent-encoding', v]),
    fc.integer({ min: 129, max: 3000 }).map((n): [string, string] => ['too long', 'a'.repeat(n)]),
  ];
  // Only where the schema refuses some strings: a filter that nothing passes would never end.
  if (['a b', '..', 'A', '%'].some(refused)) {
    choices.push(
      fc
        .oneof(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }), fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 24 }))
        .filter(refused)
        .map((v): [string, string] => ['outside its pattern', encodeURIComponent(v)]),
    );
  }
  const illegal = ILLEGAL_IN_IDS.filter((v) => refused(safeDecode(v)));
  if (illegal.length) choices.push(fc.constantFrom(...illegal).map((v): [string, string] => ['illegal characters', v]));
  if (/group/i.test(parameter.name)) choices.push(fc.stringMatching(/^zz[a-z0-9_]{1,20}$/).map((v): [string, string] => ['an unknown group', v]));
  // Updating, bumping or hiding an activity that does not exist is refused (showing one, or removing it, is not).
  if (parameter.name === 'activityId' && ['PATCH', 'POST', 'PUT'].includes(op.method)) choices.push(fc.uuid().map((v): [string, string] => ['an activity that does not exist', v]));
  return fc.oneof(...choices);
}

function queryParameterDefect(op: ApiOperation, context: MalformedRequestContext): fc.Arbitrary<MalformedRequest> | undefined {
  // A parameter the generator has no refused value for (a free string) has no defect of its own.
  const parameters = op.parameters.filter((p) => p.in === 'query' && QUERY_PROBES.some((probe) => !accepts(p.schema, probe) && (op.method === 'GET' || probe !== '')));
  if (parameters.length === 0) return undefined;
  const names = op.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  const single = fc.constantFrom(...parameters).chain((parameter) =>
    invalidQueryValue(parameter, op.method === 'GET').map(([kind, value]) => ({
      ...baseRequest(op, context, { query: `${encodeURIComponent(parameter.name)}=${value}` }),
      defect: `query ${parameter.name}: ${kind}`,
    })),
  );
  if (!(names.includes('cursor') && names.includes('after'))) return single;
  const both = fc.constant({ ...baseRequest(op, context, { query: 'cursor=abc&after=abc' }), defect: 'query: cursor with after' });
  return fc.oneof(single, both);
}

/** Values tried for query parameters; a parameter gets a defect only when its schema refuses one of them. */
const QUERY_PROBES = ['abc', '1.5', '-1', '0', '-0', '101', '1e3', '0x10', ' 1', '1 2', 'NaN', 'Infinity', '99999999999999999999999', 'TRUE', 'yes', '1', '', 'true ', 'null', '[]'];

/** A query value the schema refuses, encoded; an empty value only on reads, where a server reading it as absent writes nothing. */
function invalidQueryValue(parameter: OperationParameter, isRead: boolean): fc.Arbitrary<[string, string]> {
  const { schema } = parameter;
  const refused = (value: string) => !accepts(schema, value) && (isRead || value !== '');
  const candidates = fc.oneof(
    fc.constantFrom(...QUERY_PROBES),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
    fc.integer({ min: 1025, max: 10_000 }).map((n) => 'c'.repeat(n)),
    fc.integer({ min: 100_001, max: 9_999_999 }).map(String),
  );
  return fc.oneof(
    candidates.filter(refused).map((v): [string, string] => ['outside its schema', encodeURIComponent(v)]),
    fc.constantFrom(...BROKEN_ESCAPES).map((v): [string, string] => ['broken percent-encoding', v]),
  );
}

function bodyDefect(op: ApiOperation, context: MalformedRequestContext): fc.Arbitrary<MalformedRequest> {
  const schema = op.body!;
  const base = validBody(op, context) as Record<string, unknown>;
  const properties = Object.entries(schema.properties ?? {});
  const json = (defect: string, value: unknown) => withBody(op, context, defect, Buffer.from(JSON.stringify(value)));
  const choices: Array<fc.Arbitrary<MalformedRequest>> = [
    // A byte-order mark before a JSON text may be ignored (RFC 8259), so it comes before broken JSON only.
    fc
      .constantFrom('{', '{"a":', "{'a':1}", 'NaN', '[1,]', '{"a":1}}', '{"a":1,}', '\u00ef\u00bb\u00bf{"a":', 'undefined', '{"a":"\\u00"}', '{"a":01}')
      .map((text) => withBody(op, context, 'body: not JSON', Buffer.from(text, 'latin1'))),
    fc.integer({ min: 1, max: 40 }).map((cut) => {
      const text = JSON.stringify(base);
      return withBody(op, context, 'body: cut short', Buffer.from(text.slice(0, Math.max(0, text.length - cut))));
    }),
    fc.constantFrom<unknown>([], [base], 1, 'text', null, true).map((value) => json('body: not an object', value)),
  ];
  if (schema.additionalProperties === false) {
    choices.push(
      fc.constantFrom('__proto__', 'constructor', 'unexpected', '').map((name) => withBody(op, context, `body: extra property ${JSON.stringify(name)}`, Buffer.from(JSON.stringify(base).replace(/^\{/, `{${JSON.stringify(name)}:{"polluted":true}${Object.keys(base).length ? ',' : ''}`)))),
    );
  }
  choices.push(
    // From 2 deep: an empty list (depth 1) is a valid bulk request.
    fc.integer({ min: 2, max: 50_000 }).map((depth) => {
      // Nesting where the schema wants something flat: whatever the parser makes of it, it is invalid.
      const name = properties[0]?.[0] ?? 'nested';
      const nested = `${'['.repeat(depth)}${']'.repeat(depth)}`;
      return withBody(op, context, 'body: nested deep', Buffer.from(JSON.stringify({ ...base, [name]: '__N__' }).replace('"__N__"', nested)));
    }),
    fc.constantFrom(context.bodyLimit + 1, 4 * 1024 * 1024 + 1).map((size) => withBody(op, context, 'body: larger than allowed', Buffer.from(JSON.stringify({ padding: 'p'.repeat(size) })))),
    fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml', 'application/octet-stream', 'image/png').map((type) => ({
      ...baseRequest(op, context),
      headers: { ...baseRequest(op, context).headers, 'content-type': type },
      defect: `body: sent as ${type.split(';')[0]}`,
    })),
    fc.constant({ ...baseRequest(op, context), body: undefined, defect: 'body: none' }).map((request) => (op.bodyRequired ? request : { ...request, body: Buffer.from(''), defect: 'body: empty JSON' })),
  );
  if (schema.required?.length) {
    choices.push(fc.constantFrom(...schema.required).map((name) => json(`body: without ${name}`, omit(base, name))));
  }
  if (properties.length) {
    choices.push(fc.constantFrom(...properties).chain(([name, property]) => wrongType(property).map((value) => json(`body.${name}: wrong type`, { ...base, [name]: value }))));
    // Invalid UTF-8 inside a string the schema checks by length or pattern: a server that
    // replaced it would store a string the client never sent.
    const checked = properties.filter(([, p]) => p.type === 'string' && p.maxLength);
    if (checked.length) {
      choices.push(
        fc.constantFrom(...checked).map(([name, property]) => {
          const text = JSON.stringify({ ...base, [name]: '__S__' });
          const [before, after] = text.split('"__S__"') as [string, string];
          const bad = Buffer.concat([Buffer.from(`${before}"`), Buffer.alloc(property.maxLength! + 1, 0xff), Buffer.from(`"${after}`)]);
          return withBody(op, context, `body.${name}: invalid UTF-8`, bad);
        }),
      );
    }
  }
  for (const [name, property] of properties) {
    if (property.type === 'string' && property.maxLength) choices.push(fc.integer({ min: property.maxLength + 1, max: property.maxLength + 2000 }).map((n) => json(`body.${name}: too long`, { ...base, [name]: 'l'.repeat(n) })));
    if (property.type === 'array' && property.maxItems !== undefined) {
      const item = Array.isArray(base[name]) && (base[name] as unknown[]).length ? (base[name] as unknown[])[0] : validValue(property.items ?? {});
      choices.push(fc.constant(json(`body.${name}: too many items`, { ...base, [name]: Array.from({ length: property.maxItems + 1 }, () => item) })));
    }
    if (property.type === 'array' && property.items?.type === 'object' && Array.isArray(base[name])) {
      const items = base[name] as Array<Record<string, unknown>>;
      const itemProperties = Object.entries(property.items.properties ?? {});
      choices.push(
        fc
          .tuple(fc.constantFrom(...itemProperties), fc.integer({ min: 0, max: 5 }))
          .chain(([[itemName, itemSchema], at]) =>
            wrongType(itemSchema).map((value) => {
              const list = Array.from({ length: at + 1 }, (_, i) => items[i % items.length] ?? {});
              list[at] = { ...list[at], [itemName]: value };
              return json(`body.${name}[i].${itemName}: wrong type`, { ...base, [name]: list });
            }),
          ),
      );
    }
  }
  return fc.oneof(...choices);
}

function withBody(op: ApiOperation, context: MalformedRequestContext, defect: string, body: Buffer): MalformedRequest {
  return { ...baseRequest(op, context), body, defect };
}

/** A value of another JSON type than the schema's. */
function wrongType(schema: JsonSchema): fc.Arbitrary<unknown> {
  const all: Record<string, unknown[]> = {
    string: ['s', ''],
    number: [1, -1.5, 1e308],
    integer: [1, -1],
    boolean: [true, false],
    array: [[], [1]],
    object: [{}, { a: 1 }],
    null: [null],
  };
  const own = schema.type === 'integer' || schema.type === 'number' ? ['integer', 'number'] : [schema.type ?? 'object'];
  const others = Object.entries(all).flatMap(([type, values]) => (own.includes(type) ? [] : values));
  return fc.constantFrom(...others);
}

function tokenDefect(op: ApiOperation, context: MalformedRequestContext): fc.Arbitrary<MalformedRequest> {
  return fc.oneof(
    fc.constantFrom(...context.badAuthorizations).map((authorization) => {
      const request = baseRequest(op, context);
      return { ...request, headers: { ...request.headers, authorization }, defect: 'authorization: refused token' };
    }),
    fc.constant(0).map(() => {
      const request = baseRequest(op, context);
      delete request.headers['authorization'];
      return { ...request, defect: 'authorization: none' };
    }),
    // A valid token whose user owns none of the feeds named: refused on writes, and on reads of what it may not read.
    fc.constant(0).map(() => {
      const request = baseRequest(op, context);
      return { ...request, headers: { ...request.headers, authorization: `Bearer ${context.strangerToken}` }, defect: "authorization: a stranger's token" };
    }),
  );
}

function methodDefect(op: ApiOperation, taken: string[], context: MalformedRequestContext): fc.Arbitrary<MalformedRequest> | undefined {
  // HEAD is answered for every GET route, as HTTP says.
  const refused = ['GET', 'PUT', 'POST', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'FOO'].filter((m) => !taken.includes(m) && !(m === 'HEAD' && taken.includes('GET')));
  if (refused.length === 0) return undefined;
  return fc.constantFrom(...refused).map((method) => ({ ...baseRequest(op, context), method, defect: `method ${method}` }));
}

function headerSizeDefect(op: ApiOperation, context: MalformedRequestContext): fc.Arbitrary<MalformedRequest> {
  return fc.integer({ min: 17_000, max: 40_000 }).map((size) => {
    const request = baseRequest(op, context);
    return { ...request, headers: { ...request.headers, 'x-padding': 'h'.repeat(size) }, defect: 'headers: too large' };
  });
}

/** Harmless additions that make no request valid: unknown headers and query parameters, a content encoding. */
function withNoise(request: MalformedRequest): fc.Arbitrary<MalformedRequest> {
  return fc
    .record({
      header: fc.option(fc.constantFrom<[string, string]>(['x-unknown', 'y'], ['accept', 'text/html'], ['accept-encoding', 'br;q=2'], ['content-encoding', 'gzip'], ['x-request-id', 'x'.repeat(300)])),
      query: fc.option(fc.constantFrom('unknown=1', 'limit', '&&', 'a[b]=c', '%=%')),
    })
    .map(({ header, query }) => ({
      ...request,
      headers: header ? { ...request.headers, [header[0]]: header[1] } : request.headers,
      path: query ? `${request.path}${request.path.includes('?') ? '&' : '?'}${query}` : request.path,
    }));
}

/** Whether a string value meets a parameter's schema (the string forms a path or query takes). */
function accepts(schema: JsonSchema, value: string): boolean {
  if (schema.const !== undefined) return value === String(schema.const);
  if (schema.enum) return schema.enum.includes(value);
  if (schema.type === 'integer') {
    // Lenient on purpose (`0x10` and `1e1` count as numbers): only what no reading accepts is generated as refused.
    const n = Number(value);
    return value.trim() !== '' && Number.isInteger(n) && n >= (schema.minimum ?? -Infinity) && n <= (schema.maximum ?? Infinity);
  }
  if (schema.minLength !== undefined && value.length < schema.minLength) return false;
  if (schema.maxLength !== undefined && value.length > schema.maxLength) return false;
  if (schema.pattern) return new RegExp(schema.pattern, 'u').test(value);
  // A slice key, written like a feed id.
  if (!schema.type || schema.type === 'string') return schema.example === undefined || !/:/.test(String(schema.example)) || /^[a-z][a-z0-9_]{0,31}:[A-Za-z0-9_-]{1,128}$/.test(value);
  return true;
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function omit(value: Record<string, unknown>, name: string): Record<string, unknown> {
  const copy = { ...value };
  delete copy[name];
  return copy;
}

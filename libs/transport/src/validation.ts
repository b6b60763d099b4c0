import type { z } from 'zod';
import { FeedmillError } from '@feedmill/contracts';

/**
 * The most levels of objects and arrays an input may nest (an activity's `extra` is free-form
 * JSON). Deeper input is refused before a schema walks it: a walk a few thousand levels down
 * overflows the stack, which answered 500.
 */
export const MAX_INPUT_DEPTH = 64;
/**
 * Levels a service's request may wrap what a client sent in (a delivery's
 * `deliveries[i].activity.extra` holds an HTTP body's `extra`): a service checks its requests
 * this much deeper than the gateway checked the body, so that nothing the gateway took is
 * refused further on (a post accepted, then dead-lettered by fan-out).
 */
export const REQUEST_WRAPPING_LEVELS = 8;
/** Of a path that nests too deep, the first segments a refusal names. */
const FIELD_SEGMENTS_NAMED = 4;

const isContainer = (value: unknown): value is object => value !== null && typeof value === 'object';

/**
 * The path of the first object or array nested deeper than `levels`, looked for without
 * recursion; none when there is none. Only containers are walked: a flat body (most requests)
 * costs one look at its fields.
 */
function pathNestedPast(value: unknown, levels: number): Array<string | number> | undefined {
  if (!isContainer(value)) return undefined;
  const stack: Array<{ item: object; path: Array<string | number> }> = [{ item: value, path: [] }];
  while (stack.length > 0) {
    const { item, path } = stack.pop()!;
    if (path.length === levels) return path;
    const indexes = Array.isArray(item);
    for (const [key, child] of Object.entries(item)) if (isContainer(child)) stack.push({ item: child, path: [...path, indexes ? Number(key) : key] });
  }
  return undefined;
}

/**
 * Parses input against a schema; on failure throws one `invalid_request` error naming the
 * first offending field, prefixed with where it came from (`body.verb`, `query.limit`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location?: string, maxDepth = MAX_INPUT_DEPTH): z.output<S> {
  const tooDeep = pathNestedPast(value, maxDepth);
  if (tooDeep) {
    const field = fieldName(location, tooDeep.slice(0, FIELD_SEGMENTS_NAMED));
    throw new FeedmillError('invalid_request', `${field}: nests more than ${maxDepth} levels of objects and arrays`, field || undefined);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  // An unknown key is reported on its parent; name the key itself.
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
  const field = fieldName(location, path);
  const message = issue.code === 'unrecognized_keys' ? 'is not a known field' : issue.message;
  throw new FeedmillError('invalid_request', field ? `${field}: ${message}` : message, field || undefined);
}

/**
 * A field as errors name it: `body.to[0]`, `body.extra.tags`, array indexes in brackets as a
 * client indexes its own body, and as the checks after the schema name them.
 */
export function fieldName(location: string | undefined, path: ReadonlyArray<PropertyKey>): string {
  return path.reduce<string>((field, key) => (typeof key === 'number' ? `${field}[${key}]` : field ? `${field}.${String(key)}` : String(key)), location ?? '');
}

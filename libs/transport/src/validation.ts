import type { z } from 'zod';
import { FeedmillError } from '@feedmill/contracts';

/**
 * The most levels of objects and arrays an input may nest (an activity's `extra` is free-form
 * JSON). Deeper input is refused before a schema walks it: a walk a few thousand levels down
 * overflows the stack, which answered 500.
 */
export const MAX_INPUT_DEPTH = 64;
/** Of a path that nests too deep, the first segments a refusal names. */
const FIELD_SEGMENTS_NAMED = 4;

const isContainer = (value: unknown): value is object => value !== null && typeof value === 'object';

/**
 * The path of the first object or array nested deeper than `levels`, looked for without
 * recursion; none when there is none. Only containers are walked: a flat body (most requests)
 * costs one look at its fields.
 */
function pathNestedPast(value: unknown, levels: number): string[] | undefined {
  if (!isContainer(value)) return undefined;
  const stack: Array<{ item: object; path: string[] }> = [{ item: value, path: [] }];
  while (stack.length > 0) {
    const { item, path } = stack.pop()!;
    if (path.length === levels) return path;
    for (const [key, child] of Object.entries(item)) if (isContainer(child)) stack.push({ item: child, path: [...path, key] });
  }
  return undefined;
}

/**
 * Parses input against a schema; on failure throws one `invalid_request` error naming the
 * first offending field, prefixed with where it came from (`body.verb`, `query.limit`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location?: string): z.output<S> {
  const tooDeep = pathNestedPast(value, MAX_INPUT_DEPTH);
  if (tooDeep) {
    const field = [location, ...tooDeep.slice(0, FIELD_SEGMENTS_NAMED)].filter(Boolean).join('.');
    throw new FeedmillError('invalid_request', `${field}: nests more than ${MAX_INPUT_DEPTH} levels of objects and arrays`, field || undefined);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  let path = issue.path.map(String);
  // An unknown key is reported on its parent; name the key itself.
  if (issue.code === 'unrecognized_keys') path = [...path, issue.keys[0]!];
  const field = [location, ...path].filter(Boolean).join('.');
  const message = issue.code === 'unrecognized_keys' ? 'is not a known field' : issue.message;
  throw new FeedmillError('invalid_request', field ? `${field}: ${message}` : message, field || undefined);
}

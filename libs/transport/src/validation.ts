import type { z } from 'zod';
import { FeedmillError } from '@feedmill/contracts';

/**
 * Parses input against a schema; on failure throws one `invalid_request` error naming the
 * first offending field, prefixed with where it came from (`body.verb`, `query.limit`).
 */
export function parseInput<S extends z.ZodType>(schema: S, value: unknown, location?: string): z.output<S> {
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

/** MongoDB's error code for a write refused by a unique index. */
export const DUPLICATE_KEY = 11000;

/** Whether a write failed on a unique index: an upsert into an `_id` that exists but did not match. */
export function isDuplicateKeyError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'code' in error && error.code === DUPLICATE_KEY;
}

import { FeedmillError } from './errors.js';

/**
 * Timelines are ordered by a sort key: the activity time (fixed-width ISO text) then the
 * activity id, so that equal times still have one total order and cursors are stable.
 */
export type SortKey = string;

export function sortKeyOf(activity: { time: string; id: string }): SortKey {
  return `${activity.time}|${activity.id}`;
}

/**
 * The key of relevancy-ordered timelines (seed 001): the later of the activity's time and
 * its last bump, then the id. Without a bump it equals {@link sortKeyOf}.
 */
export function relevanceKeyOf(activity: { time: string; id: string; bumpedAt?: string }): SortKey {
  const relevance = activity.bumpedAt !== undefined && activity.bumpedAt > activity.time ? activity.bumpedAt : activity.time;
  return `${relevance}|${activity.id}`;
}

/** How a timeline orders its entries: by time, or by relevance. */
export type KeyOf = (activity: { time: string; id: string; bumpedAt?: string }) => SortKey;

/** The key of an order: cursors of a page ordered by relevance are relevance keys. */
export function keyOfOrder(order: 'time' | 'relevance' | undefined): KeyOf {
  return order === 'relevance' ? relevanceKeyOf : sortKeyOf;
}

/**
 * The smallest key greater than `key`: turns "at or below" into the "strictly below"
 * bound every read takes.
 */
export function justAbove(key: SortKey): SortKey {
  return key + '\u0000';
}

const CURSOR_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|[A-Za-z0-9_-]{1,128}$/;

/** Cursors are opaque to clients: the base64url form of the last key they were shown. */
export function encodeCursor(key: SortKey): string {
  return Buffer.from(key, 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string, field = 'cursor'): SortKey {
  const key = Buffer.from(cursor, 'base64url').toString('utf8');
  if (!CURSOR_PATTERN.test(key)) throw new FeedmillError('invalid_cursor', `${field} is not a cursor this API issued`, field);
  return key;
}

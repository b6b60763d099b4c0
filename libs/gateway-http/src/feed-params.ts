import { z } from 'zod';
import {
  decodeCursor,
  encodeCursor,
  FeedmillError,
  feedId,
  GROUP_PATTERN,
  groupCursorSchema,
  ID_PATTERN,
  isFeedId,
  type FeedId,
  type SortKey,
} from '@feedmill/contracts';
type GroupCursor = z.output<typeof groupCursorSchema>;
import { type FeedGroups } from '@feedmill/config';
import { parseInput } from '@feedmill/transport';

/**
 * Resolves `:group/:id` from a URL to a feed of the expected kind. An unknown group is a
 * 404; a malformed id or a group of the wrong kind is a 400 that names the parameter.
 */
export function resolveFeed(
  groups: FeedGroups,
  group: string,
  id: string,
  need?: 'producer' | 'timeline',
  names = { group: 'group', id: 'id' },
): FeedId {
  if (!GROUP_PATTERN.test(group)) throw new FeedmillError('unknown_group', `feed group "${group}" is not configured`, names.group);
  const kind = groups.kindOf(group, names.group);
  resolveId(id, names.id);
  if (need === 'producer' && kind !== 'producer') {
    throw new FeedmillError('group_not_writable', `${group} feeds are timelines: post to a producer feed instead`, names.group);
  }
  if (need === 'timeline' && kind !== 'timeline') {
    throw new FeedmillError('group_cannot_follow', `${group} feeds cannot follow: only timeline feeds do`, names.group);
  }
  return feedId(group, id);
}

/** Checks an id taken from the URL, naming the parameter when it is malformed. */
export function resolveId(id: string, field: string): string {
  if (!ID_PATTERN.test(id)) throw new FeedmillError('invalid_request', `${field}: must be 1 to 128 characters of A-Z, a-z, 0-9, "_" or "-"`, field);
  return id;
}

/** Checks the query of a route that takes none: any field is refused, naming it, as every other route refuses fields it does not know. */
export function parseNoQuery(query: unknown): void {
  parseInput(z.strictObject({}), query ?? {}, 'query');
}

export const pageQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(25),
  cursor: z.string().min(1).max(1024).optional(),
});

export interface PageQuery {
  limit: number;
  cursor?: string;
}

export function parsePageQuery(query: unknown): PageQuery {
  return parseInput(pageQuerySchema, query ?? {}, 'query');
}

/** A feed read's query: a page older than `cursor`, or newer-than polling with `after`; not both. */
export const feedReadQuerySchema = pageQuerySchema.extend({
  after: z.string().min(1).max(1024).optional().meta({ description: 'A cursor (a page’s `newest`): read only entries newer than it, the newest `limit` of them. Not with `cursor`.' }),
});

export interface FeedReadQuery {
  limit: number;
  /** The page cursor as sent: an activity cursor, or a group cursor on aggregated feeds. */
  cursor?: string;
  after?: SortKey;
}

/** Parses a feed read's query; `after` with `cursor` is a 400 that names `after`. */
export function parseFeedReadQuery(query: unknown): FeedReadQuery {
  const { limit, cursor, after } = parseInput(feedReadQuerySchema, query ?? {}, 'query');
  if (after !== undefined && cursor !== undefined) {
    throw new FeedmillError('invalid_request', 'query.after: cannot be used with query.cursor (one reads newer entries, the other older ones)', 'query.after');
  }
  return { limit, cursor, after: after === undefined ? undefined : decodeCursor(after, 'query.after') };
}

/** Sort-key cursors for activity pages. */
export const activityCursor = {
  decode: (cursor: string | undefined) => (cursor === undefined ? undefined : decodeCursor(cursor, 'query.cursor')),
  encode: (key: string | null) => (key === null ? null : encodeCursor(key)),
};

/**
 * Cursors for slice pages: an activity cursor, or a time boundary (`time|`, no id) where a
 * page stopped among activities the caller may not read, so that it names none of them.
 */
export const sliceCursor = {
  decode(cursor: string | undefined): SortKey | undefined {
    if (cursor === undefined) return undefined;
    const key = Buffer.from(cursor, 'base64url').toString('utf8');
    return TIME_BOUNDARY_PATTERN.test(key) ? key : decodeCursor(cursor, 'query.cursor');
  },
  encode: (key: SortKey | null) => (key === null ? null : encodeCursor(key)),
};

const TIME_BOUNDARY_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|$/;

/** Cursors for pages of groups: where the last group stands (its newest activity's key) and its id. */
export const groupCursor = {
  decode(cursor: string | undefined): GroupCursor | undefined {
    if (cursor === undefined) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const found = groupCursorSchema.safeParse(parsed);
    if (!found.success) throw new FeedmillError('invalid_cursor', 'query.cursor is not a cursor this API issued', 'query.cursor');
    return found.data;
  },
  encode: (cursor: GroupCursor | null) => (cursor === null ? null : Buffer.from(JSON.stringify({ key: cursor.key, id: cursor.id }), 'utf8').toString('base64url')),
};

/** Cursors for pages of hidden activities: the log position of the page's last hiding. */
export const hiddenCursor = {
  decode(cursor: string | undefined): number | undefined {
    if (cursor === undefined) return undefined;
    const position = /^h[0-9]{1,15}$/.test(cursor) ? Number(cursor.slice(1)) : NaN;
    if (!Number.isSafeInteger(position)) throw new FeedmillError('invalid_cursor', 'query.cursor is not a cursor this API issued', 'query.cursor');
    return position;
  },
  encode: (position: number | null) => (position === null ? null : `h${position}`),
};

/** Feed-id cursors for follower and following pages. */
export const edgeCursor = {
  decode(cursor: string | undefined): FeedId | undefined {
    if (cursor === undefined) return undefined;
    const value = Buffer.from(cursor, 'base64url').toString('utf8');
    if (!isFeedId(value)) throw new FeedmillError('invalid_cursor', 'query.cursor is not a cursor this API issued', 'query.cursor');
    return value;
  },
  encode: (feed: FeedId | null) => (feed === null ? null : Buffer.from(feed, 'utf8').toString('base64url')),
};

import { relevanceKeyOf, sortKeyOf, type Activity, type EdgeBound, type FeedId, type SortKey } from '@feedmill/contracts';
import type { FindOperation, IndexDefinition, ReplaceOperation, UpdateOperation } from './timeline-documents.js';

/** How far in the log a projection has applied every event: `{ _id: projection, position }`. */
export interface ProjectionPositionDocument {
  _id: string;
  position: number;
}

/** The last revision of one stream a projection applied: `{ _id: projection|stream, r }`. */
export interface StreamRevisionDocument {
  _id: string;
  r: number;
}

/** What every MongoDB projection keeps beside its data: its log position and per-stream revisions. */
export const projectionDocuments = {
  positions: 'projection_positions',
  revisions: 'projection_revisions',

  /** updateOne on positions: the projection applied everything up to `position`. */
  advance(projection: string, position: number): UpdateOperation {
    return { filter: { _id: projection }, update: { $max: { position } }, options: { upsert: true } };
  },

  revisionId: (projection: string, stream: string) => `${projection}|${stream}`,

  /**
   * findOneAndUpdate on revisions: records `revision` as applied, only if the stream stood
   * just before it. Revision 0 creates the document; a later attempt at 0 fails on its `_id`.
   */
  claim(projection: string, stream: string, revision: number): UpdateOperation {
    const _id = projectionDocuments.revisionId(projection, stream);
    return revision === 0
      ? { filter: { _id, r: { $exists: false } }, update: { $set: { r: 0 } }, options: { upsert: true, returnDocument: 'after' } }
      : { filter: { _id, r: revision - 1 }, update: { $set: { r: revision } }, options: { returnDocument: 'after' } };
  },

  /**
   * findOneAndUpdate on revisions, for a stream read in part: records `revision` as applied
   * if the stream stood anywhere before it (or nowhere yet); where it stands at or past it,
   * the upsert fails on the `_id`, as a claim made meanwhile by the other path does.
   */
  claimLater(projection: string, stream: string, revision: number): UpdateOperation {
    const _id = projectionDocuments.revisionId(projection, stream);
    return { filter: { _id, r: { $lt: revision } }, update: { $set: { r: revision } }, options: { upsert: true, returnDocument: 'after' } };
  },
};

/** One activity with what its queries filter and sort on. */
export interface ActivityDocument {
  _id: string;
  /** The feed it was posted to. */
  f: FeedId;
  /** Its sort key by time. */
  k: SortKey;
  /** Its sort key by relevance, raised by a bump. */
  rk: SortKey;
  /** The log position that added it: a reader asking as of an earlier position does not see it. */
  p: number;
  a: Activity;
  /** The poster's own id for it, unique per feed. */
  fid?: string;
  /** The timeline feeds it was addressed to, whose pulls read it with the feeds they follow. */
  to?: FeedId[];
  /** What it refers to (slice keys): a multikey index finds a slice by any of them. */
  refs?: string[];
}

/** Many feeds' recent activities by time and by relevance; a poster's own id unique per feed. */
const activityIndexes: IndexDefinition[] = [
  { key: { f: 1, k: -1 } },
  { key: { f: 1, rk: -1 } },
  { key: { f: 1, fid: 1 }, options: { unique: true, partialFilterExpression: { fid: { $exists: true } } } },
  { key: { to: 1, k: -1 }, options: { partialFilterExpression: { to: { $exists: true } } } },
  { key: { to: 1, rk: -1 }, options: { partialFilterExpression: { to: { $exists: true } } } },
  // Multikey: one entry per ref, each with the time key, so that a slice is one index range.
  { key: { refs: 1, k: -1 }, options: { partialFilterExpression: { refs: { $exists: true } } } },
];

/**
 * Activities, seed 001's way: one document per activity with its feed and sort key, so that
 * the recent activities of many feeds are one `$in` query on `{ f: 1, k: -1 }`.
 */
export const activityDocuments = {
  collection: 'activities',
  indexes: activityIndexes,

  /** replaceOne with upsert: an added activity (adding it again changes nothing). */
  added(activity: Activity, position: number): ReplaceOperation<ActivityDocument> {
    const document: ActivityDocument = { _id: activity.id, f: activity.feed, k: sortKeyOf(activity), rk: relevanceKeyOf(activity), p: position, a: activity };
    if (activity.foreignId !== undefined) document.fid = activity.foreignId;
    if (activity.to !== undefined) document.to = activity.to;
    if (activity.refs !== undefined) document.refs = activity.refs;
    return { filter: { _id: activity.id }, replacement: document, options: { upsert: true } };
  },

  /**
   * updateOne with upsert: the same document as {@link activityDocuments.added}, set field by
   * field so that many go in one bulk write.
   */
  addedAsUpdate(activity: Activity, position: number): UpdateOperation {
    const { _id, ...fields } = activityDocuments.added(activity, position).replacement;
    return { filter: { _id }, update: { $set: fields }, options: { upsert: true } };
  },

  removed: (id: string) => ({ _id: id }),

  /**
   * deleteMany filter: every activity an erased feed had before the erasure at `position`
   * (with it, its places in the target and ref indexes); one a replica appended after it and
   * applied before reading it stays.
   */
  erased: (feed: FeedId, position: number) => ({ f: feed, p: { $lt: position } }),

  /**
   * updateMany: no targets left on what was addressed to an erased timeline feed alone before
   * the erasure (its timeline goes, and a new owner of its id must not find it there), as an
   * activity addressed to none has none; found on the `to` index, as is
   * {@link activityDocuments.unaddressed}'s.
   */
  addressedOnlyTo: (feed: FeedId, position: number): UpdateOperation => ({ filter: { to: feed, 'to.1': { $exists: false }, p: { $lt: position } }, update: { $unset: { to: '', 'a.to': '' } } }),

  /** updateMany: an erased timeline feed out of the targets of the rest of what was addressed to it before the erasure. */
  unaddressed: (feed: FeedId, position: number): UpdateOperation => ({ filter: { to: feed, p: { $lt: position } }, update: { $pull: { to: feed, 'a.to': feed } } }),

  byIds: (ids: readonly string[]): FindOperation => ({ filter: { _id: { $in: ids } }, sort: { k: -1 }, limit: ids.length }),

  byForeignId: (feed: FeedId, foreignId: string) => ({ f: feed, fid: foreignId }),

  /** updateOne: a held activity as it now is (bumped, updated), with its relevance key; its time key and position stay. */
  changed(activity: Activity): UpdateOperation {
    return { filter: { _id: activity.id }, update: { $set: { a: activity, rk: relevanceKeyOf(activity) } } };
  },

  /** A slice: the activities whose refs hold `ref`, newest first by time key, on `{ refs: 1, k: -1 }`. */
  slice(ref: string, before: SortKey | undefined, limit: number): FindOperation {
    const filter: Record<string, unknown> = { refs: ref };
    if (before !== undefined) filter['k'] = { $lt: before };
    return { filter, sort: { k: -1 }, limit };
  },

  /**
   * The feeds' activities and those addressed to them (each once: it is one document). A
   * bounded feed is a clause of its own: its activities that the bound lets in, by time key
   * (`k`, whatever the order) and log position (`p`).
   */
  recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number, order: 'time' | 'relevance' = 'time', bounds?: readonly EdgeBound[]): FindOperation {
    const key = order === 'relevance' ? 'rk' : 'k';
    const bounded = new Map((bounds ?? []).map((bound) => [bound.feed, bound]));
    const whole = bounded.size === 0 ? feeds : feeds.filter((feed) => !bounded.has(feed));
    const clauses: Array<Record<string, unknown>> = [{ f: { $in: whole } }, { to: { $in: feeds } }];
    for (const feed of feeds) {
      const bound = bounded.get(feed);
      if (bound) clauses.push(boundClause(bound));
    }
    const filter: Record<string, unknown> = { $or: clauses };
    if (before !== undefined) filter[key] = { $lt: before };
    if (atMost !== undefined) filter['p'] = { $lte: atMost };
    return { filter, sort: { [key]: -1 }, limit };
  },
};

/** A bounded feed's activities as a filter: `isWithinBound` in MongoDB's terms. */
function boundClause(bound: EdgeBound): Record<string, unknown> {
  const clause: Record<string, unknown> = { f: bound.feed };
  if (bound.unfollowedAt !== undefined) clause['p'] = { $lte: bound.unfollowedAt };
  if (bound.since !== undefined) {
    clause['$or'] = bound.followedAt === undefined ? [{ k: { $gte: bound.since } }] : [{ k: { $gte: bound.since } }, { p: { $gt: bound.followedAt } }];
  }
  return clause;
}

/**
 * One follow edge, `{ _id: follower|target, f: follower, t: target, w }`, `w` the log
 * position of the event that wrote it (absent from documents written before it was kept); a
 * follow with a `since` keeps it (`s`) and its log position (`a`). A kept edge (an unfollow
 * that kept the history) is the same document in a collection of its own, with the
 * unfollow's position (`u`).
 */
export interface EdgeDocument {
  _id: string;
  f: FeedId;
  t: FeedId;
  w?: number;
  s?: string;
  a?: number;
  u?: number;
}

/**
 * Of an erased feed's documents, those written before the erasure at `position`: a replica
 * applies what it appended itself at once, so a follow it appended after an erasure that no
 * reader of the store had applied yet is already there when the erasure is, and stays.
 */
const writtenBefore = (position: number) => ({ w: { $not: { $gte: position } } });

/** A feed's followers and its followings, each paged in order. */
const edgeIndexes: IndexDefinition[] = [{ key: { t: 1, f: 1 } }, { key: { f: 1, t: 1 } }];

/** Follow edges, seed 004's way: one document per edge, indexed both ways. */
export const edgeDocuments = {
  collection: 'follows',
  indexes: edgeIndexes,

  id: (follower: FeedId, target: FeedId) => `${follower}|${target}`,

  /** The edge, with its bound when the follow has one: replaced whole, so that a follow without one clears it. */
  followed(follower: FeedId, target: FeedId, position: number, bound?: { since: string; followedAt: number }): ReplaceOperation<EdgeDocument> {
    const replacement: EdgeDocument = { _id: edgeDocuments.id(follower, target), f: follower, t: target, w: position };
    if (bound) {
      replacement.s = bound.since;
      replacement.a = bound.followedAt;
    }
    return { filter: { _id: replacement._id }, replacement, options: { upsert: true } };
  },

  /** The kept edge an unfollow at `position` leaves of a live one (with the live one's bound). */
  kept(live: EdgeDocument, position: number): ReplaceOperation<EdgeDocument> {
    // `w` stays the follow's: the kept edge holds what that follow brought, which an erasure between the two removes.
    return { filter: { _id: live._id }, replacement: { ...live, u: position }, options: { upsert: true } };
  },

  /** A follower's edges with a bound (of the live edges' collection), or all of its edges (of the kept ones'). */
  boundedOf(follower: FeedId, kept: boolean): FindOperation {
    return { filter: kept ? { f: follower } : { f: follower, s: { $exists: true } }, sort: { t: 1 }, limit: MAX_BOUNDED_EDGES };
  },

  /** Of the kept edges' collection: the readers keeping `target`'s history. */
  keptOf(target: FeedId): FindOperation {
    return { filter: { t: target }, sort: { f: 1 }, limit: MAX_BOUNDED_EDGES };
  },

  /** Of the kept edges' collection: all of them, by target then reader. */
  allKept(): FindOperation {
    return { filter: {}, sort: { t: 1, f: 1 }, limit: MAX_BOUNDED_EDGES };
  },

  /** The bound a live or kept edge document holds. */
  boundOf(document: EdgeDocument): EdgeBound {
    const bound: EdgeBound = { feed: document.t };
    if (document.s !== undefined) bound.since = document.s;
    if (document.a !== undefined) bound.followedAt = document.a;
    if (document.u !== undefined) bound.unfollowedAt = document.u;
    return bound;
  },

  /** updateOne with upsert: the same edge as {@link edgeDocuments.followed}, for a bulk write. */
  followedAsUpdate(follower: FeedId, target: FeedId, position: number): UpdateOperation {
    return { filter: { _id: edgeDocuments.id(follower, target) }, update: { $set: { f: follower, t: target, w: position } }, options: { upsert: true } };
  },

  /** The edges among `ids` that exist. */
  among(ids: readonly string[]): FindOperation {
    return { filter: { _id: { $in: ids } }, sort: { _id: 1 }, limit: ids.length };
  },

  followers(feed: FeedId, after: FeedId | undefined, limit: number): FindOperation {
    return { filter: after === undefined ? { t: feed } : { t: feed, f: { $gt: after } }, sort: { f: 1 }, limit };
  },

  /** deleteMany filter, of the live, kept and requested edges' collections alike: every edge of an erased feed, both ways, written before the erasure. */
  erased: (feed: FeedId, position: number) => ({ $or: [{ f: feed }, { t: feed }], ...writtenBefore(position) }),

  following(feed: FeedId, after: FeedId | undefined, limit: number): FindOperation {
    return { filter: after === undefined ? { f: feed } : { f: feed, t: { $gt: after } }, sort: { t: 1 }, limit };
  },
};

/** Bounded edges read per follower: a reader's pull takes them all, and no reader has this many. */
const MAX_BOUNDED_EDGES = 100_000;

/** Kept edges (unfollows that kept the history): edge documents in a collection of their own, read by follower. */
export const keptEdgeDocuments = {
  collection: 'kept_follows',
  indexes: [{ key: { f: 1, t: 1 } }, { key: { t: 1, f: 1 } }] as IndexDefinition[],
};

/** Follow requests waiting for a private feed's owner: edge documents in a collection of their own. */
export const followRequestDocuments = {
  collection: 'follow_requests',
  indexes: [{ key: { t: 1, f: 1 } }] as IndexDefinition[],
};

/** A feed's settings, one document each: `{ _id: feed, private, w }` (`w` as an edge's). */
export interface SettingsDocument {
  _id: FeedId;
  private: boolean;
  w?: number;
}

export const settingsDocuments = {
  collection: 'feed_settings',

  /** deleteMany filter: an erased feed's settings, written before the erasure. */
  erased: (feed: FeedId, position: number) => ({ _id: feed, ...writtenBefore(position) }),

  set(feed: FeedId, isPrivate: boolean, position: number): ReplaceOperation<SettingsDocument> {
    return { filter: { _id: feed }, replacement: { _id: feed, private: isPrivate, w: position }, options: { upsert: true } };
  },
};

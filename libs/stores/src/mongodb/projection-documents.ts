import { relevanceKeyOf, sortKeyOf, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
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
}

/** Many feeds' recent activities by time and by relevance; a poster's own id unique per feed. */
const activityIndexes: IndexDefinition[] = [
  { key: { f: 1, k: -1 } },
  { key: { f: 1, rk: -1 } },
  { key: { f: 1, fid: 1 }, options: { unique: true, partialFilterExpression: { fid: { $exists: true } } } },
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

  byIds: (ids: readonly string[]): FindOperation => ({ filter: { _id: { $in: ids } }, sort: { k: -1 }, limit: ids.length }),

  byForeignId: (feed: FeedId, foreignId: string) => ({ f: feed, fid: foreignId }),

  /** updateOne: a held activity as it now is (bumped, updated), with its relevance key; its time key and position stay. */
  changed(activity: Activity): UpdateOperation {
    return { filter: { _id: activity.id }, update: { $set: { a: activity, rk: relevanceKeyOf(activity) } } };
  },

  recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number, order: 'time' | 'relevance' = 'time'): FindOperation {
    const key = order === 'relevance' ? 'rk' : 'k';
    const filter: Record<string, unknown> = { f: { $in: feeds } };
    if (before !== undefined) filter[key] = { $lt: before };
    if (atMost !== undefined) filter['p'] = { $lte: atMost };
    return { filter, sort: { [key]: -1 }, limit };
  },
};

/** One follow edge, `{ _id: follower|target, f: follower, t: target }`. */
export interface EdgeDocument {
  _id: string;
  f: FeedId;
  t: FeedId;
}

/** A feed's followers and its followings, each paged in order. */
const edgeIndexes: IndexDefinition[] = [{ key: { t: 1, f: 1 } }, { key: { f: 1, t: 1 } }];

/** Follow edges, seed 004's way: one document per edge, indexed both ways. */
export const edgeDocuments = {
  collection: 'follows',
  indexes: edgeIndexes,

  id: (follower: FeedId, target: FeedId) => `${follower}|${target}`,

  followed(follower: FeedId, target: FeedId): ReplaceOperation<EdgeDocument> {
    return { filter: { _id: edgeDocuments.id(follower, target) }, replacement: { _id: edgeDocuments.id(follower, target), f: follower, t: target }, options: { upsert: true } };
  },

  /** updateOne with upsert: the same edge as {@link edgeDocuments.followed}, for a bulk write. */
  followedAsUpdate(follower: FeedId, target: FeedId): UpdateOperation {
    return { filter: { _id: edgeDocuments.id(follower, target) }, update: { $set: { f: follower, t: target } }, options: { upsert: true } };
  },

  /** The edges among `ids` that exist. */
  among(ids: readonly string[]): FindOperation {
    return { filter: { _id: { $in: ids } }, sort: { _id: 1 }, limit: ids.length };
  },

  followers(feed: FeedId, after: FeedId | undefined, limit: number): FindOperation {
    return { filter: after === undefined ? { t: feed } : { t: feed, f: { $gt: after } }, sort: { f: 1 }, limit };
  },

  following(feed: FeedId, after: FeedId | undefined, limit: number): FindOperation {
    return { filter: after === undefined ? { f: feed } : { f: feed, t: { $gt: after } }, sort: { t: 1 }, limit };
  },
};

/** Follow requests waiting for a private feed's owner: edge documents in a collection of their own. */
export const followRequestDocuments = {
  collection: 'follow_requests',
  indexes: [{ key: { t: 1, f: 1 } }] as IndexDefinition[],
};

/** A feed's settings, one document each: `{ _id: feed, private }`. */
export interface SettingsDocument {
  _id: FeedId;
  private: boolean;
}

export const settingsDocuments = {
  collection: 'feed_settings',

  set(feed: FeedId, isPrivate: boolean): ReplaceOperation<SettingsDocument> {
    return { filter: { _id: feed }, replacement: { _id: feed, private: isPrivate }, options: { upsert: true } };
  },
};

import { MongoBulkWriteError, type Collection, type Db, type Document } from 'mongodb';
import type { ArrayFieldOf, DocumentCollection, StoredDocument, TimelineCollections } from './document-collection.js';
import { DUPLICATE_KEY } from './duplicate-key.js';
import type { ProjectionCollections } from './mongo-projection.js';
import { activityDocuments, edgeDocuments, followRequestDocuments, keptEdgeDocuments, projectionDocuments } from './projection-documents.js';
import { cacheDocuments, readerMetaDocuments, ringDocuments, sizeBucketDocuments, timeBucketDocuments, type FindOperation, type ReplaceOperation, type UpdateOperation } from './timeline-documents.js';

/**
 * The builders' documents, passed to the MongoDB driver as they are.
 *
 * This is the one place a document read from MongoDB becomes a `TDocument` unchecked (the
 * driver's type arguments of `findOne` and `find`, the assertion after `findOneAndUpdate`):
 * sound because the builders of `TDocument` (timeline-documents.ts, projection-documents.ts)
 * are the only writers of the collection it is opened on, so every document in it has their shape.
 */
export class DriverCollection<TDocument extends StoredDocument> implements DocumentCollection<TDocument> {
  constructor(private readonly collection: Collection<Document>) {}

  findOne(filter: Record<string, unknown>) {
    return this.collection.findOne<TDocument>(filter, { projection: undefined });
  }

  find(operation: FindOperation) {
    return this.collection.find<TDocument>(operation.filter).sort(operation.sort).limit(operation.limit).toArray();
  }

  async updateOne(operation: UpdateOperation) {
    await this.collection.updateOne(operation.filter, operation.update, { upsert: operation.options?.upsert ?? false, ...arrayFiltersOf(operation) });
  }

  async updateMany(operation: UpdateOperation) {
    await this.collection.updateMany(operation.filter, operation.update, arrayFiltersOf(operation));
  }

  async findOneAndUpdate(operation: UpdateOperation) {
    return (await this.collection.findOneAndUpdate(operation.filter, operation.update, {
      upsert: operation.options?.upsert ?? false,
      returnDocument: operation.options?.returnDocument ?? 'after',
    })) as TDocument | null;
  }

  async replaceOne(operation: ReplaceOperation<TDocument>) {
    const result = await this.collection.replaceOne(operation.filter, operation.replacement, { upsert: operation.options?.upsert ?? false });
    return result.matchedCount > 0;
  }

  async deleteMany(filter: Record<string, unknown>) {
    return (await this.collection.deleteMany(filter)).deletedCount;
  }

  count(filter: Record<string, unknown>) {
    return this.collection.countDocuments(filter);
  }

  async bulkUpdate(operations: readonly UpdateOperation[]) {
    if (operations.length === 0) return [];
    try {
      await this.collection.bulkWrite(
        operations.map((op) => ({ updateOne: { filter: op.filter, update: op.update, upsert: op.options?.upsert ?? false } })),
        { ordered: false },
      );
      return [];
    } catch (error) {
      if (!(error instanceof MongoBulkWriteError)) throw error;
      const errors = Array.isArray(error.writeErrors) ? error.writeErrors : [error.writeErrors];
      if (errors.some((e) => e.code !== DUPLICATE_KEY)) throw error;
      return errors.map((e) => e.index);
    }
  }

  async sumOfArrayLengths(field: ArrayFieldOf<TDocument>) {
    const [row] = await this.collection.aggregate<{ n: number }>([{ $group: { _id: null, n: { $sum: { $size: { $ifNull: [`$${field}`, []] } } } } }]).toArray();
    return row?.n ?? 0;
  }
}

/** The operation's `arrayFilters`, as the driver's options take them (none when it has none). */
function arrayFiltersOf(operation: UpdateOperation): { arrayFilters?: Document[] } {
  return operation.options?.arrayFilters ? { arrayFilters: operation.options.arrayFilters } : {};
}

/** The timeline collections of a database, with the indexes their queries need. */
export async function timelineCollections(db: Db, prefix = ''): Promise<TimelineCollections> {
  const cache = db.collection(prefix + cacheDocuments.collection);
  const ring = db.collection(prefix + ringDocuments.entries);
  const timeBuckets = db.collection(prefix + timeBucketDocuments.collection);
  const sizeBuckets = db.collection(prefix + sizeBucketDocuments.collection);
  for (const index of cacheDocuments.indexes) await cache.createIndex(index.key, index.options);
  for (const index of ringDocuments.indexes) await ring.createIndex(index.key);
  for (const index of timeBucketDocuments.indexes) await timeBuckets.createIndex(index.key);
  for (const index of sizeBucketDocuments.indexes) await sizeBuckets.createIndex(index.key);
  return {
    positions: new DriverCollection(db.collection(`${prefix}timeline_positions`)),
    cache: new DriverCollection(cache),
    meta: new DriverCollection(db.collection(prefix + readerMetaDocuments.collection)),
    ring: new DriverCollection(ring),
    timeBuckets: new DriverCollection(timeBuckets),
    sizeBuckets: new DriverCollection(sizeBuckets),
  };
}

/** The collections every projection keeps its position and revisions in, and the data indexes. */
export async function projectionCollections(db: Db, prefix = ''): Promise<ProjectionCollections> {
  const activities = db.collection(prefix + activityDocuments.collection);
  for (const index of activityDocuments.indexes) await activities.createIndex(index.key, index.options ?? {});
  const edges = db.collection(prefix + edgeDocuments.collection);
  for (const index of edgeDocuments.indexes) await edges.createIndex(index.key);
  const requests = db.collection(prefix + followRequestDocuments.collection);
  for (const index of followRequestDocuments.indexes) await requests.createIndex(index.key);
  const kept = db.collection(prefix + keptEdgeDocuments.collection);
  for (const index of keptEdgeDocuments.indexes) await kept.createIndex(index.key);
  return {
    positions: new DriverCollection(db.collection(prefix + projectionDocuments.positions)),
    revisions: new DriverCollection(db.collection(prefix + projectionDocuments.revisions)),
  };
}

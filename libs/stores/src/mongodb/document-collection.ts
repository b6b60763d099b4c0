import type { FindOperation, UpdateOperation } from './timeline-documents.js';

export type StoredDocument = Record<string, unknown>;

/**
 * The few collection operations the MongoDB stores use, on the documents the builders make.
 * The driver adapter passes them through; tests run them on mingo.
 */
export interface DocumentCollection {
  findOne(filter: Record<string, unknown>): Promise<StoredDocument | null>;
  find(operation: FindOperation): Promise<StoredDocument[]>;
  updateOne(operation: UpdateOperation): Promise<void>;
  updateMany(operation: UpdateOperation): Promise<void>;
  /** Returns the document before or after the update, as the operation's options say. */
  findOneAndUpdate(operation: UpdateOperation): Promise<StoredDocument | null>;
  /** `operation.update` is the whole replacement. Returns whether a document matched. */
  replaceOne(operation: UpdateOperation): Promise<boolean>;
  deleteMany(filter: Record<string, unknown>): Promise<number>;
  count(filter: Record<string, unknown>): Promise<number>;
  /** The sum of the lengths of an array field over all documents. */
  sumOfArrayLengths(field: string): Promise<number>;
  /**
   * updateOne operations in one round trip, in no particular order. Returns the indexes of
   * those refused on a duplicate key (an upsert into an `_id` that exists but did not match).
   */
  bulkUpdate(operations: readonly UpdateOperation[]): Promise<number[]>;
}

/** The collections of the timeline models. */
export interface TimelineCollections {
  positions: DocumentCollection;
  cache: DocumentCollection;
  /** One document per materialized reader: its floor and its model's counters. */
  meta: DocumentCollection;
  ring: DocumentCollection;
  timeBuckets: DocumentCollection;
  sizeBuckets: DocumentCollection;
}

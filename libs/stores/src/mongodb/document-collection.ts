import type {
  CacheDocument,
  FindOperation,
  ReaderMetaDocument,
  ReplaceOperation,
  RingSlotDocument,
  SizeBucketDocument,
  TimeBucketDocument,
  TimelinePositionDocument,
  UpdateOperation,
} from './timeline-documents.js';

/** What every stored document has: its key. */
export interface StoredDocument {
  _id: string;
}

/** The fields of a document that hold arrays. */
export type ArrayFieldOf<TDocument> = { [K in keyof TDocument & string]: TDocument[K] extends readonly unknown[] ? K : never }[keyof TDocument & string];

/**
 * The few collection operations the MongoDB stores use, on the documents the builders make.
 * Each collection holds one kind of document, so what it returns is typed; filters and
 * updates stay plain data. The driver adapter passes them through; tests run them on mingo.
 */
export interface DocumentCollection<TDocument extends StoredDocument> {
  findOne(filter: Record<string, unknown>): Promise<TDocument | null>;
  find(operation: FindOperation): Promise<TDocument[]>;
  updateOne(operation: UpdateOperation): Promise<void>;
  updateMany(operation: UpdateOperation): Promise<void>;
  /** Returns the document before or after the update, as the operation's options say. */
  findOneAndUpdate(operation: UpdateOperation): Promise<TDocument | null>;
  /** Returns whether a document matched. */
  replaceOne(operation: ReplaceOperation<TDocument>): Promise<boolean>;
  deleteMany(filter: Record<string, unknown>): Promise<number>;
  count(filter: Record<string, unknown>): Promise<number>;
  /** The sum of the lengths of an array field over all documents. */
  sumOfArrayLengths(field: ArrayFieldOf<TDocument>): Promise<number>;
  /**
   * updateOne operations in one round trip, in no particular order. Returns the indexes of
   * those refused on a duplicate key (an upsert into an `_id` that exists but did not match).
   */
  bulkUpdate(operations: readonly UpdateOperation[]): Promise<number[]>;
}

/** The collections of the timeline models. */
export interface TimelineCollections {
  positions: DocumentCollection<TimelinePositionDocument>;
  cache: DocumentCollection<CacheDocument>;
  /** One document per materialized reader: its floor and its model's counters. */
  meta: DocumentCollection<ReaderMetaDocument>;
  ring: DocumentCollection<RingSlotDocument>;
  timeBuckets: DocumentCollection<TimeBucketDocument>;
  sizeBuckets: DocumentCollection<SizeBucketDocument>;
}

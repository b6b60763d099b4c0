import { find, update } from 'mingo';
import type { AnyObject } from 'mingo/types';
import type { ArrayFieldOf, DocumentCollection, StoredDocument } from '../mongodb/document-collection.js';
import { DUPLICATE_KEY, isDuplicateKeyError } from '../mongodb/duplicate-key.js';
import type { FindOperation, ReplaceOperation, UpdateOperation } from '../mongodb/timeline-documents.js';

/**
 * A collection that runs the builders' documents with mingo, MongoDB's query and update
 * language in memory, including what mingo leaves to the server: the document an upsert
 * starts from (the filter's equality fields), and a duplicate `_id` refused.
 *
 * mingo works on plain records, so a stored document is handed to it as one, and what an
 * upsert makes is taken as a `TDocument` unchecked: sound because the builders of
 * `TDocument` are the only writers of the collection, as they are of a MongoDB one.
 */
export class MingoCollection<TDocument extends StoredDocument> implements DocumentCollection<TDocument> {
  readonly documents: TDocument[] = [];

  private matching(filter: Record<string, unknown>): TDocument[] {
    return find<TDocument>(this.documents, filter).all();
  }

  private insert(document: TDocument): void {
    if (this.documents.some((d) => d._id === document._id)) throw Object.assign(new Error('E11000 duplicate key'), { code: DUPLICATE_KEY });
    this.documents.push(document);
  }

  private upsertSeed(filter: Record<string, unknown>): AnyObject {
    const seed: AnyObject = {};
    for (const [key, value] of Object.entries(filter)) {
      const isOperator = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).some((k) => k.startsWith('$'));
      if (!key.startsWith('$') && !key.includes('.') && !isOperator) seed[key] = structuredClone(value);
    }
    return seed;
  }

  /** Applies an update in place, its `$[name]` paths limited by `arrayFilters`. */
  private static apply(document: object, modifier: Record<string, unknown>, arrayFilters?: AnyObject[]): void {
    update(document as AnyObject, modifier, arrayFilters);
  }

  async findOne(filter: Record<string, unknown>) {
    const [first] = this.matching(filter);
    return first ? structuredClone(first) : null;
  }

  async find(operation: FindOperation) {
    return find<TDocument>(this.documents, operation.filter)
      .sort(operation.sort)
      .limit(operation.limit)
      .all()
      .map((d) => structuredClone(d));
  }

  async updateOne(operation: UpdateOperation) {
    await this.findOneAndUpdate(operation);
  }

  async updateMany(operation: UpdateOperation) {
    if (operation.options?.upsert) throw new Error('updateMany never upserts here');
    for (const document of this.matching(operation.filter)) MingoCollection.apply(document, operation.update, operation.options?.arrayFilters);
  }

  async findOneAndUpdate(operation: UpdateOperation) {
    const [document] = this.matching(operation.filter);
    if (document) {
      const before = structuredClone(document);
      MingoCollection.apply(document, operation.update, operation.options?.arrayFilters);
      return operation.options?.returnDocument === 'before' ? before : structuredClone(document);
    }
    if (!operation.options?.upsert) return null;
    const seed = this.upsertSeed(operation.filter);
    MingoCollection.apply(seed, operation.update);
    const created = seed as TDocument;
    this.insert(created);
    return operation.options.returnDocument === 'after' ? structuredClone(created) : null;
  }

  async replaceOne(operation: ReplaceOperation<TDocument>) {
    const index = this.documents.findIndex((d) => this.matching(operation.filter).includes(d));
    if (index >= 0) {
      this.documents[index] = structuredClone(operation.replacement);
      return true;
    }
    if (operation.options?.upsert) this.insert(structuredClone(operation.replacement));
    return false;
  }

  async deleteMany(filter: Record<string, unknown>) {
    const doomed = new Set(this.matching(filter));
    const before = this.documents.length;
    this.documents.splice(0, this.documents.length, ...this.documents.filter((d) => !doomed.has(d)));
    return before - this.documents.length;
  }

  async count(filter: Record<string, unknown>) {
    return this.matching(filter).length;
  }

  async bulkUpdate(operations: readonly UpdateOperation[]) {
    const duplicates: number[] = [];
    for (const [index, operation] of operations.entries()) {
      try {
        await this.updateOne(operation);
      } catch (error) {
        if (!isDuplicateKeyError(error)) throw error;
        duplicates.push(index);
      }
    }
    return duplicates;
  }

  async sumOfArrayLengths(field: ArrayFieldOf<TDocument>) {
    return this.documents.reduce((sum, d) => {
      const values = d[field];
      return sum + (Array.isArray(values) ? values.length : 0);
    }, 0);
  }
}

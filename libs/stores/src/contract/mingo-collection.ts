import { find, update } from 'mingo';
import type { DocumentCollection, StoredDocument } from '../mongodb/document-collection.js';
import { DUPLICATE_KEY, isDuplicateKeyError } from '../mongodb/duplicate-key.js';
import type { FindOperation, UpdateOperation } from '../mongodb/timeline-documents.js';

/**
 * A collection that runs the builders' documents with mingo, MongoDB's query and update
 * language in memory, including what mingo leaves to the server: the document an upsert
 * starts from (the filter's equality fields), and a duplicate `_id` refused.
 */
export class MingoCollection implements DocumentCollection {
  readonly documents: StoredDocument[] = [];

  private matching(filter: Record<string, unknown>): StoredDocument[] {
    return find(this.documents, filter).all() as StoredDocument[];
  }

  private insert(document: StoredDocument): void {
    if (this.documents.some((d) => d['_id'] === document['_id'])) throw Object.assign(new Error('E11000 duplicate key'), { code: DUPLICATE_KEY });
    this.documents.push(document);
  }

  private upsertSeed(filter: Record<string, unknown>): StoredDocument {
    const seed: StoredDocument = {};
    for (const [key, value] of Object.entries(filter)) {
      const isOperator = typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).some((k) => k.startsWith('$'));
      if (!key.startsWith('$') && !key.includes('.') && !isOperator) seed[key] = structuredClone(value);
    }
    return seed;
  }

  async findOne(filter: Record<string, unknown>) {
    const [first] = this.matching(filter);
    return first ? structuredClone(first) : null;
  }

  async find(operation: FindOperation) {
    return (find(this.documents, operation.filter).sort(operation.sort).limit(operation.limit).all() as StoredDocument[]).map((d) => structuredClone(d));
  }

  async updateOne(operation: UpdateOperation) {
    await this.findOneAndUpdate(operation);
  }

  async updateMany(operation: UpdateOperation) {
    if (operation.options?.upsert) throw new Error('updateMany never upserts here');
    for (const document of this.matching(operation.filter)) update(document, operation.update as never);
  }

  async findOneAndUpdate(operation: UpdateOperation) {
    const [document] = this.matching(operation.filter);
    if (document) {
      const before = structuredClone(document);
      update(document, operation.update as never);
      return operation.options?.returnDocument === 'before' ? before : structuredClone(document);
    }
    if (!operation.options?.upsert) return null;
    const created = this.upsertSeed(operation.filter);
    update(created, operation.update as never);
    this.insert(created);
    return operation.options.returnDocument === 'after' ? structuredClone(created) : null;
  }

  async replaceOne(operation: UpdateOperation) {
    const index = this.documents.findIndex((d) => this.matching(operation.filter).includes(d));
    if (index >= 0) {
      this.documents[index] = structuredClone(operation.update);
      return true;
    }
    if (operation.options?.upsert) this.insert(structuredClone(operation.update));
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

  async sumOfArrayLengths(field: string) {
    return this.documents.reduce((sum, d) => sum + ((d[field] as unknown[] | undefined)?.length ?? 0), 0);
  }
}


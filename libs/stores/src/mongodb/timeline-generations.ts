import type { DocumentCollection } from './document-collection.js';

const ACTIVE = 'timeline';

/** Which generation serves reads: `{ _id: 'timeline', generation }`. */
export interface GenerationPointerDocument {
  _id: string;
  generation: number;
}

/**
 * Which generation of timeline collections serves reads. A rebuild fills a new generation
 * and activates it once caught up; a restart opens the active one, not the first.
 */
export class TimelineGenerations {
  constructor(private readonly pointers: DocumentCollection<GenerationPointerDocument>) {}

  async active(): Promise<number> {
    const document = await this.pointers.findOne({ _id: ACTIVE });
    return document?.generation ?? 0;
  }

  async activate(generation: number): Promise<void> {
    await this.pointers.updateOne({ filter: { _id: ACTIVE }, update: { $set: { generation } }, options: { upsert: true } });
  }

  /** The collection-name prefix of a generation: none for the first. */
  static prefixOf(generation: number): string {
    return generation === 0 ? '' : `g${generation}_`;
  }
}

import { feedEvents, type FeedEvent } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { Projection } from '../ports.js';
import { ProjectionPosition } from '../projection-position.js';
import type { DocumentCollection } from './document-collection.js';
import { isDuplicateKeyError } from './duplicate-key.js';
import { projectionDocuments, type ProjectionPositionDocument, type StreamRevisionDocument } from './projection-documents.js';

export interface ProjectionCollections {
  positions: DocumentCollection<ProjectionPositionDocument>;
  revisions: DocumentCollection<StreamRevisionDocument>;
}

/**
 * What every MongoDB projection shares. An event is applied only when its stream stands at
 * the revision before it; the write itself is idempotent and comes before the revision is
 * recorded, so a crash between the two is repaired by the replay that follows it.
 */
export abstract class MongoProjection implements Projection {
  abstract readonly name: string;
  protected abstract readonly eventTypes: ReadonlySet<string>;
  private readonly applied = new ProjectionPosition();
  private loaded = false;

  constructor(protected readonly meta: ProjectionCollections) {}

  /** Stores what one event of `eventTypes` changes; must be idempotent. */
  protected abstract evolve(event: FeedEvent, position: number): Promise<void>;

  async position(): Promise<number> {
    if (!this.loaded) {
      const document = await this.meta.positions.findOne({ _id: this.name });
      this.applied.advanceTo(document?.position ?? 0);
      this.loaded = true;
    }
    return this.applied.value;
  }

  async reach(position: number | undefined): Promise<void> {
    await this.applied.reach(position);
  }

  async streamRevision(stream: string): Promise<number> {
    const document = await this.meta.revisions.findOne({ _id: projectionDocuments.revisionId(this.name, stream) });
    return document?.r ?? -1;
  }

  async apply(events: readonly RecordedEvent[]): Promise<void> {
    for (const event of events) await this.applyOne(event);
    const last = events[events.length - 1];
    if (!last) return;
    await this.meta.positions.updateOne(projectionDocuments.advance(this.name, last.position));
    this.applied.advanceTo(last.position);
  }

  async applyOwn(event: RecordedEvent): Promise<void> {
    await this.applyOne(event);
  }

  private async applyOne(record: RecordedEvent): Promise<void> {
    const event = this.eventTypes.has(record.type) ? feedEvents.decode(record) : undefined;
    if (!event) return;
    if ((await this.streamRevision(record.stream)) !== record.revision - 1) return;
    await this.evolve(event, record.position);
    try {
      await this.meta.revisions.findOneAndUpdate(projectionDocuments.claim(this.name, record.stream, record.revision));
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error; // applied meanwhile by the other path: fine
    }
  }
}

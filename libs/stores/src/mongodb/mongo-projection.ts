import { eventItems, feedEvents, type FeedEvent, type FeedLogEvent } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { Projection } from '../ports.js';
import { ProjectionPosition } from '../projection-position.js';
import type { DocumentCollection, StoredDocument } from './document-collection.js';
import { isDuplicateKeyError } from './duplicate-key.js';
import { projectionDocuments, type ProjectionPositionDocument, type StreamRevisionDocument } from './projection-documents.js';
import type { UpdateOperation } from './timeline-documents.js';

const NONE: ReadonlySet<string> = new Set();

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
  /**
   * Types applied from streams whose other events this projection does not read (graph reads
   * an erasure from its feed's activity stream): such an event is applied when it is later in
   * its stream than the last one applied there, not only when it is the very next. Sound only
   * for streams the projection's service never appends to: it sees their events in log order
   * alone, so no later revision is applied before an earlier one.
   * @defaultValue none
   */
  protected readonly partlyReadTypes: ReadonlySet<string> = NONE;
  private readonly applied = new ProjectionPosition();
  private loaded = false;

  constructor(protected readonly meta: ProjectionCollections) {}

  /** Stores what one single event of `eventTypes` changes; must be idempotent. */
  protected abstract evolve(event: FeedEvent, position: number): Promise<void>;

  /**
   * Stores what a batch's items change, all of them before the batch's revision is claimed,
   * so that a crash in between is repaired by the replay, as for one event. One at a time
   * here; a store whose items touch distinct documents (decide leaves out repeats) may
   * write them in one round trip instead.
   */
  protected async evolveItems(items: readonly FeedEvent[], position: number): Promise<void> {
    for (const item of items) await this.evolve(item, position);
  }

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

  async applyOwn(event: RecordedEvent, decided: FeedLogEvent): Promise<void> {
    await this.applyOne(event, decided);
  }

  private async applyOne(record: RecordedEvent, decided?: FeedLogEvent): Promise<void> {
    if (!this.eventTypes.has(record.type)) return;
    const partly = this.partlyReadTypes.has(record.type);
    const standing = await this.streamRevision(record.stream);
    if (partly ? standing >= record.revision : standing !== record.revision - 1) return;
    const event = decided ?? feedEvents.decode(record);
    if (!event) return;
    const items = eventItems(event);
    if (items.length === 1) await this.evolve(items[0]!, record.position);
    else await this.evolveItems(items, record.position);
    try {
      await this.meta.revisions.findOneAndUpdate((partly ? projectionDocuments.claimLater : projectionDocuments.claim)(this.name, record.stream, record.revision));
    } catch (error) {
      if (!isDuplicateKeyError(error)) throw error; // applied meanwhile by the other path: fine
    }
  }
}

/**
 * Runs idempotent upserts in one round trip. An upsert refused on a duplicate key lost a race
 * with another writer of the same document, which now exists: run again, it updates it.
 */
export async function bulkUpdateAll<TDocument extends StoredDocument>(collection: DocumentCollection<TDocument>, operations: readonly UpdateOperation[]): Promise<void> {
  const refused = await collection.bulkUpdate(operations);
  if (refused.length === 0) return;
  const again = await collection.bulkUpdate(refused.map((index) => operations[index]!));
  if (again.length > 0) throw new Error(`${again.length} upserts were refused on a duplicate key twice, the first on ${JSON.stringify(operations[refused[again[0]!]!]!.filter)}`);
}

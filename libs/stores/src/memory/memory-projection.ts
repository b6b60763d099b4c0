import { eventItems, feedEvents, type FeedEvent, type FeedLogEvent } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { Projection } from '../ports.js';
import { ProjectionPosition } from '../projection-position.js';
import { StreamRevisions } from '../stream-revisions.js';
import { SnapshotCorruptError } from '../snapshots/snapshot-file.js';
import { SnapshotReader, SnapshotWriter } from '../snapshots/snapshot-sections.js';
import { allSteps, WritesHeld, type SnapshotState, type SnapshotSteps, type Snapshottable } from '../snapshots/snapshottable.js';

const NONE: ReadonlySet<string> = new Set();

/**
 * What every memory projection shares: the position it has applied, per-stream revisions
 * that make applying idempotent, and waiting for a position. Subclasses say which event
 * types they read and how each changes their state.
 */
export abstract class MemoryProjection implements Projection, Snapshottable {
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
  private readonly revisions = new StreamRevisions();
  private readonly applied = new ProjectionPosition();
  private appliedCount = 0;
  private readonly writes = new WritesHeld();

  /** Writes the projection's own state into a snapshot, yielding between parts (see {@link snapshotSteps}). */
  protected abstract writeState(writer: SnapshotWriter): Generator<void, void, void>;
  /**
   * Reads what {@link writeState} wrote, changing nothing yet, and returns what installs it
   * in place of the (empty) state: a payload that does not read leaves the projection empty.
   */
  protected abstract readState(reader: SnapshotReader): () => void;

  /** The log position the projection's reader has applied up to (its own appends may be further on). */
  protected get readPosition(): number {
    return this.applied.value;
  }

  get appliedEvents(): number {
    return this.appliedCount;
  }

  takeSnapshot(): SnapshotState {
    return allSteps(this.snapshotSteps());
  }

  *snapshotSteps(): SnapshotSteps {
    this.writes.hold();
    try {
      const writer = new SnapshotWriter();
      const revisions = this.revisions.toMap();
      writer.strings([...revisions.keys()]).float64s(Float64Array.from(revisions.values()));
      yield;
      yield* this.writeState(writer);
      return { position: this.applied.value, payload: writer.finish() };
    } finally {
      this.writes.end();
    }
  }

  restoreSnapshot(snapshot: SnapshotState): void {
    if (this.applied.value !== 0 || this.appliedCount !== 0) throw new Error(`${this.name}: a snapshot restores only an empty projection`);
    const reader = new SnapshotReader(snapshot.payload);
    const streams = reader.presentStrings();
    const revisions = reader.float64s();
    if (streams.length !== revisions.length) throw new SnapshotCorruptError(`${streams.length} streams and ${revisions.length} revisions`);
    const install = this.readState(reader);
    reader.end();
    this.revisions.restore(new Map(streams.map((stream, i) => [stream, revisions[i]!])));
    install();
    this.applied.advanceTo(snapshot.position);
  }

  /**
   * Stores what one single event changes; called once per event of `eventTypes` in stream
   * order, and for a batch once per item, in the batch's order.
   */
  protected abstract evolve(event: FeedEvent, position: number): void;

  /**
   * Stores what one logged event changes: each of its items ({@link eventItems}) in order. A
   * store may take a batch's items as they are, without an object per item, to the same effect.
   */
  protected evolveLogged(event: FeedLogEvent, position: number): void {
    const items = eventItems(event);
    for (let index = 0; index < items.length; index++) this.evolve(items[index]!, position);
  }

  async position(): Promise<number> {
    return this.applied.value;
  }

  async reach(position: number | undefined): Promise<void> {
    await this.applied.reach(position);
  }

  async streamRevision(stream: string): Promise<number> {
    return this.revisions.of(stream);
  }

  async apply(events: readonly RecordedEvent[]): Promise<void> {
    if (this.writes.now) await this.writes.cleared();
    for (const event of events) this.applyOne(event);
    this.appliedCount += events.length;
    const last = events[events.length - 1];
    if (last) this.applied.advanceTo(last.position);
  }

  async applyOwn(event: RecordedEvent, decided: FeedLogEvent): Promise<void> {
    if (this.writes.now) await this.writes.cleared();
    this.applyOne(event, decided);
    this.appliedCount++;
    this.appliedAhead(event, decided);
  }

  /**
   * Called in the same turn as an own event is applied, ahead of the log reader when its
   * position is past {@link readPosition}: a projection that must apply such events again
   * (see the graph's erasures) keeps them here, before the reader's next batch can run.
   */
  protected appliedAhead(_event: RecordedEvent, _decided: FeedLogEvent): void {}

  private applyOne(record: RecordedEvent, decided?: FeedLogEvent): void {
    // The type and the revision are checked before decoding: other services' events, and the
    // service's own events coming back from the log, are skipped without it (a batch of
    // 10,000 follows takes milliseconds to decode).
    if (!this.eventTypes.has(record.type)) return;
    const partly = this.partlyReadTypes.has(record.type);
    if (!(partly ? this.revisions.isNewer(record) : this.revisions.isNext(record))) return;
    const event = decided ?? feedEvents.decode(record);
    if (event && this.revisions.claim(record, partly)) this.evolveLogged(event, record.position);
  }
}

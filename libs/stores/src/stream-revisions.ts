import type { RecordedEvent } from '@feedmill/event-log';

/**
 * The last applied revision of each stream. An event is applied only when it is the next
 * one of its stream: replays and double deliveries are skipped, and a service may apply its
 * own event right after appending it without ever applying one out of order.
 */
export class StreamRevisions {
  private readonly revisions = new Map<string, number>();

  of(stream: string): number {
    return this.revisions.get(stream) ?? -1;
  }

  /** True when `event` is the stream's next one. */
  isNext(event: Pick<RecordedEvent, 'stream' | 'revision'>): boolean {
    return event.revision === this.of(event.stream) + 1;
  }

  /**
   * True when `event` is later in its stream than the last one applied: for a stream read in
   * part, whose other events leave gaps between the revisions applied (see `partlyReadTypes`).
   */
  isNewer(event: Pick<RecordedEvent, 'stream' | 'revision'>): boolean {
    return event.revision > this.of(event.stream);
  }

  /** Every stream's revision, for a snapshot. */
  toMap(): ReadonlyMap<string, number> {
    return this.revisions;
  }

  /** Replaces every revision with a snapshot's. */
  restore(revisions: ReadonlyMap<string, number>): void {
    this.revisions.clear();
    for (const [stream, revision] of revisions) this.revisions.set(stream, revision);
  }

  /** True when `event` is the stream's next one (later than the last one applied, with `partly`); records it as applied. */
  claim(event: Pick<RecordedEvent, 'stream' | 'revision'>, partly = false): boolean {
    if (!(partly ? this.isNewer(event) : this.isNext(event))) return false;
    this.revisions.set(event.stream, event.revision);
    return true;
  }
}

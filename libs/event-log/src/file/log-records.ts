import type { RecordedEvent } from '../event-log.port.js';
import type { LogFileSegment } from './log-file-segments.js';
import { decodeRecord, streamAndRevisionOf, streamPrefix } from './record-codec.js';

/** Bytes of the chunks appended records are copied into: one allocation per this many, not one per record. */
const CHUNK_BYTES = 16 * 1024 * 1024;
/**
 * The most records kept decoded for subscribers that have not read them yet. Past it, a
 * subscriber far behind the others decodes again what it reads: holding a whole replay's
 * decoded events (a million) for it would keep gigabytes alive and make every full
 * collection trace them.
 */
export const MOST_KEPT_DECODED = 1 << 16;

/**
 * The committed records of a file log, in memory as the bytes they are on disk (a third of
 * what decoded events take), each decoded when it is read. The file as it was at open is in
 * segments of at most a gigabyte; appended records are copied into chunks of {@link CHUNK_BYTES}.
 */
export class LogRecords {
  private readonly segments: Buffer[] = [];
  /** Per record (index = position - 1): its segment, and its payload's offset and length there. */
  private segmentOf = new Uint32Array(1024);
  private startOf = new Uint32Array(1024);
  private lengthOf = new Uint32Array(1024);
  private count = 0;
  /** The chunk appended records go into, and how much of it is used. */
  private chunk?: Buffer;
  private chunkUsed = 0;
  private readonly decoded = new DecodedWindow(MOST_KEPT_DECODED);

  /** Takes in the records of the file read at open, segment by segment, by their payloads' offsets and lengths. */
  constructor(segments: readonly LogFileSegment[]) {
    this.reserve(segments.reduce((records, segment) => records + segment.starts.length, 0));
    for (const { bytes, starts, lengths } of segments) {
      this.segments.push(bytes);
      for (let i = 0; i < starts.length; i++, this.count++) {
        this.segmentOf[this.count] = this.segments.length - 1;
        this.startOf[this.count] = starts[i]!;
        this.lengthOf[this.count] = lengths[i]!;
      }
    }
  }

  get length(): number {
    return this.count;
  }

  /**
   * Takes in a record appended to the file: its payload's bytes (copied) and the event as
   * the appender recorded it, kept decoded for the subscribers about to read it.
   * `keepFrom`: see {@link readAfter}.
   */
  add(payload: Buffer, event: RecordedEvent, keepFrom: number): void {
    if (!this.chunk || this.chunkUsed + payload.length > this.chunk.length) {
      this.chunk = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, payload.length));
      this.chunkUsed = 0;
      this.segments.push(this.chunk);
    }
    const index = this.count;
    this.reserve(index + 1);
    payload.copy(this.chunk, this.chunkUsed);
    this.segmentOf[index] = this.segments.length - 1;
    this.startOf[index] = this.chunkUsed;
    this.lengthOf[index] = payload.length;
    this.chunkUsed += payload.length;
    this.count++;
    this.decoded.set(index, event, keepFrom);
  }

  /**
   * The records at positions after `position`, at most `max` of them. Each is decoded once
   * for every subscriber: kept decoded while a subscriber has yet to read it (`keepFrom`,
   * the lowest position a subscriber stands at), so that projections and fan-out catching up
   * together, or following the head, share its objects.
   */
  readAfter(position: number, max: number, keepFrom: number): RecordedEvent[] {
    const end = Math.min(this.count, position + max);
    const events: RecordedEvent[] = [];
    for (let index = position; index < end; index++) {
      let event = this.decoded.get(index);
      if (!event) this.decoded.set(index, (event = this.decode(index)), keepFrom);
      events.push(event);
    }
    return events;
  }

  /** Every record of one stream, in order: found by the bytes its records start with, decoded alone. */
  ofStream(stream: string): RecordedEvent[] {
    const prefix = streamPrefix(stream);
    const events: RecordedEvent[] = [];
    let index = 0;
    for (const [segment, bytes] of this.segments.entries()) {
      for (let hit = bytes.indexOf(prefix); hit >= 0; hit = bytes.indexOf(prefix, hit + 1)) {
        // The prefix may occur inside a record's data too: only a payload's start counts.
        index = this.recordStartingAt(segment, hit, index);
        if (index >= 0) events.push(this.decoded.get(index) ?? this.decode(index));
        else index = -index - 1;
      }
    }
    return events;
  }

  /** The last revision of every stream, read from each record's first bytes. */
  lastRevisions(): Map<string, number> {
    const revisions = new Map<string, number>();
    for (let index = 0; index < this.count; index++) {
      const { stream, revision } = streamAndRevisionOf(this.segments[this.segmentOf[index]!]!, this.startOf[index]!, this.lengthOf[index]!);
      revisions.set(stream, revision);
    }
    return revisions;
  }

  private decode(index: number): RecordedEvent {
    const { s, r, t, d, m, at } = decodeRecord(this.segments[this.segmentOf[index]!]!, this.startOf[index]!, this.lengthOf[index]!);
    return { stream: s, revision: r, position: index + 1, type: t, data: d, metadata: m, recordedAt: at, trusted: true };
  }

  /**
   * The index of the record whose payload starts at `offset` of `segment`, searching from
   * `from` on (hits come in order); or, when none does, -(the index to search on from) - 1.
   */
  private recordStartingAt(segment: number, offset: number, from: number): number {
    let low = from;
    let high = this.count;
    while (low < high) {
      const middle = (low + high) >>> 1;
      const at = this.segmentOf[middle]! < segment || (this.segmentOf[middle] === segment && this.startOf[middle]! < offset);
      if (at) low = middle + 1;
      else high = middle;
    }
    return low < this.count && this.segmentOf[low] === segment && this.startOf[low] === offset ? low : -low - 1;
  }

  private reserve(records: number): void {
    if (records <= this.startOf.length) return;
    const capacity = Math.max(records, this.startOf.length * 2);
    const grow = (values: Uint32Array) => {
      const larger = new Uint32Array(capacity);
      larger.set(values);
      return larger;
    };
    this.segmentOf = grow(this.segmentOf);
    this.startOf = grow(this.startOf);
    this.lengthOf = grow(this.lengthOf);
  }
}

/**
 * Decoded records by index, in a ring that grows while the records it holds are still to be
 * read (at or after `keepFrom`), up to `most` of them; past that, the oldest are decoded
 * again when read.
 */
class DecodedWindow {
  private slots: Array<RecordedEvent | undefined> = new Array(1024);

  constructor(private readonly most: number) {}

  get(index: number): RecordedEvent | undefined {
    const event = this.slots[index & (this.slots.length - 1)];
    return event?.position === index + 1 ? event : undefined;
  }

  set(index: number, event: RecordedEvent, keepFrom: number): void {
    const held = this.slots[index & (this.slots.length - 1)];
    if (held && held.position !== index + 1 && held.position > keepFrom && this.slots.length < this.most) this.grow(index, keepFrom);
    this.slots[index & (this.slots.length - 1)] = event;
  }

  /** Doubles the ring until it holds every record from `keepFrom` to the newest, moving those still to be read. */
  private grow(index: number, keepFrom: number): void {
    const kept = this.slots.filter((event): event is RecordedEvent => event !== undefined && event.position > keepFrom);
    const newest = kept.reduce((highest, event) => Math.max(highest, event.position - 1), index);
    let length = this.slots.length * 2;
    while (length < this.most && length <= newest - keepFrom) length *= 2;
    const slots = new Array<RecordedEvent | undefined>(length);
    for (const event of kept) slots[(event.position - 1) & (length - 1)] = event;
    this.slots = slots;
  }
}

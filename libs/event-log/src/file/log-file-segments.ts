import { open } from 'node:fs/promises';
import { scanRecords, type GroupWrite } from './record-codec.js';
import { tailDamageOf, type TailDamage } from './tail-damage.js';

/**
 * Bytes of the log file read into one buffer at open: a whole file read at once fails past
 * 2 GiB (Node's largest single read), and record offsets within a buffer are 32-bit. Far
 * larger than any record (at most `BODY_LIMIT`, 512 KiB), so that a segment that holds no
 * whole record is damage.
 */
export const SEGMENT_BYTES = 1024 * 1024 * 1024;

/** A piece of the file, cut at a record's end: its bytes and its records' payloads' offsets and lengths in them. */
export interface LogFileSegment {
  bytes: Buffer;
  starts: number[];
  lengths: number[];
}

/** The log file as read at open: its whole records in segments, where they end, and what follows them. */
export interface ReadLogFile {
  segments: LogFileSegment[];
  /** The file offset where the last whole record ends: every byte before it is checked. */
  validBytes: number;
  /** What follows `validBytes`: nothing, a torn tail, or damage; its offset is the file's. */
  damage: TailDamage;
}

/**
 * Reads the log file at `path` (none: an empty log) in segments of at most `segmentBytes`,
 * each cut at the end of its last whole record, and tells what follows the last one.
 */
export async function readLogFile(path: string, segmentBytes = SEGMENT_BYTES): Promise<ReadLogFile> {
  const file = await open(path, 'r').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (!file) return { segments: [], validBytes: 0, damage: { kind: 'none' } };
  try {
    const { size } = await file.stat();
    const segments: LogFileSegment[] = [];
    /** Where each segment starts in the file. */
    const offsets: number[] = [];
    /** The last group write found so far, in file offsets. */
    let lastGroup: GroupWrite | undefined;
    let at = 0;
    for (;;) {
      const last = size - at <= segmentBytes;
      const bytes = Buffer.allocUnsafe(last ? size - at : segmentBytes);
      await readFully(file, bytes, at);
      const scanned = scanRecords(bytes);
      if (scanned.lastGroup) lastGroup = { start: at + scanned.lastGroup.start, end: at + scanned.lastGroup.end };
      // The rest of the file, or a full segment in which no whole record starts: what follows
      // the records found is the tail, torn or damaged (in a full segment, damage: a torn
      // write is one group of appends, far smaller than a segment).
      if (last || scanned.validBytes === 0) {
        if (scanned.starts.length > 0) {
          segments.push({ bytes, starts: scanned.starts, lengths: scanned.lengths });
          offsets.push(at);
        }
        const damage = inFile(tailDamageOf(bytes, scanned.validBytes, lastGroup && { start: lastGroup.start - at, end: lastGroup.end - at }, at), at);
        if (!last && damage.kind === 'torn') return { segments, validBytes: at, damage: { kind: 'corrupt', offset: at, reason: `holds no whole record in ${segmentBytes} bytes`, recordsAfter: 0 } };
        // A torn group write is cut from where it began: its whole records before the damage go with it.
        if (damage.kind === 'torn') return { segments: cutAt(segments, offsets, damage.offset), validBytes: damage.offset, damage };
        return { segments, validBytes: at + scanned.validBytes, damage };
      }
      segments.push({ bytes: bytes.subarray(0, scanned.validBytes), starts: scanned.starts, lengths: scanned.lengths });
      offsets.push(at);
      at += scanned.validBytes;
    }
  } finally {
    await file.close();
  }
}

/** `segments`, which start at file offsets `offsets`, without the records from file offset `cut` on. */
function cutAt(segments: LogFileSegment[], offsets: number[], cut: number): LogFileSegment[] {
  const kept: LogFileSegment[] = [];
  for (const [index, segment] of segments.entries()) {
    const keep = cut - offsets[index]!;
    if (keep <= 0) break;
    const count = segment.starts.findIndex((start) => start >= keep);
    kept.push(count < 0 ? segment : { bytes: segment.bytes.subarray(0, keep), starts: segment.starts.slice(0, count), lengths: segment.lengths.slice(0, count) });
  }
  return kept;
}

/** Damage found in a segment read at file offset `at`, at its offset in the file. */
function inFile(damage: TailDamage, at: number): TailDamage {
  return damage.kind === 'none' ? damage : { ...damage, offset: damage.offset + at };
}

/** Fills `bytes` from the file at `position`: a read may give less than asked. */
async function readFully(file: Awaited<ReturnType<typeof open>>, bytes: Buffer, position: number): Promise<void> {
  for (let filled = 0; filled < bytes.length; ) {
    const { bytesRead } = await file.read(bytes, filled, bytes.length - filled, position + filled);
    if (bytesRead === 0) throw new Error(`the log file ended at ${position + filled} bytes while it was read`);
    filled += bytesRead;
  }
}

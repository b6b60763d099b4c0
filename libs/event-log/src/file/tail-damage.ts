import { crc32 } from 'node:zlib';
import { groupBytesAt, HEADER_BYTES, isRecordAt, type GroupWrite } from './record-codec.js';

/**
 * What lies after the last whole record of a log file.
 *
 * - `torn`: what a crash leaves of the last write, which was never acknowledged (its fsync
 *   never returned): a record cut short, bytes the file system extended the file by and
 *   never wrote (zeros), or, in the last group write, an unwritten page (zeros) with whole
 *   records after it (a power loss may keep a write's later pages and not an earlier one).
 *   Cutting it (from `offset`, which for a group write is where the write began) loses
 *   nothing anyone was told was kept: group writes are one at a time, each fsynced before
 *   the next begins and before any of its appends is acknowledged.
 * - `corrupt`: damage a crash cannot explain, to bytes that were acknowledged: whole records
 *   follow the bad one, or the bad one is whole (its length fits, or its payload runs to the
 *   end of the file and matches its checksum) and fails its checksum. A log that opened
 *   anyway would serve, or cut, what it acknowledged.
 */
export type TailDamage =
  | { kind: 'none' }
  | { kind: 'torn'; offset: number; bytes: number }
  | { kind: 'corrupt'; offset: number; reason: string; recordsAfter: number };

/**
 * Tells apart a torn tail from damage after `validBytes`, the end of the last whole record.
 * `lastGroup` is the last group write found before it, in this buffer's offsets (its start
 * may lie before the buffer, in an earlier segment of the file). A torn tail inside the last
 * group write is cut from where that write began, its frame and whole records included: none
 * of it was acknowledged, and a repaired file then ends where a write ended, every frame
 * announcing the records that follow it.
 */
export function tailDamageOf(buffer: Buffer, validBytes: number, lastGroup?: GroupWrite, fileOffset = 0): TailDamage {
  if (validBytes >= buffer.length) {
    // Whole records only, but fewer than the last write's frame announced: that write was cut short at a record's end.
    if (lastGroup && buffer.length < lastGroup.end) return { kind: 'torn', offset: lastGroup.start, bytes: buffer.length - lastGroup.start };
    return { kind: 'none' };
  }
  const damage = damageAfter(buffer, validBytes, lastGroup, fileOffset);
  if (damage.kind === 'torn' && lastGroup && damage.offset > lastGroup.start && damage.offset < lastGroup.end) {
    return { kind: 'torn', offset: lastGroup.start, bytes: buffer.length - lastGroup.start };
  }
  return damage;
}

function damageAfter(buffer: Buffer, validBytes: number, lastGroup: GroupWrite | undefined, fileOffset: number): TailDamage {
  const { first, recordsAfter } = recordsAfterOffset(buffer, validBytes);
  const bytes = buffer.length - validBytes;
  if (recordsAfter > 0) {
    const cut = lastGroup && tornGroupStart(buffer, validBytes, first, lastGroup, fileOffset);
    if (cut !== undefined) return { kind: 'torn', offset: cut, bytes: buffer.length - cut };
    return { kind: 'corrupt', offset: validBytes, reason: `is not a whole record, and ${recordsAfter} whole records follow it`, recordsAfter };
  }
  if (bytes < HEADER_BYTES || isAllZero(buffer, validBytes)) return { kind: 'torn', offset: validBytes, bytes };
  // Inside the last write, which runs to the end of the file, an unwritten page (zeros) in its
  // last record is what a power loss leaves, even where the record's length still fits.
  if (lastGroup && validBytes < lastGroup.end && buffer.length <= lastGroup.end && hasUnwrittenZeros(buffer, validBytes, buffer.length, fileOffset)) {
    return { kind: 'torn', offset: validBytes, bytes };
  }
  const length = buffer.readUInt32LE(validBytes);
  const checksum = buffer.readUInt32LE(validBytes + 4);
  if (validBytes + HEADER_BYTES + length <= buffer.length) {
    return { kind: 'corrupt', offset: validBytes, reason: 'is a whole record that fails its checksum (or its format)', recordsAfter: 0 };
  }
  // Its length runs past the end: cut short by a crash, unless the length itself was damaged
  // and the payload up to the end is whole.
  if (crc32(buffer.subarray(validBytes + HEADER_BYTES)) === checksum) {
    return { kind: 'corrupt', offset: validBytes, reason: 'has a damaged length, and its payload is whole', recordsAfter: 0 };
  }
  return { kind: 'torn', offset: validBytes, bytes };
}

/**
 * Where the last group write began, when the damage at `from` (whole records after it from
 * `firstAfter` on) is what a power loss leaves of that write: it lies within the write (or is
 * the write's own frame), the write's records run to the end of the file, no later write's
 * frame follows, and the damaged bytes hold an unwritten run of zeros (record bytes never do:
 * their payloads are JSON text). Undefined when it is not.
 */
function tornGroupStart(buffer: Buffer, from: number, firstAfter: number, lastGroup: GroupWrite, fileOffset: number): number | undefined {
  if (hasGroupFrameAfter(buffer, from) || !hasUnwrittenZeros(buffer, from, firstAfter, fileOffset)) return undefined;
  // The damage is the frame of a new write, or inside the last one found, whose records must end with the file.
  if (from === lastGroup.end) return from;
  if (from < lastGroup.end && buffer.length <= lastGroup.end) return lastGroup.start;
  return undefined;
}

/**
 * Zeros in a row that a record may hold, with a bit flipped into one more: a header holds at
 * most five (the high bytes of a length and the low bytes of a checksum), a payload (JSON
 * text) none. A run longer than this is unwritten bytes, not damage to written ones.
 */
const MOST_ZEROS_IN_A_RECORD = 7;
/** What a disk writes at least at once: an unwritten part of a write ends at such a boundary, or at the end of the file. */
const SECTOR_BYTES = 512;
/** Zeros in a row that only an unwritten part of a write explains, wherever they end. */
const UNWRITTEN_ZEROS = 64;

/**
 * Whether bytes `from..to` of the buffer (which starts at file offset `fileOffset` and ends
 * where the file does) hold what a write never written leaves: a run of zeros longer than any
 * record holds that ends at a sector boundary or at the end of the file, or a long one anywhere.
 */
function hasUnwrittenZeros(buffer: Buffer, from: number, to: number, fileOffset: number): boolean {
  let run = 0;
  for (let i = from; i < to; i++) {
    if (buffer[i] === 0) {
      run++;
      if (run >= UNWRITTEN_ZEROS) return true;
      continue;
    }
    if (run > MOST_ZEROS_IN_A_RECORD && (fileOffset + i) % SECTOR_BYTES === 0) return true;
    run = 0;
  }
  return run > MOST_ZEROS_IN_A_RECORD && (to === buffer.length || (fileOffset + to) % SECTOR_BYTES === 0);
}

function hasGroupFrameAfter(buffer: Buffer, from: number): boolean {
  for (let offset = from + 1; offset + HEADER_BYTES < buffer.length; offset++) if (groupBytesAt(buffer, offset) !== undefined) return true;
  return false;
}

/** Where the first whole record after `from` starts and how many follow in a row, found by trying every offset (only on a damaged tail). */
function recordsAfterOffset(buffer: Buffer, from: number): { first: number; recordsAfter: number } {
  for (let offset = from + 1; offset + HEADER_BYTES < buffer.length; offset++) {
    if (!isRecordAt(buffer, offset)) continue;
    let count = 0;
    let at = offset;
    while (isRecordAt(buffer, at)) {
      count++;
      at += HEADER_BYTES + buffer.readUInt32LE(at);
    }
    return { first: offset, recordsAfter: count };
  }
  return { first: buffer.length, recordsAfter: 0 };
}

function isAllZero(buffer: Buffer, from: number): boolean {
  for (let i = from; i < buffer.length; i++) if (buffer[i] !== 0) return false;
  return true;
}

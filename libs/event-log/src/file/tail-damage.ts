import { crc32 } from 'node:zlib';
import { HEADER_BYTES, isRecordAt } from './record-codec.js';

/**
 * What lies after the last whole record of a log file.
 *
 * - `torn`: what a crash leaves of the last write, which was never acknowledged (its fsync
 *   never returned): a record cut short, or bytes the file system extended the file by and
 *   never wrote (zeros). Cutting it loses nothing anyone was told was kept.
 * - `corrupt`: damage a crash cannot explain, to bytes that were acknowledged: whole records
 *   follow the bad one, or the bad one is whole (its length fits, or its payload runs to the
 *   end of the file and matches its checksum) and fails its checksum. A log that opened
 *   anyway would serve, or cut, what it acknowledged.
 */
export type TailDamage =
  | { kind: 'none' }
  | { kind: 'torn'; offset: number; bytes: number }
  | { kind: 'corrupt'; offset: number; reason: string; recordsAfter: number };

/** Tells apart a torn tail from damage after `validBytes`, the end of the last whole record. */
export function tailDamageOf(buffer: Buffer, validBytes: number): TailDamage {
  if (validBytes >= buffer.length) return { kind: 'none' };
  const recordsAfter = countRecordsAfter(buffer, validBytes);
  const bytes = buffer.length - validBytes;
  if (recordsAfter > 0) {
    return { kind: 'corrupt', offset: validBytes, reason: `is not a whole record, and ${recordsAfter} whole records follow it`, recordsAfter };
  }
  if (bytes < HEADER_BYTES || isAllZero(buffer, validBytes)) return { kind: 'torn', offset: validBytes, bytes };
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

/** How many whole records start after `from`, found by trying every offset (only on a damaged tail). */
function countRecordsAfter(buffer: Buffer, from: number): number {
  for (let offset = from + 1; offset + HEADER_BYTES < buffer.length; offset++) {
    if (!isRecordAt(buffer, offset)) continue;
    let count = 0;
    let at = offset;
    while (isRecordAt(buffer, at)) {
      count++;
      at += HEADER_BYTES + buffer.readUInt32LE(at);
    }
    return count;
  }
  return 0;
}

function isAllZero(buffer: Buffer, from: number): boolean {
  for (let i = from; i < buffer.length; i++) if (buffer[i] !== 0) return false;
  return true;
}

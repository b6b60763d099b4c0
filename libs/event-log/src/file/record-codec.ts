import { crc32 } from 'node:zlib';
import type { StoredRecord } from '../stored-record.js';

/**
 * One record on disk: a 4-byte little-endian payload length, a 4-byte CRC-32 of the
 * payload, then the payload (UTF-8 JSON). The length and checksum let a reader tell a
 * complete record from one torn by a crash.
 *
 * Every write of a group of records (one group commit: one write, one fsync) starts with a
 * group frame of the same shape whose payload is `{"g":<bytes of the records that follow>}`.
 * It is not a record (no position): it lets a start tell the last write, which a power loss
 * may have left with an unwritten page inside and whole records after it, from damage to what
 * was acknowledged (see `tail-damage.ts`). Logs written before group frames read as before.
 */
export const HEADER_BYTES = 8;

export function encodeRecord(record: StoredRecord): Buffer {
  // The JSON is written once, straight after the header: an import's record is a megabyte.
  const json = JSON.stringify(record);
  const length = Buffer.byteLength(json, 'utf8');
  const out = Buffer.allocUnsafe(HEADER_BYTES + length);
  out.write(json, HEADER_BYTES, 'utf8');
  out.writeUInt32LE(length, 0);
  out.writeUInt32LE(crc32(out.subarray(HEADER_BYTES)), 4);
  return out;
}

/** The frame that starts a group write of `groupBytes` bytes of records. */
export function encodeGroupFrame(groupBytes: number): Buffer {
  const payload = Buffer.from(`{"g":${groupBytes}}`, 'latin1');
  const out = Buffer.allocUnsafe(HEADER_BYTES + payload.length);
  payload.copy(out, HEADER_BYTES);
  out.writeUInt32LE(payload.length, 0);
  out.writeUInt32LE(crc32(payload), 4);
  return out;
}

/** A group write found in a buffer: where its frame starts and where its records end (offsets in the buffer). */
export interface GroupWrite {
  start: number;
  end: number;
}

export interface ScannedLog {
  /** Where each valid record's payload starts, and its length. */
  starts: number[];
  lengths: number[];
  /** Bytes that hold complete, valid records and group frames; anything after is a torn or corrupt tail. */
  validBytes: number;
  /** The last group frame found, if any. */
  lastGroup?: GroupWrite;
}

/**
 * Finds the records of a log file until the first one that is incomplete or fails its
 * checksum, without decoding them: a start decodes only the records it reads.
 */
export function scanRecords(buffer: Buffer): ScannedLog {
  const starts: number[] = [];
  const lengths: number[] = [];
  let lastGroup: GroupWrite | undefined;
  let offset = 0;
  for (;;) {
    if (isRecordAt(buffer, offset)) {
      const length = buffer.readUInt32LE(offset);
      starts.push(offset + HEADER_BYTES);
      lengths.push(length);
      offset += HEADER_BYTES + length;
      continue;
    }
    const groupBytes = groupBytesAt(buffer, offset);
    if (groupBytes === undefined) break;
    const end = offset + HEADER_BYTES + buffer.readUInt32LE(offset);
    lastGroup = { start: offset, end: end + groupBytes };
    offset = end;
  }
  return { starts, lengths, validBytes: offset, lastGroup };
}

const GROUP_OPENING = Buffer.from('{"g":', 'latin1');
/** A group frame's payload: `{"g":` and at most 15 digits and `}`. */
const GROUP_PAYLOAD_MOST_BYTES = GROUP_OPENING.length + 16;

/** The bytes of records a whole group frame at `offset` announces, or undefined when no group frame starts there. */
export function groupBytesAt(buffer: Buffer, offset: number): number | undefined {
  if (offset + HEADER_BYTES > buffer.length) return undefined;
  const length = buffer.readUInt32LE(offset);
  const start = offset + HEADER_BYTES;
  if (length <= GROUP_OPENING.length || length > GROUP_PAYLOAD_MOST_BYTES || start + length > buffer.length) return undefined;
  if (buffer.compare(GROUP_OPENING, 0, GROUP_OPENING.length, start, start + GROUP_OPENING.length) !== 0) return undefined;
  if (crc32(buffer.subarray(start, start + length)) !== buffer.readUInt32LE(offset + 4)) return undefined;
  const bytes = Number(buffer.toString('latin1', start + GROUP_OPENING.length, start + length - 1));
  return Number.isSafeInteger(bytes) && bytes >= 0 ? bytes : undefined;
}

/** What every payload starts with, as {@link encodeRecord} writes it (`{"s":` then the stream). */
const PAYLOAD_OPENING = Buffer.from('{"s":', 'latin1');

/**
 * Whether a whole record starts at `offset`: its payload within the buffer, starting as
 * {@link encodeRecord} writes one, and matching its checksum. The opening matters as much as
 * the checksum: eight zero bytes (a tail the file system extended but never wrote) read as a
 * record of length 0 whose CRC-32, 0, matches.
 */
export function isRecordAt(buffer: Buffer, offset: number): boolean {
  if (offset + HEADER_BYTES > buffer.length) return false;
  const length = buffer.readUInt32LE(offset);
  const start = offset + HEADER_BYTES;
  if (length < PAYLOAD_OPENING.length || start + length > buffer.length) return false;
  if (buffer.compare(PAYLOAD_OPENING, 0, PAYLOAD_OPENING.length, start, start + PAYLOAD_OPENING.length) !== 0) return false;
  return crc32(buffer.subarray(start, start + length)) === buffer.readUInt32LE(offset + 4);
}

export function decodeRecord(buffer: Buffer, start: number, length: number): StoredRecord {
  return JSON.parse(buffer.toString('utf8', start, start + length)) as StoredRecord;
}

const OPENING = Buffer.from('{"s":"', 'latin1');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The stream and revision of a record, read from the start of its payload as
 * {@link encodeRecord} writes it (`{"s":"…","r":…`) without decoding the rest; a payload
 * that starts otherwise (an escape in the stream name, say) is decoded whole.
 */
export function streamAndRevisionOf(buffer: Buffer, start: number, length: number): { stream: string; revision: number } {
  if (buffer.compare(OPENING, 0, OPENING.length, start, start + OPENING.length) === 0) {
    const from = start + OPENING.length;
    const end = start + length;
    let at = from;
    while (at < end && buffer[at] !== QUOTE && buffer[at] !== BACKSLASH) at++;
    // `","r":` then the revision's digits.
    if (buffer[at] === QUOTE && buffer[at + 1] === 0x2c && buffer[at + 5] === 0x3a && buffer[at + 3] === 0x72) {
      let revision = 0;
      let digit = at + 6;
      for (; digit < end && buffer[digit]! >= 0x30 && buffer[digit]! <= 0x39; digit++) revision = revision * 10 + buffer[digit]! - 0x30;
      if (digit > at + 6 && (buffer[digit] === 0x2c || buffer[digit] === 0x7d)) return { stream: buffer.toString('utf8', from, at), revision };
    }
  }
  const { s, r } = decodeRecord(buffer, start, length);
  return { stream: s, revision: r };
}

/** What a record of `stream` starts with, as {@link encodeRecord} writes it: to find the stream's records without decoding others. */
export function streamPrefix(stream: string): Buffer {
  return Buffer.from(`{"s":${JSON.stringify(stream)},"r":`, 'utf8');
}

import { crc32 } from 'node:zlib';
import type { StoredRecord } from '../stored-record.js';

/**
 * One record on disk: a 4-byte little-endian payload length, a 4-byte CRC-32 of the
 * payload, then the payload (UTF-8 JSON). The length and checksum let a reader tell a
 * complete record from one torn by a crash.
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

export interface DecodedLog {
  records: StoredRecord[];
  /** Bytes that hold complete, valid records; anything after is a torn or corrupt tail. */
  validBytes: number;
}

/** Decodes records until the first one that is incomplete or fails its checksum. */
export function decodeRecords(buffer: Buffer): DecodedLog {
  const records: StoredRecord[] = [];
  let offset = 0;
  while (offset + HEADER_BYTES <= buffer.length) {
    const length = buffer.readUInt32LE(offset);
    const checksum = buffer.readUInt32LE(offset + 4);
    const end = offset + HEADER_BYTES + length;
    if (end > buffer.length) break;
    const payload = buffer.subarray(offset + HEADER_BYTES, end);
    if (crc32(payload) !== checksum) break;
    let record: StoredRecord;
    try {
      record = JSON.parse(payload.toString('utf8')) as StoredRecord;
    } catch {
      break;
    }
    records.push(record);
    offset = end;
  }
  return { records, validBytes: offset };
}

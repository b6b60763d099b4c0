import { crc32 } from 'node:zlib';

/**
 * The bytes of one snapshot file:
 *
 * | bytes | field |
 * | --- | --- |
 * | 8 | magic `FMSNAPSH` |
 * | 4 | format version (uint32 LE) |
 * | 2 | length of the projection name (uint16 LE) |
 * | n | projection name (UTF-8), then zeros up to a multiple of 8 bytes from the start |
 * | 8 | log position the snapshot covers (float64 LE: exact up to 2^53) |
 * | 8 | payload length (uint64 LE) |
 * | p | payload, starting at a multiple of 8 bytes, so that its typed arrays can be read in place |
 * | 4 | CRC-32 of everything before it (uint32 LE) |
 *
 * The checksum covers the header too, so that a flipped bit in the position is caught as
 * surely as one in the state. CRC-32 catches the damage a disk or a torn write does (every
 * burst of up to 32 bits, and anything else but one time in 2^32), at several GB/s: a
 * start that restores hundreds of MB checks them in a fraction of a second.
 */
export const SNAPSHOT_MAGIC = Buffer.from('FMSNAPSH', 'latin1');
export const SNAPSHOT_FORMAT_VERSION = 2;
const CHECKSUM_BYTES = 4;
const padded = (bytes: number) => (bytes + 7) & ~7;

export interface SnapshotContents {
  name: string;
  position: number;
  payload: Uint8Array;
}

/** Why a snapshot file cannot be trusted; the store logs it and skips the file. */
export class SnapshotCorruptError extends Error {
  override readonly name = 'SnapshotCorruptError';
}

/**
 * Why a sound snapshot does not fit the state that would restore it (taken under another
 * feed config, say); the keeper logs it and rebuilds the state from the log instead.
 */
export class SnapshotMismatchError extends Error {
  override readonly name = 'SnapshotMismatchError';
}

export function encodeSnapshot({ name, position, payload }: SnapshotContents): Buffer[] {
  const nameBytes = Buffer.from(name, 'utf8');
  const header = Buffer.alloc(padded(SNAPSHOT_MAGIC.length + 4 + 2 + nameBytes.length) + 8 + 8);
  let at = SNAPSHOT_MAGIC.copy(header, 0);
  at = header.writeUInt32LE(SNAPSHOT_FORMAT_VERSION, at);
  at = header.writeUInt16LE(nameBytes.length, at);
  at = padded(at + nameBytes.copy(header, at));
  at = header.writeDoubleLE(position, at);
  header.writeBigUInt64LE(BigInt(payload.length), at);
  const checksum = Buffer.alloc(CHECKSUM_BYTES);
  checksum.writeUInt32LE(crc32(payload, crc32(header)));
  // Three pieces, written one after another: the payload (possibly hundreds of MB) is never copied.
  return [header, Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength), checksum];
}

/** Reads and verifies a whole snapshot file; throws {@link SnapshotCorruptError} saying why not. */
export function decodeSnapshot(file: Buffer): SnapshotContents {
  const need = (bytes: number, what: string) => {
    if (file.length < bytes) throw new SnapshotCorruptError(`truncated: ${file.length} bytes, ${what} needs ${bytes}`);
  };
  need(SNAPSHOT_MAGIC.length + 6, 'the header');
  if (!file.subarray(0, SNAPSHOT_MAGIC.length).equals(SNAPSHOT_MAGIC)) throw new SnapshotCorruptError('not a snapshot file (bad magic)');
  let at = SNAPSHOT_MAGIC.length;
  const version = file.readUInt32LE(at);
  at += 4;
  if (version !== SNAPSHOT_FORMAT_VERSION) throw new SnapshotCorruptError(`format version ${version}, this build reads ${SNAPSHOT_FORMAT_VERSION}`);
  const nameLength = file.readUInt16LE(at);
  at += 2;
  need(padded(at + nameLength) + 16, 'the header');
  const name = file.toString('utf8', at, at + nameLength);
  at = padded(at + nameLength);
  const position = file.readDoubleLE(at);
  at += 8;
  const payloadLength = Number(file.readBigUInt64LE(at));
  at += 8;
  need(at + payloadLength + CHECKSUM_BYTES, `a payload of ${payloadLength} bytes and its checksum`);
  if (file.length > at + payloadLength + CHECKSUM_BYTES) throw new SnapshotCorruptError(`${file.length - (at + payloadLength + CHECKSUM_BYTES)} bytes after the checksum`);
  const end = at + payloadLength;
  if (crc32(file.subarray(0, end)) !== file.readUInt32LE(end)) throw new SnapshotCorruptError('checksum mismatch');
  return { name, position, payload: file.subarray(at, end) };
}

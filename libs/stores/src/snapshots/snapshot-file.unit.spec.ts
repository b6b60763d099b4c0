import { decodeSnapshot, encodeSnapshot, SNAPSHOT_FORMAT_VERSION, SnapshotCorruptError } from './snapshot-file.js';

const contents = { name: 'content', position: 123_456_789_012, payload: Uint8Array.from({ length: 1_000 }, (_, i) => i % 251) };
const fileOf = (c = contents) => Buffer.concat(encodeSnapshot(c));

describe('snapshot file format', () => {
  it('reads back the name, position and payload it wrote', () => {
    const decoded = decodeSnapshot(fileOf());
    expect(decoded.name).toBe('content');
    expect(decoded.position).toBe(123_456_789_012);
    expect(Buffer.from(decoded.payload).equals(Buffer.from(contents.payload))).toBe(true);
  });

  it('starts the payload at a multiple of 8 bytes, whatever the name', () => {
    for (const name of ['a', 'content', 'timeline', 'a-much-longer-name']) {
      const [header] = encodeSnapshot({ ...contents, name });
      expect(header!.length % 8).toBe(0);
      expect(Buffer.from(decodeSnapshot(fileOf({ ...contents, name })).payload).equals(Buffer.from(contents.payload))).toBe(true);
    }
  });

  it('reads an empty payload', () => {
    expect(decodeSnapshot(fileOf({ ...contents, payload: new Uint8Array() })).payload).toHaveLength(0);
  });

  it('refuses a flipped bit in the payload, and in the header, by the checksum', () => {
    const payloadFlipped = fileOf();
    payloadFlipped[payloadFlipped.length - 100]! ^= 1;
    expect(() => decodeSnapshot(payloadFlipped)).toThrow(new SnapshotCorruptError('checksum mismatch'));
    const positionFlipped = fileOf();
    positionFlipped[24]! ^= 1; // the position's lowest byte, after the name padded to 24 bytes
    expect(() => decodeSnapshot(positionFlipped)).toThrow(/checksum mismatch/);
  });

  it.each([0, 5, 20, 40, 500, 1_043])('refuses a file truncated to %i bytes', (length) => {
    const file = fileOf();
    expect(length).toBeLessThan(file.length);
    expect(() => decodeSnapshot(file.subarray(0, length))).toThrow(SnapshotCorruptError);
    expect(() => decodeSnapshot(file.subarray(0, length))).toThrow(length < 8 + 6 ? /truncated/ : /truncated|bad magic/);
  });

  it('refuses bytes after the checksum', () => {
    expect(() => decodeSnapshot(Buffer.concat([fileOf(), Buffer.from([0])]))).toThrow(/after the checksum/);
  });

  it('refuses another format version, even with a checksum that matches', () => {
    const file = fileOf();
    file.writeUInt32LE(SNAPSHOT_FORMAT_VERSION + 1, 8);
    expect(() => decodeSnapshot(file)).toThrow(new SnapshotCorruptError(`format version ${SNAPSHOT_FORMAT_VERSION + 1}, this build reads ${SNAPSHOT_FORMAT_VERSION}`));
  });

  it('refuses a file that is not a snapshot', () => {
    expect(() => decodeSnapshot(Buffer.from('{"json": "is not a snapshot at all"}'))).toThrow(/bad magic/);
  });
});

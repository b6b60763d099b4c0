import { encodeGroupFrame, encodeRecord, HEADER_BYTES, scanRecords } from './record-codec.js';
import { tailDamageOf } from './tail-damage.js';

const record = (n: number) => encodeRecord({ s: 'stream', r: n, t: 'T', d: { n, text: 'x'.repeat(40) }, m: {}, at: '2026-01-01T00:00:00.000Z' });
const log = (count: number) => Buffer.concat(Array.from({ length: count }, (_, n) => record(n)));
const damageOf = (bytes: Buffer) => tailDamageOf(bytes, scanRecords(bytes).validBytes);
const flipped = (bytes: Buffer, at: number) => {
  const copy = Buffer.from(bytes);
  copy[at] = copy[at]! ^ 0x10;
  return copy;
};

describe('tail damage', () => {
  const whole = log(5);
  const last = record(4).length;

  it('finds none in a log of whole records, or an empty one', () => {
    expect(damageOf(whole)).toEqual({ kind: 'none' });
    expect(damageOf(Buffer.alloc(0))).toEqual({ kind: 'none' });
  });

  it.each([1, HEADER_BYTES - 1, HEADER_BYTES + 3, last - 1])('calls a last record cut %i bytes from its end torn', (cut) => {
    expect(damageOf(whole.subarray(0, whole.length - cut))).toEqual({ kind: 'torn', offset: whole.length - last, bytes: last - cut });
  });

  it('calls zeros after the last record torn, even eight of them, which read as a record of length 0 with a matching CRC', () => {
    for (const zeros of [8, 3, 4096]) {
      const bytes = Buffer.concat([whole, Buffer.alloc(zeros)]);
      expect(scanRecords(bytes).validBytes).toBe(whole.length);
      expect(damageOf(bytes)).toEqual({ kind: 'torn', offset: whole.length, bytes: zeros });
    }
  });

  it('calls a bit flipped in the last whole record corrupt: it may have been acknowledged', () => {
    for (const at of [whole.length - last + 4, whole.length - last + HEADER_BYTES + 10, whole.length - 2]) {
      expect(damageOf(flipped(whole, at))).toMatchObject({ kind: 'corrupt', offset: whole.length - last, recordsAfter: 0 });
    }
  });

  it("calls a last record whose length was damaged corrupt when its payload up to the end is whole", () => {
    const bytes = Buffer.from(whole);
    bytes.writeUInt32LE(bytes.readUInt32LE(whole.length - last) + 1000, whole.length - last);
    expect(damageOf(bytes)).toMatchObject({ kind: 'corrupt', reason: expect.stringContaining('damaged length') });
  });

  it('calls a bit flip before other whole records corrupt, and counts them, wherever it is in the record', () => {
    const second = record(0).length;
    for (const at of [second + 1, second + 5, second + HEADER_BYTES + 20]) {
      expect(damageOf(flipped(whole, at))).toEqual({ kind: 'corrupt', offset: second, reason: expect.stringContaining('3 whole records follow'), recordsAfter: 3 });
    }
  });

  it('calls a length damaged to run past the end corrupt when whole records follow it', () => {
    const bytes = Buffer.from(whole);
    bytes.writeUInt32LE(1 << 30, 0);
    expect(damageOf(bytes)).toMatchObject({ kind: 'corrupt', offset: 0, recordsAfter: 4 });
  });
});

describe('tail damage in group writes (each write starts with a frame saying how many bytes of records follow)', () => {
  /** Writes of `counts` records each, as the file log makes them, and where each write starts. */
  const writes = (counts: number[]) => {
    let n = 0;
    const starts: number[] = [];
    const parts: Buffer[] = [];
    let at = 0;
    for (const count of counts) {
      const records = Buffer.concat(Array.from({ length: count }, () => record(n++)));
      starts.push(at);
      const frame = encodeGroupFrame(records.length);
      parts.push(frame, records);
      at += frame.length + records.length;
    }
    return { bytes: Buffer.concat(parts), starts };
  };
  const scannedDamageOf = (bytes: Buffer) => {
    const scanned = scanRecords(bytes);
    return tailDamageOf(bytes, scanned.validBytes, scanned.lastGroup);
  };
  const zeroed = (bytes: Buffer, from: number, count: number) => {
    const copy = Buffer.from(bytes);
    copy.fill(0, from, from + count);
    return copy;
  };

  it('reads the frames as no records, and finds the last write', () => {
    const { bytes, starts } = writes([2, 3, 4]);
    const scanned = scanRecords(bytes);
    expect(scanned.starts).toHaveLength(9);
    expect(scanned.validBytes).toBe(bytes.length);
    expect(scanned.lastGroup).toEqual({ start: starts[2], end: bytes.length });
    expect(scannedDamageOf(bytes)).toEqual({ kind: 'none' });
  });

  it('calls an unwritten page inside the last write, with whole records after it, torn from where that write began', () => {
    const { bytes, starts } = writes([2, 3, 12]);
    const lastWrite = starts[2]!;
    // Zeros over the end of one record and the start of the next, in the write's middle, or over its frame.
    for (const from of [lastWrite + 300, lastWrite + 100, lastWrite]) {
      expect(scannedDamageOf(zeroed(bytes, from, 512))).toEqual({ kind: 'torn', offset: lastWrite, bytes: bytes.length - lastWrite });
    }
  });

  it('calls an unwritten page in the last record of the last write torn, where its length still fits or it runs to the end', () => {
    const { bytes, starts } = writes([2, 1]);
    const lastWrite = starts[1]!;
    const last = bytes.length - lastWrite;
    // Zeros in the record's middle, or over the file's last bytes (the file extended, its page never written).
    for (const from of [lastWrite + 30, bytes.length - 70]) {
      expect(scannedDamageOf(zeroed(bytes, from, 64))).toEqual({ kind: 'torn', offset: lastWrite, bytes: last });
    }
  });

  it('calls a short run of zeros torn where it ends at a sector boundary or at the end of the file, and a run a record could hold damage', () => {
    const { bytes, starts } = writes([2, 12]);
    const lastWrite = starts[1]!;
    const scanned = (damaged: Buffer, fileOffset: number) => {
      const scan = scanRecords(damaged);
      return tailDamageOf(damaged, scan.validBytes, scan.lastGroup, fileOffset);
    };
    // The last write's first 30 bytes unwritten, up to a sector's end: the file lies at an offset that puts a boundary there.
    const boundaryAt = lastWrite + 30;
    const fileOffset = (512 - (boundaryAt % 512)) % 512;
    expect(scanned(zeroed(bytes, lastWrite, 30), fileOffset)).toEqual({ kind: 'torn', offset: lastWrite, bytes: bytes.length - lastWrite });
    // The same run ending anywhere else is not a sector's: damage.
    expect(scanned(zeroed(bytes, lastWrite, 30), fileOffset + 1)).toMatchObject({ kind: 'corrupt' });
    // The file's last 20 bytes unwritten (it ends 20 bytes into a page never written).
    expect(scanned(zeroed(bytes, bytes.length - 20, 20), 0)).toEqual({ kind: 'torn', offset: lastWrite, bytes: bytes.length - lastWrite });
    // Seven zeros at the end are what a record's header and one flipped bit may hold: damage.
    expect(scanned(zeroed(bytes, bytes.length - 7, 7), 0)).toMatchObject({ kind: 'corrupt' });
  });

  it('cuts a last write that ends early at a record boundary, or holds only its frame, from where it began', () => {
    const { bytes, starts } = writes([2, 3]);
    const frameEnd = starts[1]! + HEADER_BYTES + bytes.readUInt32LE(starts[1]!);
    const firstRecordEnd = frameEnd + record(2).length;
    for (const end of [frameEnd, firstRecordEnd]) {
      expect(scannedDamageOf(bytes.subarray(0, end))).toEqual({ kind: 'torn', offset: starts[1], bytes: end - starts[1]! });
    }
    // A frame that a crash left alone, with zeros after it.
    expect(scannedDamageOf(Buffer.concat([bytes.subarray(0, frameEnd), Buffer.alloc(4096)]))).toEqual({ kind: 'torn', offset: starts[1], bytes: frameEnd + 4096 - starts[1]! });
  });

  it('calls the same damage corrupt where a crash cannot explain it', () => {
    const { bytes, starts } = writes([2, 12, 3]);
    // In a write that another follows: that one began only after it was fsynced.
    expect(scannedDamageOf(zeroed(bytes, starts[1]! + 300, 512))).toMatchObject({ kind: 'corrupt', recordsAfter: expect.any(Number) });
    // Bits flipped, not zeros, in the last write.
    const last = writes([2, 12]);
    expect(scannedDamageOf(flipped(last.bytes, last.starts[1]! + 300))).toMatchObject({ kind: 'corrupt' });
    // Bytes past the end the last write's frame gives.
    const longer = Buffer.concat([zeroed(last.bytes, last.starts[1]! + 300, 512), record(99)]);
    expect(scannedDamageOf(longer)).toMatchObject({ kind: 'corrupt' });
  });
});

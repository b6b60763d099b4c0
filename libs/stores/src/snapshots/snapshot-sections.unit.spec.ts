import { SnapshotCorruptError } from './snapshot-file.js';
import { SnapshotReader, SnapshotWriter } from './snapshot-sections.js';

describe('snapshot sections', () => {
  it('read back typed arrays, numbers and strings in the order written, as copies', () => {
    const int32s = Int32Array.from([-1, 0, 2 ** 31 - 1]);
    const payload = new SnapshotWriter()
      .int32s(int32s)
      .uint32s(Uint32Array.from([0, 2 ** 32 - 1]))
      .float64s(Float64Array.from([0.5, -Infinity, 2 ** 53]))
      .uint8s(Uint8Array.from([1, 2, 3]))
      .number(123_456_789_012)
      .strings(['', 'a', undefined, 'ünïcødé ✓', '𝄞 clef'])
      .finish();
    // Read from an offset that is not a multiple of 8, as a payload inside a file is.
    const file = new Uint8Array(payload.length + 3);
    file.set(payload, 3);
    const reader = new SnapshotReader(file.subarray(3));
    const read = reader.int32s();
    expect(read).toEqual(int32s);
    expect(read.buffer).not.toBe(file.buffer);
    expect(reader.uint32s()).toEqual(Uint32Array.from([0, 2 ** 32 - 1]));
    expect(reader.float64s()).toEqual(Float64Array.from([0.5, -Infinity, 2 ** 53]));
    expect(reader.uint8s()).toEqual(Uint8Array.from([1, 2, 3]));
    expect(reader.number()).toBe(123_456_789_012);
    expect(reader.strings()).toEqual(['', 'a', undefined, 'ünïcødé ✓', '𝄞 clef']);
    expect(() => reader.end()).not.toThrow();
  });

  it('keeps text of one-byte characters, ASCII or not, exactly', () => {
    const values = ['café', 'naïve ÿ', 'plain'];
    expect(new SnapshotReader(new SnapshotWriter().strings(values).finish()).strings()).toEqual(values);
  });

  it('reads int32s in place where aligned, and copies them where not', () => {
    const payload = new SnapshotWriter().int32s(Int32Array.of(7, 8, 9)).finish();
    const inPlace = new SnapshotReader(payload).transientInt32s();
    expect(inPlace).toEqual(Int32Array.of(7, 8, 9));
    expect(inPlace.buffer).toBe(payload.buffer);
    const file = new Uint8Array(payload.length + 1);
    file.set(payload, 1);
    expect(new SnapshotReader(file.subarray(1)).transientInt32s()).toEqual(Int32Array.of(7, 8, 9));
  });

  it('keeps a lone surrogate, which UTF-8 cannot hold, exactly', () => {
    const values = ['before', 'lone \ud800 high', '\udc00', 'after'];
    const reader = new SnapshotReader(new SnapshotWriter().strings(values).finish());
    expect(reader.strings()).toEqual(values);
  });

  it('splits many strings over several blobs and reads them all back', () => {
    const values = Array.from({ length: 5_000 }, (_, i) => (i % 7 === 0 ? undefined : `value ${i} ${'x'.repeat(i % 50)}`));
    const reader = new SnapshotReader(new SnapshotWriter({ blobChars: 1_000 }).strings(values).finish());
    expect(reader.strings()).toEqual(values);
  });

  it('reads empty sections', () => {
    const reader = new SnapshotReader(new SnapshotWriter().strings([]).int32s(new Int32Array()).finish());
    expect(reader.strings()).toEqual([]);
    expect(reader.int32s()).toHaveLength(0);
    reader.end();
  });

  it('refuses a section of another kind than the one read', () => {
    const reader = new SnapshotReader(new SnapshotWriter().int32s(Int32Array.of(1)).finish());
    expect(() => reader.float64s()).toThrow(new SnapshotCorruptError('a section of kind 1 where kind 3 was expected'));
  });

  it('refuses a payload that ends early, and one with sections left unread', () => {
    const payload = new SnapshotWriter().int32s(Int32Array.of(1, 2, 3)).strings(['abc']).finish();
    expect(() => new SnapshotReader(payload.subarray(0, 20)).int32s()).toThrow(/past the end/);
    const reader = new SnapshotReader(payload);
    reader.int32s();
    expect(() => reader.end()).toThrow(/were not read/);
    expect(() => new SnapshotReader(payload.subarray(0, 28)).int32s()).toThrow(SnapshotCorruptError);
  });

  it('refuses absent strings where none may be', () => {
    expect(() => new SnapshotReader(new SnapshotWriter().strings(['a', undefined]).finish()).presentStrings()).toThrow(/absent/);
  });
});

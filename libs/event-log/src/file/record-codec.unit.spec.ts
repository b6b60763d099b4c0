import { decodeRecords, encodeRecord, HEADER_BYTES } from './record-codec.js';

const record = (n: number) => ({ s: 'stream', r: n, t: 'T', d: { n, text: 'é' }, m: { v: 1 }, at: '2026-01-01T00:00:00.000Z' });

describe('record codec', () => {
  it('decodes what it encodes, record after record', () => {
    const bytes = Buffer.concat([encodeRecord(record(0)), encodeRecord(record(1))]);
    expect(decodeRecords(bytes)).toEqual({ records: [record(0), record(1)], validBytes: bytes.length });
  });

  it('stops at a record whose bytes do not match its checksum', () => {
    const first = encodeRecord(record(0));
    const second = encodeRecord(record(1));
    second.writeUInt8(second.readUInt8(HEADER_BYTES + 3) ^ 0xff, HEADER_BYTES + 3);
    expect(decodeRecords(Buffer.concat([first, second]))).toEqual({ records: [record(0)], validBytes: first.length });
  });

  it('stops at a record cut short, even inside its header', () => {
    const first = encodeRecord(record(0));
    const second = encodeRecord(record(1));
    for (const cut of [3, HEADER_BYTES + 2, second.length - 1]) {
      expect(decodeRecords(Buffer.concat([first, second.subarray(0, cut)])).validBytes).toBe(first.length);
    }
  });
});

import { crc32 } from 'node:zlib';
import { decodeRecord, encodeRecord, HEADER_BYTES, scanRecords, streamAndRevisionOf, streamPrefix } from './record-codec.js';

const record = (n: number, s = 'stream') => ({ s, r: n, t: 'T', d: { n, text: 'é' }, m: { v: 1 }, at: '2026-01-01T00:00:00.000Z' });
const decodedAll = (bytes: Buffer) => {
  const { starts, lengths, validBytes } = scanRecords(bytes);
  return { records: starts.map((start, i) => decodeRecord(bytes, start, lengths[i]!)), validBytes };
};

describe('record codec', () => {
  it('decodes what it encodes, record after record', () => {
    const bytes = Buffer.concat([encodeRecord(record(0)), encodeRecord(record(1))]);
    expect(decodedAll(bytes)).toEqual({ records: [record(0), record(1)], validBytes: bytes.length });
  });

  it('stops at a record whose bytes do not match its checksum', () => {
    const first = encodeRecord(record(0));
    const second = encodeRecord(record(1));
    second.writeUInt8(second.readUInt8(HEADER_BYTES + 3) ^ 0xff, HEADER_BYTES + 3);
    expect(decodedAll(Buffer.concat([first, second]))).toEqual({ records: [record(0)], validBytes: first.length });
  });

  it('stops at a record cut short, even inside its header', () => {
    const first = encodeRecord(record(0));
    const second = encodeRecord(record(1));
    for (const cut of [3, HEADER_BYTES + 2, second.length - 1]) {
      expect(scanRecords(Buffer.concat([first, second.subarray(0, cut)])).validBytes).toBe(first.length);
    }
  });

  it('takes no record of length 0 (eight zero bytes have a matching CRC-32), nor a payload that does not start as one', () => {
    const first = encodeRecord(record(0));
    expect(scanRecords(Buffer.concat([first, Buffer.alloc(8)])).validBytes).toBe(first.length);
    const notARecord = Buffer.from('["s",1]');
    const header = Buffer.alloc(HEADER_BYTES);
    header.writeUInt32LE(notARecord.length, 0);
    header.writeUInt32LE(crc32(notARecord), 4);
    expect(scanRecords(Buffer.concat([first, header, notARecord])).validBytes).toBe(first.length);
  });

  it.each(['feed-user:bob', 'with "quotes" and \\ backslash', 'ünïcødé', 'tab\there', ''])('reads the stream and revision of %j from the first bytes as a full decode does', (stream) => {
    const bytes = encodeRecord(record(1234, stream));
    expect(streamAndRevisionOf(bytes, HEADER_BYTES, bytes.length - HEADER_BYTES)).toEqual({ stream, revision: 1234 });
    expect(bytes.indexOf(streamPrefix(stream))).toBe(HEADER_BYTES);
    expect(bytes.indexOf(streamPrefix(`${stream}x`))).toBe(-1);
  });
});

import { SnapshotCorruptError } from './snapshot-file.js';

/**
 * A snapshot payload as a sequence of sections, each a typed array's bytes as they are or a
 * list of strings in one blob of text, so that restoring a state is a few copies and slices
 * rather than an object-by-object deserialization.
 *
 * Every section starts with 16 bytes (its kind as uint32 LE, 4 bytes of padding, its body's
 * length as float64 LE) and its body is padded to 8 bytes. The kind lets a reader tell a
 * payload laid out otherwise than it expects from a corrupt one; the checksum of the file
 * around the payload has already caught damage.
 */
const enum Kind {
  Int32 = 1,
  Uint32 = 2,
  Float64 = 3,
  Uint8 = 4,
  Strings = 5,
}

/**
 * How a blob's text is stored: as Latin-1 when every character fits a byte (ids, times and
 * feed names do; the fastest to decode), else as UTF-8, else (a lone surrogate, which JSON
 * may carry and UTF-8 cannot) as UTF-16, so that every string comes back exactly.
 */
const enum TextEncoding {
  Latin1 = 0,
  Utf8 = 1,
  Utf16 = 2,
}

const HEADER_BYTES = 16;
/** Marks an absent string in a strings section's lengths. */
const ABSENT = 0xffffffff;
/** Characters per blob of a strings section: V8 strings end at 2^29 characters. */
const BLOB_CHARS = 1 << 26;
const BEYOND_LATIN1 = /[\u0100-\uffff]/;

const utf8 = new TextDecoder('utf-8', { fatal: true });
const padded = (bytes: number) => (bytes + 7) & ~7;

export class SnapshotWriter {
  private readonly chunks: Uint8Array[] = [];
  private length = 0;
  private readonly blobChars: number;

  /** @param options.blobChars characters per blob of a strings section. @defaultValue 2^26 */
  constructor(options: { blobChars?: number } = {}) {
    this.blobChars = options.blobChars ?? BLOB_CHARS;
  }

  int32s(values: Int32Array): this {
    return this.section(Kind.Int32, bytesOf(values));
  }

  uint32s(values: Uint32Array): this {
    return this.section(Kind.Uint32, bytesOf(values));
  }

  float64s(values: Float64Array): this {
    return this.section(Kind.Float64, bytesOf(values));
  }

  uint8s(values: Uint8Array): this {
    return this.section(Kind.Uint8, values);
  }

  /** One number, exactly (a float64 section of one). */
  number(value: number): this {
    return this.float64s(Float64Array.of(value));
  }

  /**
   * Strings, `undefined` among them, in one section: their count, their blobs' sizes, their
   * lengths, then their text joined in blobs of at most `blobChars` characters.
   */
  strings(values: ReadonlyArray<string | undefined>): this {
    const lengths = new Uint32Array(values.length);
    const blobs: Array<{ bytes: Uint8Array; encoding: TextEncoding; strings: number }> = [];
    let pieces: string[] = [];
    let chars = 0;
    const flush = () => {
      blobs.push({ ...encodeText(pieces.join('')), strings: pieces.length });
      pieces = [];
      chars = 0;
    };
    for (let i = 0; i < values.length; i++) {
      const value = values[i];
      if (value === undefined) {
        lengths[i] = ABSENT;
        continue;
      }
      if (chars + value.length > this.blobChars && pieces.length > 0) flush();
      lengths[i] = value.length;
      pieces.push(value);
      chars += value.length;
    }
    if (pieces.length > 0) flush();
    const head = new Float64Array(2 + blobs.length * 3);
    head[0] = values.length;
    head[1] = blobs.length;
    blobs.forEach((blob, i) => head.set([blob.bytes.length, blob.strings, blob.encoding], 2 + i * 3));
    const body = new Uint8Array(head.byteLength + padded(lengths.byteLength) + blobs.reduce((sum, blob) => sum + padded(blob.bytes.length), 0));
    body.set(bytesOf(head), 0);
    let at = head.byteLength;
    body.set(bytesOf(lengths), at);
    at += padded(lengths.byteLength);
    for (const blob of blobs) {
      body.set(blob.bytes, at);
      at += padded(blob.bytes.length);
    }
    return this.section(Kind.Strings, body);
  }

  /** The payload: every section, in order. */
  finish(): Uint8Array {
    const payload = new Uint8Array(this.length);
    let at = 0;
    for (const chunk of this.chunks) {
      payload.set(chunk, at);
      at += chunk.length;
    }
    return payload;
  }

  private section(kind: Kind, body: Uint8Array): this {
    const header = new DataView(new ArrayBuffer(HEADER_BYTES));
    header.setUint32(0, kind, true);
    header.setFloat64(8, body.length, true);
    this.chunks.push(new Uint8Array(header.buffer), body);
    const padding = padded(body.length) - body.length;
    if (padding > 0) this.chunks.push(new Uint8Array(padding));
    this.length += HEADER_BYTES + padded(body.length);
    return this;
  }
}

/** The strings of a section, one after another, each made as it is taken. */
export interface StringCursor {
  readonly count: number;
  /** The next string, or undefined for an absent one; throws past the last. */
  next(): string | undefined;
  /** Throws unless every string and all the text was taken. */
  end(): void;
}

/**
 * Reads the sections a {@link SnapshotWriter} wrote, in the same order; throws
 * {@link SnapshotCorruptError} when the payload is not laid out as the reader expects.
 * Typed arrays are copied out of the payload, so that the state restored from them does not
 * keep the whole file in memory, except those read as transient.
 */
export class SnapshotReader {
  private at = 0;
  private readonly view: DataView;

  constructor(private readonly payload: Uint8Array) {
    this.view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  }

  int32s(): Int32Array<ArrayBuffer> {
    return new Int32Array(copied(this.section(Kind.Int32), 4));
  }

  /** As {@link int32s}, but a view into the payload where it is aligned: for values used at once, not kept. */
  transientInt32s(): Int32Array {
    const body = this.section(Kind.Int32);
    if (body.byteOffset % 4 !== 0) return new Int32Array(copied(body, 4));
    if (body.length % 4 !== 0) throw new SnapshotCorruptError(`a section of ${body.length} bytes does not hold whole 4-byte values`);
    return new Int32Array(body.buffer, body.byteOffset, body.length / 4);
  }

  uint32s(): Uint32Array<ArrayBuffer> {
    return new Uint32Array(copied(this.section(Kind.Uint32), 4));
  }

  float64s(): Float64Array<ArrayBuffer> {
    return new Float64Array(copied(this.section(Kind.Float64), 8));
  }

  uint8s(): Uint8Array<ArrayBuffer> {
    return new Uint8Array(copied(this.section(Kind.Uint8), 1));
  }

  number(): number {
    const values = this.float64s();
    if (values.length !== 1) throw new SnapshotCorruptError(`a number section holds ${values.length} values`);
    return values[0]!;
  }

  /**
   * The strings of a strings section. Each is a slice of its blob's decoded text: cheap to
   * make, and V8 keeps the text while any slice lives.
   */
  strings(): Array<string | undefined> {
    const cursor = this.stringCursor();
    const values = new Array<string | undefined>(cursor.count);
    for (let i = 0; i < values.length; i++) values[i] = cursor.next();
    cursor.end();
    return values;
  }

  /** Strings that are all present. */
  presentStrings(): string[] {
    const values = this.strings();
    for (const value of values) if (value === undefined) throw new SnapshotCorruptError('a string section holds an absent value where none may be');
    return values as string[];
  }

  /** The strings of a strings section one at a time, for a reader that builds objects from several at once. */
  stringCursor(): StringCursor {
    const body = this.section(Kind.Strings);
    const view = new DataView(body.buffer, body.byteOffset, body.byteLength);
    let at = 0;
    const float64 = () => {
      if (at + 8 > body.length) throw new SnapshotCorruptError('a strings section ends inside its head');
      const value = view.getFloat64(at, true);
      at += 8;
      return value;
    };
    const count = float64();
    const blobCount = float64();
    const blobs = Array.from({ length: blobCount }, () => ({ bytes: float64(), strings: float64(), encoding: float64() }));
    if (at + count * 4 > body.length) throw new SnapshotCorruptError('a strings section ends inside its lengths');
    const lengths = new Uint32Array(copied(body.subarray(at, at + count * 4), 4));
    at += padded(count * 4);
    const texts = blobs.map((blob) => {
      if (at + blob.bytes > body.length) throw new SnapshotCorruptError('a strings section ends inside its text');
      const text = decodeText(body.subarray(at, at + blob.bytes), blob.encoding);
      at += padded(blob.bytes);
      return text;
    });
    let index = 0;
    let blob = 0;
    let takenInBlob = 0;
    let offset = 0;
    const endOfBlob = () => {
      if (offset !== texts[blob]!.length) throw new SnapshotCorruptError('a strings section holds other text than its lengths say');
      blob++;
      takenInBlob = 0;
      offset = 0;
    };
    return {
      count,
      next: () => {
        if (index >= count) throw new SnapshotCorruptError('a strings section holds fewer strings than read');
        const length = lengths[index++]!;
        if (length === ABSENT) return undefined;
        while (blob < blobs.length && takenInBlob === blobs[blob]!.strings) endOfBlob();
        const text = texts[blob];
        if (text === undefined || offset + length > text.length) throw new SnapshotCorruptError('a strings section holds less text than its lengths say');
        takenInBlob++;
        const value = text.slice(offset, offset + length);
        offset += length;
        return value;
      },
      end: () => {
        if (index !== count) throw new SnapshotCorruptError(`${count - index} strings of a section were not read`);
        while (blob < blobs.length) endOfBlob();
      },
    };
  }

  /** Whether the next section is a strings section: a payload that begins with a layout name says so. */
  nextHoldsStrings(): boolean {
    return this.at + HEADER_BYTES <= this.payload.length && this.view.getUint32(this.at, true) === Kind.Strings;
  }

  /** Throws unless every section was read. */
  end(): void {
    if (this.at !== this.payload.length) throw new SnapshotCorruptError(`${this.payload.length - this.at} bytes of the payload were not read`);
  }

  private section(kind: Kind): Uint8Array {
    if (this.at + HEADER_BYTES > this.payload.length) throw new SnapshotCorruptError('the payload ends before a section it should hold');
    const found = this.view.getUint32(this.at, true);
    if (found !== kind) throw new SnapshotCorruptError(`a section of kind ${found} where kind ${kind} was expected`);
    const length = this.view.getFloat64(this.at + 8, true);
    const start = this.at + HEADER_BYTES;
    if (!Number.isInteger(length) || length < 0 || start + padded(length) > this.payload.length) throw new SnapshotCorruptError('a section runs past the end of the payload');
    this.at = start + padded(length);
    return this.payload.subarray(start, start + length);
  }
}

function encodeText(text: string): { bytes: Uint8Array; encoding: TextEncoding } {
  if (!BEYOND_LATIN1.test(text)) return { bytes: Buffer.from(text, 'latin1'), encoding: TextEncoding.Latin1 };
  // ES2024's String.prototype.isWellFormed, in every Node this runs on (>= 20).
  if ((text as string & { isWellFormed(): boolean }).isWellFormed()) return { bytes: Buffer.from(text, 'utf8'), encoding: TextEncoding.Utf8 };
  const units = new Uint16Array(text.length);
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return { bytes: bytesOf(units), encoding: TextEncoding.Utf16 };
}

function decodeText(bytes: Uint8Array, encoding: number): string {
  if (encoding === TextEncoding.Latin1) return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (encoding === TextEncoding.Utf8) {
    try {
      return utf8.decode(bytes);
    } catch {
      throw new SnapshotCorruptError('a strings section holds text that is not UTF-8');
    }
  }
  if (encoding !== TextEncoding.Utf16) throw new SnapshotCorruptError(`a strings section holds text of encoding ${encoding}`);
  return Buffer.from(copied(bytes, 2)).toString('utf16le');
}

function bytesOf(values: ArrayBufferView): Uint8Array {
  return new Uint8Array(values.buffer, values.byteOffset, values.byteLength);
}

/** The bytes in a fresh buffer, whole elements of `size` bytes. */
function copied(bytes: Uint8Array, size: number): ArrayBuffer {
  if (bytes.length % size !== 0) throw new SnapshotCorruptError(`a section of ${bytes.length} bytes does not hold whole ${size}-byte values`);
  const buffer = new ArrayBuffer(bytes.length);
  new Uint8Array(buffer).set(bytes);
  return buffer;
}

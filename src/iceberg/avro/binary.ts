/**
 * Avro binary encoding primitives (Avro 1.11 spec, "Binary Encoding"): zigzag varints for int and
 * long, little-endian IEEE floats, length-prefixed bytes and UTF-8 strings.
 *
 * Iceberg longs (snapshot ids, sequence numbers, row counts) are 64-bit: they are BigInts here and
 * are never routed through a JS double (docs/iceberg-writer-checklist.md §3.1 "Avro long must be 64-bit"). Ints are JS
 * numbers checked to the signed 32-bit range. The writer grows one buffer geometrically; the reader
 * walks a byte array with a DataView, so neither allocates per byte.
 */
import { FloeError } from '../../util/errors.js';

const SUBSYSTEM = 'iceberg.avro';
const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;
const MASK_64 = 2n ** 64n - 1n;

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: true });

export class AvroWriter {
  private buf: Uint8Array;
  private view: DataView;
  pos = 0;

  constructor(initialCapacity = 4096) {
    this.buf = new Uint8Array(initialCapacity);
    this.view = new DataView(this.buf.buffer);
  }

  /** Makes room for `n` more bytes. */
  ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  /** The bytes written so far (a view; copy it if the writer is reused). */
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }

  reset(): void {
    this.pos = 0;
  }

  writeBoolean(v: boolean): void {
    this.ensure(1);
    this.buf[this.pos++] = v ? 1 : 0;
  }

  /** A 32-bit signed int as a zigzag varint. */
  writeInt(v: number): void {
    this.ensure(5);
    let n = ((v << 1) ^ (v >> 31)) >>> 0;
    while (n > 0x7f) {
      this.buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    this.buf[this.pos++] = n;
  }

  /** A 64-bit signed long (BigInt) as a zigzag varint. */
  writeLong(v: bigint): void {
    if (v < MIN_LONG || v > MAX_LONG) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `long ${v} is outside the 64-bit signed range; expected -2^63 <= value < 2^63`);
    }
    this.ensure(10);
    // zigzag: (v << 1) ^ (v >> 63), as an unsigned 64-bit value
    let z = ((v << 1n) ^ (v >> 63n)) & MASK_64;
    if (z <= 0xffffffffn) {
      // common case (small non-negative counts, ids below 2^31): stay in 32-bit number arithmetic
      let n = Number(z);
      while (n > 0x7f) {
        this.buf[this.pos++] = (n & 0x7f) | 0x80;
        n = Math.floor(n / 128);
      }
      this.buf[this.pos++] = n;
      return;
    }
    while (z > 0x7fn) {
      this.buf[this.pos++] = Number(z & 0x7fn) | 0x80;
      z >>= 7n;
    }
    this.buf[this.pos++] = Number(z);
  }

  writeFloat(v: number): void {
    this.ensure(4);
    this.view.setFloat32(this.pos, v, true);
    this.pos += 4;
  }

  writeDouble(v: number): void {
    this.ensure(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** Raw bytes without a length prefix (fixed, sync markers, magic). */
  writeRaw(bytes: Uint8Array): void {
    this.ensure(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** Avro `bytes`: long length, then the bytes. */
  writeBytes(bytes: Uint8Array): void {
    this.writeLong(BigInt(bytes.length));
    this.writeRaw(bytes);
  }

  /** Avro `string`: long byte length, then UTF-8. Encodes straight into the buffer. */
  writeString(s: string): void {
    // Reserve the worst case (3 bytes per UTF-16 unit) after a length prefix of at most 5 bytes for
    // realistic sizes; encode first, then write the prefix by shifting only if its size differs.
    const max = s.length * 3;
    this.ensure(max + 10);
    const prefixGuess = varintSize(max);
    const start = this.pos + prefixGuess;
    const { written } = utf8Encoder.encodeInto(s, this.buf.subarray(start, start + max));
    const prefix = varintSize(written * 2); // zigzag of a non-negative length
    if (prefix !== prefixGuess) {
      this.buf.copyWithin(this.pos + prefix, start, start + written);
    }
    this.writeLong(BigInt(written));
    this.pos += written;
  }
}

/** Bytes needed for the zigzag varint of a non-negative value already doubled (`2 * n`). */
function varintSize(zigzag: number): number {
  let size = 1;
  while (zigzag > 0x7f) {
    zigzag = Math.floor(zigzag / 128);
    size++;
  }
  return size;
}

export class AvroReader {
  readonly buf: Uint8Array;
  private readonly view: DataView;
  pos: number;
  readonly end: number;

  constructor(buf: Uint8Array, start = 0, end = buf.length) {
    // A Node Buffer's slice() is a view, not a copy: read through a plain Uint8Array so that decoded
    // bytes values are independent copies of plain Uint8Array type.
    this.buf = Object.getPrototypeOf(buf) === Uint8Array.prototype ? buf : new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength);
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.pos = start;
    this.end = end;
  }

  private eof(what: string, need: number): never {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `unexpected end of Avro data while reading ${what} at offset ${this.pos}: needed ${need} byte(s), ${this.end - this.pos} left; the file is truncated or its schema does not match its data`);
  }

  remaining(): number {
    return this.end - this.pos;
  }

  readBoolean(): boolean {
    if (this.pos >= this.end) this.eof('a boolean', 1);
    const b = this.buf[this.pos++]!;
    if (b > 1) throw new FloeError(SUBSYSTEM, 'invalid-data', `invalid Avro boolean byte ${b} at offset ${this.pos - 1}; expected 0 or 1`);
    return b === 1;
  }

  readInt(): number {
    let result = 0;
    let shift = 0;
    for (let i = 0; i < 5; i++) {
      if (this.pos >= this.end) this.eof('an int', 1);
      const b = this.buf[this.pos++]!;
      result |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) return (result >>> 1) ^ -(result & 1);
      shift += 7;
    }
    throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro int varint longer than 5 bytes at offset ${this.pos}; the data is corrupt`);
  }

  readLong(): bigint {
    // Fast path: up to 4 bytes (28 bits) in number arithmetic.
    let lo = 0;
    let shift = 0;
    let i = 0;
    for (; i < 4; i++) {
      if (this.pos >= this.end) this.eof('a long', 1);
      const b = this.buf[this.pos++]!;
      lo |= (b & 0x7f) << shift;
      if ((b & 0x80) === 0) {
        return BigInt((lo >>> 1) ^ -(lo & 1));
      }
      shift += 7;
    }
    let z = BigInt(lo >>> 0);
    let bshift = 28n;
    for (; i < 10; i++) {
      if (this.pos >= this.end) this.eof('a long', 1);
      const b = this.buf[this.pos++]!;
      z |= BigInt(b & 0x7f) << bshift;
      if ((b & 0x80) === 0) {
        z &= MASK_64;
        return (z >> 1n) ^ -(z & 1n);
      }
      bshift += 7n;
    }
    throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro long varint longer than 10 bytes at offset ${this.pos}; the data is corrupt`);
  }

  /** A long used as a byte length: non-negative and within the remaining data. */
  readLength(what: string): number {
    const n = this.readLong();
    if (n < 0n) throw new FloeError(SUBSYSTEM, 'invalid-data', `negative ${what} ${n} at offset ${this.pos}; the data is corrupt`);
    if (n > BigInt(this.end - this.pos)) this.eof(what, Number(n));
    return Number(n);
  }

  /** A long used as an item count (array/map blocks, container blocks); its sign is meaningful. */
  readCount(what: string): number {
    const n = this.readLong();
    if (n > BigInt(Number.MAX_SAFE_INTEGER) || n < -BigInt(Number.MAX_SAFE_INTEGER)) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `${what} ${n} at offset ${this.pos} is implausibly large; the data is corrupt`);
    }
    return Number(n);
  }

  readFloat(): number {
    if (this.pos + 4 > this.end) this.eof('a float', 4);
    const v = this.view.getFloat32(this.pos, true);
    this.pos += 4;
    return v;
  }

  readDouble(): number {
    if (this.pos + 8 > this.end) this.eof('a double', 8);
    const v = this.view.getFloat64(this.pos, true);
    this.pos += 8;
    return v;
  }

  /** `n` raw bytes, copied (so that decoded values do not pin a whole decompressed block). */
  readFixed(n: number): Uint8Array {
    if (this.pos + n > this.end) this.eof(`${n} fixed bytes`, n);
    const out = this.buf.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** `n` raw bytes as a view into the underlying buffer (no copy). */
  readRawView(n: number): Uint8Array {
    if (this.pos + n > this.end) this.eof(`${n} bytes`, n);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  readBytes(): Uint8Array {
    return this.readFixed(this.readLength('bytes length'));
  }

  readString(): string {
    const n = this.readLength('string length');
    if (this.pos + n > this.end) this.eof('string bytes', n);
    const start = this.pos;
    this.pos += n;
    try {
      return utf8Decoder.decode(this.buf.subarray(start, start + n));
    } catch (cause) {
      throw new FloeError(SUBSYSTEM, 'invalid-data', `Avro string at offset ${start} is not valid UTF-8`, { cause });
    }
  }
}

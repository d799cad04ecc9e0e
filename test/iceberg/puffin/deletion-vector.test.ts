/**
 * Deletion-vector Puffin files checked against puffin-spec.md by a decoder written here, from the
 * spec, sharing no code with the writer: Puffin magic and footer, blob length prefix (big-endian),
 * DV magic, CRC-32 (node:zlib), the portable Roaring format, and cardinality.
 */
import { crc32 as zlibCrc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  PositionBitmap,
  deletionVectorFile,
  deserializeDeletionVector,
  findDeletionVectorBlob,
  readDeletionVector,
  readPuffinFooter,
  serializeDeletionVector,
  union,
  writeDeletionVectorPuffin,
} from '../../../src/iceberg/puffin/index.js';

// ---- the independent decoder ---------------------------------------------------------------------

const PFA1 = Buffer.from('PFA1', 'latin1');

interface IndependentPuffin {
  footer: { blobs: any[]; properties?: Record<string, string> };
  blobs: Buffer[];
}

function parsePuffin(bytes: Uint8Array): IndependentPuffin {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  expect(b.subarray(0, 4).equals(PFA1), 'leading magic').toBe(true);
  expect(b.subarray(b.length - 4).equals(PFA1), 'trailing magic').toBe(true);
  const flags = b.subarray(b.length - 8, b.length - 4);
  expect([...flags], 'flags: uncompressed footer').toEqual([0, 0, 0, 0]);
  const payloadSize = b.readInt32LE(b.length - 12);
  const footerMagicAt = b.length - 12 - payloadSize - 4;
  expect(b.subarray(footerMagicAt, footerMagicAt + 4).equals(PFA1), 'footer magic').toBe(true);
  const footer = JSON.parse(b.subarray(footerMagicAt + 4, footerMagicAt + 4 + payloadSize).toString('utf8'));
  const blobs = footer.blobs.map((m: any) => {
    expect(m.offset).toBeGreaterThanOrEqual(4);
    expect(m.offset + m.length).toBeLessThanOrEqual(footerMagicAt);
    return b.subarray(m.offset, m.offset + m.length);
  });
  return { footer, blobs };
}

/** Portable 32-bit Roaring bitmap (RoaringFormatSpec), returns values and bytes consumed. */
function parseRoaring(b: Buffer, start: number): { values: number[]; size: number } {
  let p = start;
  const cookie = b.readUInt32LE(p);
  let n: number;
  let runs: Buffer | null = null;
  if ((cookie & 0xffff) === 12347) {
    n = (cookie >>> 16) + 1;
    p += 4;
    runs = b.subarray(p, p + Math.ceil(n / 8));
    p += Math.ceil(n / 8);
  } else {
    expect(cookie).toBe(12346);
    n = b.readUInt32LE(p + 4);
    p += 8;
  }
  const headers: { key: number; card: number }[] = [];
  for (let i = 0; i < n; i++, p += 4) headers.push({ key: b.readUInt16LE(p), card: b.readUInt16LE(p + 2) + 1 });
  const offsets: number[] = [];
  if (runs === null || n >= 4) for (let i = 0; i < n; i++, p += 4) offsets.push(b.readUInt32LE(p));
  const values: number[] = [];
  headers.forEach(({ key, card }, i) => {
    if (offsets.length) expect(start + offsets[i], `offset of container ${i}`).toBe(p);
    if (runs && (runs[i >> 3] >> (i & 7)) & 1) {
      const count = b.readUInt16LE(p);
      p += 2;
      for (let r = 0; r < count; r++, p += 4) {
        const s = b.readUInt16LE(p);
        for (let x = 0; x <= b.readUInt16LE(p + 2); x++) values.push(key * 65536 + s + x);
      }
    } else if (card <= 4096) {
      for (let x = 0; x < card; x++, p += 2) values.push(key * 65536 + b.readUInt16LE(p));
    } else {
      let seen = 0;
      for (let w = 0; w < 1024; w++) {
        const word = b.readBigUInt64LE(p + 8 * w);
        for (let bit = 0; bit < 64; bit++) {
          if ((word >> BigInt(bit)) & 1n) {
            values.push(key * 65536 + w * 64 + bit);
            seen++;
          }
        }
      }
      expect(seen, 'bitmap container cardinality').toBe(card);
      p += 8192;
    }
  });
  return { values, size: p - start };
}

/** A deletion-vector-v1 blob per puffin-spec.md; returns the positions in stored order. */
function parseDvBlob(blob: Buffer): bigint[] {
  const declared = blob.readUInt32BE(0);
  expect(declared, 'length prefix = magic + vector').toBe(blob.length - 8);
  expect([...blob.subarray(4, 8)], 'DV magic').toEqual([0xd1, 0xd3, 0x39, 0x64]);
  const crc = blob.readUInt32BE(blob.length - 4);
  expect(crc, 'CRC-32 of magic + vector').toBe(zlibCrc32(blob.subarray(4, blob.length - 4)));
  const count = Number(blob.readBigUInt64LE(8));
  let p = 16;
  const out: bigint[] = [];
  let lastKey = -1;
  for (let i = 0; i < count; i++) {
    const key = blob.readUInt32LE(p);
    expect(key, 'keys ascending').toBeGreaterThan(lastKey);
    lastKey = key;
    const { values, size } = parseRoaring(blob, p + 4);
    for (const v of values) out.push((BigInt(key) << 32n) | BigInt(v));
    p += 4 + size;
  }
  expect(p, 'vector fills the blob up to the CRC').toBe(blob.length - 4);
  return out;
}

// ---- tests ---------------------------------------------------------------------------------------

const sortUnique = (xs: bigint[]): bigint[] => [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

describe('deletion-vector-v1 Puffin files (independent decoder)', () => {
  const dense = Array.from({ length: 5000 }, (_, i) => BigInt(70000 + i * 3)); // > 4096 in one container → bitmap container
  const cases: [string, bigint[]][] = [
    ['array containers in key 0', [0n, 1n, 5n, 100n, 65535n, 65536n, 70000n, 5n]],
    ['a bitmap container next to array containers', [...dense, 3n, 200000n]],
    ['several 32-bit keys, up to 2^62', [1n, 2n ** 32n, 2n ** 32n + 5n, 3n * 2n ** 32n + 7n, 2n ** 62n, 2n ** 63n - 1n]],
  ];
  const inputs = cases.map(([, positions], i) => ({ referencedDataFile: `s3://b/t/data/file-${i}.parquet`, positions }));
  const written = writeDeletionVectorPuffin(inputs, { createdBy: 'floe test' });

  it('writes the Puffin layout, footer JSON and blob metadata the spec and Java prescribe', () => {
    const { footer, blobs } = parsePuffin(written.bytes);
    expect(written.fileSizeInBytes).toBe(BigInt(written.bytes.length));
    expect(footer.properties).toEqual({ 'created-by': 'floe test' });
    expect(footer.blobs).toHaveLength(3);
    footer.blobs.forEach((m: any, i: number) => {
      const expected = sortUnique(cases[i][1]);
      expect(m).toEqual({
        type: 'deletion-vector-v1',
        fields: [2147483645],
        'snapshot-id': -1,
        'sequence-number': -1,
        offset: Number(written.vectors[i].offset),
        length: Number(written.vectors[i].length),
        properties: { 'referenced-data-file': `s3://b/t/data/file-${i}.parquet`, cardinality: String(expected.length) },
      });
      expect('compression-codec' in m).toBe(false);
      expect(parseDvBlob(blobs[i])).toEqual(expected);
      expect(written.vectors[i].cardinality).toBe(BigInt(expected.length));
    });
    expect(written.vectors[0].offset).toBe(4n);
    expect(written.vectors[1].offset).toBe(written.vectors[0].offset + written.vectors[0].length);
  });

  it('uses a bitmap container above 4096 values in a 16-bit chunk and array containers otherwise', () => {
    const blob = Buffer.from(written.bytes.subarray(Number(written.vectors[1].offset), Number(written.vectors[1].offset + written.vectors[1].length)));
    // key 0's bitmap: cookie, n containers, then (key, card-1) headers
    expect(blob.readUInt32LE(20)).toBe(12346);
    const n = blob.readUInt32LE(24);
    const cards = Array.from({ length: n }, (_, i) => blob.readUInt16LE(28 + 4 * i + 2) + 1);
    expect(cards.some((c) => c > 4096)).toBe(true);
    expect(cards.some((c) => c <= 4096)).toBe(true);
  });

  it('reads every DV back with length, magic, CRC and cardinality checks', () => {
    written.vectors.forEach((v, i) => {
      const bitmap = readDeletionVector(written.bytes, v.offset, v.length, { expectedCardinality: v.cardinality });
      expect(bitmap.toArray()).toEqual(sortUnique(cases[i][1]));
      expect(findDeletionVectorBlob(written.bytes, v.referencedDataFile)).toMatchObject({ offset: v.offset, length: v.length });
    });
    const v = written.vectors[0];
    expect(() => readDeletionVector(written.bytes, v.offset, v.length, { expectedCardinality: 99n })).toThrow(/record_count is 99/);
    expect(() => readDeletionVector(written.bytes, v.offset + 1n, v.length - 1n)).toThrow(/length prefix|magic/);
    expect(() => readDeletionVector(written.bytes, v.offset, v.length + 4n)).toThrow(/length prefix/);
    const corrupt = written.bytes.slice();
    corrupt[Number(v.offset) + 20] ^= 0x01;
    expect(() => readDeletionVector(corrupt, v.offset, v.length)).toThrow(/CRC-32/);
    expect(() => readDeletionVector(written.bytes, 0n, BigInt(written.bytes.length + 1))).toThrow(/outside/);
  });

  it('reads the footer back and builds the delete-manifest entry of a DV', () => {
    const footer = readPuffinFooter(written.bytes);
    expect(footer.blobs.map((b) => b.properties['referenced-data-file'])).toEqual(inputs.map((x) => x.referencedDataFile));
    const file = deletionVectorFile({ puffinPath: 's3://b/t/data/dv.puffin', fileSizeInBytes: written.fileSizeInBytes, vector: written.vectors[2], specId: 0, partition: [] });
    expect(file).toEqual({
      content: 'position-deletes',
      filePath: 's3://b/t/data/dv.puffin',
      fileFormat: 'PUFFIN',
      specId: 0,
      partition: [],
      recordCount: 6n,
      fileSizeInBytes: written.fileSizeInBytes,
      referencedDataFile: 's3://b/t/data/file-2.parquet',
      contentOffset: written.vectors[2].offset,
      contentSizeInBytes: written.vectors[2].length,
    });
  });

  it('refuses two DVs for one data file, empty DVs and positions outside [0, 2^63)', () => {
    expect(() => writeDeletionVectorPuffin([inputs[0], inputs[0]])).toThrow(/merge them/);
    expect(() => writeDeletionVectorPuffin([{ referencedDataFile: 'x', positions: [] }])).toThrow(/no positions/);
    expect(() => PositionBitmap.of([2n ** 63n])).toThrow(/< 2\^63/);
    expect(() => PositionBitmap.of([-1])).toThrow(/non-negative/);
  });

  it('round-trips random position sets, checked by the independent decoder', () => {
    const position = fc.oneof(
      fc.integer({ min: 0, max: 70000 }).map(BigInt),
      fc.bigInt(0n, 2n ** 63n - 1n),
      fc.integer({ min: 0, max: 3 }).chain((k) => fc.integer({ min: 0, max: 0xffffffff }).map((low) => (BigInt(k) << 32n) | BigInt(low))),
    );
    fc.assert(
      fc.property(fc.array(position, { minLength: 1, maxLength: 300 }), fc.integer({ min: 0, max: 6000 }), (positions, denseRun) => {
        const all = [...positions, ...Array.from({ length: denseRun }, (_, i) => BigInt(i * 2))];
        const blob = serializeDeletionVector(PositionBitmap.of(all));
        const expected = sortUnique(all);
        expect(parseDvBlob(Buffer.from(blob))).toEqual(expected);
        const back = deserializeDeletionVector(blob);
        expect(back.cardinality).toBe(BigInt(expected.length));
        expect(back.toArray()).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});

describe('reading deletion vectors written by Java (run containers, empty gap bitmaps)', () => {
  /** Builds a blob as Java's RoaringPositionBitmap does after runOptimize: keys 0..max, gaps empty. */
  function javaStyleBlob(): Buffer {
    const parts: Buffer[] = [];
    const u32le = (n: number): Buffer => {
      const b = Buffer.alloc(4);
      b.writeUInt32LE(n);
      return b;
    };
    const u16le = (...ns: number[]): Buffer => Buffer.concat(ns.map((n) => {
      const b = Buffer.alloc(2);
      b.writeUInt16LE(n);
      return b;
    }));
    parts.push(Buffer.from([3, 0, 0, 0, 0, 0, 0, 0])); // 3 bitmaps (u64 LE)
    // key 0: one run container [0, 9] plus an array container {65536 + 5}: cookie 12347 with n-1 = 1
    parts.push(u32le(0), u32le(12347 | (1 << 16)), Buffer.from([0b01]), u16le(0, 9, 1, 0), u16le(1, 0, 9), u16le(5));
    // key 1: empty bitmap
    parts.push(u32le(1), u32le(12346), u32le(0));
    // key 2: array container {7}
    parts.push(u32le(2), u32le(12346), u32le(1), u16le(0, 0), u32le(16), u16le(7));
    const vector = Buffer.concat(parts);
    const magicAndVector = Buffer.concat([Buffer.from([0xd1, 0xd3, 0x39, 0x64]), vector]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(magicAndVector.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(zlibCrc32(magicAndVector));
    return Buffer.concat([len, magicAndVector, crc]);
  }

  it('decodes them to the same positions as the independent decoder', () => {
    const blob = javaStyleBlob();
    const expected = [...Array.from({ length: 10 }, (_, i) => BigInt(i)), 65541n, (2n << 32n) + 7n];
    expect(parseDvBlob(blob)).toEqual(expected);
    const bitmap = deserializeDeletionVector(new Uint8Array(blob));
    expect(bitmap.toArray()).toEqual(expected);
    expect(bitmap.has(9)).toBe(true);
    expect(bitmap.has(10)).toBe(false);
    expect(bitmap.has((2n << 32n) + 7n)).toBe(true);
    expect(bitmap.cardinality).toBe(12n);
  });
});

describe('PositionBitmap', () => {
  it('unions an earlier DV with new positions (the caller merges; one DV per data file)', () => {
    const old = PositionBitmap.of([1n, 5n, 2n ** 40n]);
    const fresh = PositionBitmap.of([5, 6, 7]);
    const merged = union(old, fresh);
    expect(merged.toArray()).toEqual([1n, 5n, 6n, 7n, 2n ** 40n]);
    expect(merged.cardinality).toBe(5n);
    expect(old.toArray()).toEqual([1n, 5n, 2n ** 40n]); // inputs unchanged
    expect(fresh.cardinality).toBe(3n);
  });

  it('answers membership for many positions added out of order', () => {
    const b = new PositionBitmap();
    for (let i = 20000; i >= 0; i -= 2) b.add(i);
    expect(b.cardinality).toBe(10001n);
    expect(b.has(0)).toBe(true);
    expect(b.has(19999)).toBe(false);
    expect(b.has(20000n)).toBe(true);
    expect(b.has(-5)).toBe(false);
  });
});

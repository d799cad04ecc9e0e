import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { AvroReader, AvroWriter } from '../../../src/iceberg/avro/binary.js';
import { readAvroFile, writeAvroFile } from '../../../src/iceberg/avro/container.js';
import { compileDecoder, compileEncoder } from '../../../src/iceberg/avro/datum.js';
import { parseSchema, schemaToJson, type AvroSchema } from '../../../src/iceberg/avro/schema.js';
import { avscType, decodeWithAvsc, plain } from './avsc-decode.js';

const MIN_LONG = -(2n ** 63n);
const MAX_LONG = 2n ** 63n - 1n;

function encodeLong(v: bigint): Uint8Array {
  const w = new AvroWriter(4);
  w.writeLong(v);
  return w.bytes().slice();
}

describe('Avro longs (64-bit zigzag varints as BigInt)', () => {
  const edge = [0n, 1n, -1n, 63n, -64n, 64n, -65n, 2n ** 31n - 1n, -(2n ** 31n), 2n ** 31n, 2n ** 32n, 2n ** 53n, -(2n ** 53n), 2n ** 53n + 1n, MAX_LONG, MIN_LONG, MAX_LONG - 1n, MIN_LONG + 1n];

  it('round-trips the 64-bit bounds and the varint length boundaries exactly', () => {
    for (const v of edge) {
      const bytes = encodeLong(v);
      expect(new AvroReader(bytes).readLong()).toBe(v);
    }
    // Known encodings from the Avro spec's zigzag table and the 10-byte maximum.
    expect([...encodeLong(0n)]).toEqual([0x00]);
    expect([...encodeLong(-1n)]).toEqual([0x01]);
    expect([...encodeLong(1n)]).toEqual([0x02]);
    expect([...encodeLong(-64n)]).toEqual([0x7f]);
    expect([...encodeLong(64n)]).toEqual([0x80, 0x01]);
    expect([...encodeLong(MAX_LONG)]).toEqual([0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect([...encodeLong(MIN_LONG)]).toEqual([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
  });

  it('encodes longs byte-identically to avsc and decodes what avsc writes', () => {
    const type = avscType('long');
    fc.assert(
      fc.property(fc.bigInt(MIN_LONG, MAX_LONG), (v) => {
        const ours = encodeLong(v);
        const theirs = new Uint8Array(type.toBuffer(v));
        expect(ours).toEqual(theirs);
        expect(new AvroReader(theirs).readLong()).toBe(v);
      }),
      { numRuns: 2000, examples: edge.map((v) => [v]) },
    );
  });

  it('rejects longs outside the 64-bit range instead of wrapping', () => {
    const w = new AvroWriter();
    expect(() => w.writeLong(MAX_LONG + 1n)).toThrow(/64-bit signed range/);
    expect(() => w.writeLong(MIN_LONG - 1n)).toThrow(/64-bit signed range/);
  });

  it('rejects a varint longer than 10 bytes and a truncated one', () => {
    expect(() => new AvroReader(new Uint8Array(11).fill(0x80)).readLong()).toThrow(/longer than 10 bytes/);
    expect(() => new AvroReader(Uint8Array.of(0x80, 0x80)).readLong()).toThrow(/unexpected end/);
  });

  it('ints round-trip at the 32-bit bounds and match avsc', () => {
    const type = avscType('int');
    for (const v of [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 12345, -98765]) {
      const w = new AvroWriter(1);
      w.writeInt(v);
      expect(w.bytes()).toEqual(new Uint8Array(type.toBuffer(v)));
      expect(new AvroReader(w.bytes()).readInt()).toBe(v);
    }
  });
});

describe('strings, bytes and compiled datums', () => {
  it('writes strings whose length prefix is shorter than the worst case (multi-byte characters)', () => {
    const type = avscType('string');
    // 30 × 'é' is 60 UTF-8 bytes (1-byte prefix) while the writer reserves for 90 (2-byte prefix).
    for (const s of ['', 'a', 'é'.repeat(30), 'é'.repeat(32), '한'.repeat(43), '😀'.repeat(20), 'x'.repeat(70000)]) {
      const w = new AvroWriter(2);
      w.writeString(s);
      expect(w.bytes()).toEqual(new Uint8Array(type.toBuffer(s)));
      expect(new AvroReader(w.bytes()).readString()).toBe(s);
    }
  });

  it('round-trips a schema with every Avro type, identical to avsc', () => {
    const schemaJson = {
      type: 'record',
      name: 'everything',
      fields: [
        { name: 'b', type: 'boolean' },
        { name: 'i', type: 'int' },
        { name: 'l', type: 'long' },
        { name: 'f', type: 'float' },
        { name: 'd', type: 'double' },
        { name: 'by', type: 'bytes' },
        { name: 's', type: 'string' },
        { name: 'fx', type: { type: 'fixed', name: 'four', size: 4 } },
        { name: 'fx2', type: 'four' },
        { name: 'e', type: { type: 'enum', name: 'color', symbols: ['red', 'green'] } },
        { name: 'a', type: { type: 'array', items: ['null', 'long'] } },
        { name: 'm', type: { type: 'map', values: 'int' } },
        { name: 'o', type: ['null', { type: 'record', name: 'inner', fields: [{ name: 'x', type: 'int' }] }], default: null },
        { name: 'u', type: ['null', 'string', 'long'] },
      ],
    };
    const schema = parseSchema(schemaJson);
    const value = {
      b: true,
      i: -7,
      l: MIN_LONG,
      f: 1.5,
      d: -0.1,
      by: Uint8Array.of(0, 255, 7),
      s: 'héllo',
      fx: Uint8Array.of(1, 2, 3, 4),
      fx2: Uint8Array.of(9, 9, 9, 9),
      e: 'green',
      a: [1n, null, MAX_LONG],
      m: new Map([
        ['k', 1],
        ['__proto__', 2],
      ]),
      o: { x: 42 },
      u: 5n,
    };
    const w = new AvroWriter(8);
    compileEncoder(schema)(w, value);
    const type = avscType(schemaJson);
    const avscValue = { ...value, by: Buffer.from(value.by), fx: Buffer.from(value.fx), fx2: Buffer.from(value.fx2), m: { k: 1, ['__proto__']: 2 } };
    // avsc needs a plain object for maps; defineProperty keeps "__proto__" an own key.
    Object.defineProperty(avscValue.m, '__proto__', { value: 2, enumerable: true });
    expect(w.bytes()).toEqual(new Uint8Array(type.toBuffer(avscValue)));
    const back = compileDecoder(schema)(new AvroReader(w.bytes())) as Record<string, unknown>;
    expect(back).toEqual(value);
  });

  it('says which field has the wrong JS type', () => {
    const schema = parseSchema({ type: 'record', name: 'r', fields: [{ name: 'n', type: 'long' }] });
    expect(() => compileEncoder(schema)(new AvroWriter(), { n: 5 })).toThrow(/cannot write n: expected a bigint \(Avro long\), found number 5/);
  });

  it('writes named types once and then by name, and parses references back', () => {
    const schema = parseSchema({
      type: 'record',
      name: 'r',
      fields: [
        { name: 'a', type: { type: 'fixed', name: 'decimal_9_2', size: 4, logicalType: 'decimal', precision: 9, scale: 2 } },
        { name: 'b', type: ['null', 'decimal_9_2'], default: null },
      ],
    });
    const json = schemaToJson(schema);
    expect(JSON.parse(json).fields[1].type).toEqual(['null', 'decimal_9_2']);
    expect(parseSchema(json)).toEqual(schema);
  });

  it('rejects schemas that redefine a name or reference an undefined one', () => {
    expect(() => parseSchema({ type: 'record', name: 'r', fields: [{ name: 'a', type: 'nope' }] })).toThrow(/before defining it/);
    const dup: AvroSchema = parseSchema({ type: 'record', name: 'r', fields: [] });
    expect(dup.type).toBe('record');
    expect(() => parseSchema({ type: 'record', name: 'r', fields: [{ name: 'a', type: { type: 'record', name: 'r', fields: [] } }] })).toThrow(/defines the name r twice/);
  });
});

describe('object container files', () => {
  const schemaJson = {
    type: 'record',
    name: 'row',
    fields: [
      { name: 'id', type: 'long', 'field-id': 1 },
      { name: 'name', type: ['null', 'string'], default: null, 'field-id': 2 },
    ],
  };
  const schema = parseSchema(schemaJson);
  const rows = Array.from({ length: 5000 }, (_, i) => ({ id: BigInt(i) * 1_000_000_007n - 2n ** 62n, name: i % 3 === 0 ? null : `name-${i}` }));

  for (const codec of ['null', 'deflate'] as const) {
    it(`writes ${codec} files that avsc reads, with metadata, several blocks and exact longs`, async () => {
      const bytes = writeAvroFile({ schema, codec, metadata: { 'format-version': '2', note: 'héllo' } }, rows);
      const f = await decodeWithAvsc(bytes);
      expect(f.codec).toBe(codec);
      expect(f.meta['format-version']).toBe('2');
      expect(f.meta.note).toBe('héllo');
      expect(f.schema).toEqual(schemaJson);
      expect(f.records.map(plain)).toEqual(rows);
      const ours = readAvroFile(bytes);
      expect(ours.records).toEqual(rows);
      expect(ours.metadata.get('note')).toBe('héllo');
      expect(ours.codec).toBe(codec);
    });
  }

  it('writes an empty file that both readers accept', async () => {
    const bytes = writeAvroFile({ schema }, []);
    expect((await decodeWithAvsc(bytes)).records).toEqual([]);
    expect(readAvroFile(bytes).records).toEqual([]);
  });

  it('detects a corrupted sync marker and an unknown codec', () => {
    const sync = new Uint8Array(16).fill(7);
    const bytes = writeAvroFile({ schema, codec: 'null', syncMarker: sync }, rows.slice(0, 3));
    const broken = bytes.slice();
    broken[broken.length - 1] ^= 0xff;
    expect(() => readAvroFile(broken)).toThrow(/sync marker/);
    expect(() => writeAvroFile({ schema, codec: 'snappy' as never }, [])).toThrow(/unsupported Avro codec/);
  });
});

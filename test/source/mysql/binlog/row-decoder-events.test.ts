/**
 * floe's row decoder on synthetic events (no server): the binary temporal and DECIMAL readers
 * against binlog-values.ts / mysql-json.ts on random valid encodings (negative TIME2 fractions, all
 * fractional precisions, DECIMAL group layouts), v2 extra data, partial images, and the refusals —
 * a type that is no rows event, a TABLE_MAP that disagrees with the captured table, a truncated event — and
 * binlog-values' reading of 64-bit SET bitmasks from bytes.
 * The cross-check against zongji on a real server is test/source/mysql/binlog/rows/row-decoder.test.ts.
 */
import { deflateRawSync, deflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createBinlogRowConverter } from '../../../../src/source/mysql/binlog/zongji/binlog-values.js';
import { binaryDecimalToString } from '../../../../src/source/mysql/binlog/rows/mysql-json.js';
import type { ColumnSchema, TableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { parseTableMap } from '../../../../src/source/mysql/binlog/rows/table-map.js';
import { compileTable, decodeRowsEvent } from '../../../../src/source/mysql/binlog/rows/row-decoder.js';
import { isFloeError } from '../../../../src/util/errors.js';

function column(name: string, ordinal: number, dataType: string, columnType: string, extra: Partial<ColumnSchema> = {}): ColumnSchema {
  return {
    name, ordinal, dataType, columnType, unsigned: false, precision: null, scale: null, datetimePrecision: null, maxLength: null, charset: null, collation: null,
    nullable: true, generated: null, generationExpression: null, comment: '', default: { kind: 'none' }, labels: null, json: false, invisible: false, autoIncrement: false, ...extra,
  };
}

function table(columns: ColumnSchema[]): MappedTable {
  const schema: TableSchema = { id: { database: 'd', table: 't' }, columns, primaryKey: [], indexes: [], comment: '', engine: 'InnoDB' };
  return mapTable(schema, { timeAsMicros: (_t, c) => c.startsWith('dur') });
}

/** Wire type and metadata bytes of one column of a synthetic TABLE_MAP. */
interface Wire {
  type: number;
  meta: number[];
}

function header(type: number, body: Buffer): Buffer {
  const h = Buffer.alloc(19);
  h.writeUInt32LE(1_700_000_000, 0);
  h[4] = type;
  h.writeUInt32LE(1, 5);
  h.writeUInt32LE(19 + body.length, 9);
  return Buffer.concat([h, body]);
}

function tableMapEvent(wires: Wire[]): Buffer {
  const meta = Buffer.from(wires.flatMap((w) => w.meta));
  return header(
    19,
    Buffer.concat([
      Buffer.from([7, 0, 0, 0, 0, 0, 0, 0]), // table id 7, flags
      Buffer.from([1, 0x64, 0, 1, 0x74, 0]), // 'd', 't'
      Buffer.from([wires.length, ...wires.map((w) => w.type), meta.length]),
      meta,
      Buffer.alloc((wires.length + 7) >> 3, 0xff),
    ]),
  );
}

/** A rows event of full images; `images`: per row, per column, the value bytes or null. */
function rowsEvent(type: number, n: number, images: (Buffer | null)[][], options: { extra?: Buffer; present?: number[] } = {}): Buffer {
  const bitmap = Buffer.alloc((n + 7) >> 3);
  const present = options.present ?? Array.from({ length: n }, (_, i) => i);
  for (const i of present) bitmap[i >> 3] |= 1 << (i & 7);
  const v2 = type >= 30 && type <= 32;
  const parts: Buffer[] = [Buffer.from([7, 0, 0, 0, 0, 0, 1, 0])];
  if (v2) {
    const extra = options.extra ?? Buffer.alloc(0);
    const len = Buffer.alloc(2);
    len.writeUInt16LE(extra.length + 2);
    parts.push(len, extra);
  }
  parts.push(Buffer.from([n]), bitmap);
  if (type === 24 || type === 31 || type === 39) parts.push(bitmap);
  for (const image of images) {
    const nulls = Buffer.alloc((present.length + 7) >> 3);
    image.forEach((v, k) => {
      if (v === null) nulls[k >> 3] |= 1 << (k & 7);
    });
    parts.push(nulls, ...image.filter((v): v is Buffer => v !== null));
  }
  return header(type, Buffer.concat(parts));
}

/** Decodes `images` of one column with floe's decoder. */
function decodeOne(mapped: MappedTable, wire: Wire, values: Buffer[]) {
  const compiled = compileTable(parseTableMap(tableMapEvent([wire]), 0), mapped);
  return decodeRowsEvent(rowsEvent(23, 1, values.map((v) => [v])), compiled, 0).rows.map((r) => r[0]);
}

const be = (v: number, n: number): Buffer => {
  const b = Buffer.alloc(n);
  b.writeUIntBE(v, 0, n);
  return b;
};

/**
 * TIME2 bytes of signed µs at `fsp`, as my_time_packed_to_binary writes them: the integer part is
 * packed >> 24 (floor), the fraction packed % 2^24 (C remainder: negative for negative times),
 * scaled to the stored digits and kept in 1 or 2 bytes.
 */
function time2(micros: number, fsp: number): Buffer {
  const n = (fsp + 1) >> 1;
  const div = n === 0 ? 1_000_000 : n === 1 ? 10000 : n === 2 ? 100 : 1;
  const abs = Math.abs(micros);
  const fracUnits = n === 0 ? 0 : Math.floor((abs % 1_000_000) / div) * div;
  const secs = Math.floor(abs / 1_000_000);
  const hms = (Math.floor(secs / 3600) << 12) | (Math.floor((secs % 3600) / 60) << 6) | secs % 60;
  const packed = (micros < 0 ? -1 : 1) * (hms * 16_777_216 + fracUnits);
  const intPart = Math.floor(packed / 16_777_216);
  if (n === 0) return be(intPart + 0x800000, 3);
  if (n === 3) return be(packed + 0x800000000000, 6);
  const fracC = packed - Math.trunc(packed / 16_777_216) * 16_777_216;
  const stored = Math.trunc(fracC / div) & (n === 1 ? 0xff : 0xffff);
  return Buffer.concat([be(intPart + 0x800000, 3), be(stored, n)]);
}

/** decimal2bin of a decimal text (digits only, optional '-') at precision/scale. */
function decimalBytes(text: string, precision: number, scale: number): Buffer {
  const neg = text.startsWith('-');
  const [i, f = ''] = text.replace('-', '').split('.');
  const intg = precision - scale;
  const intDigits = i.padStart(intg, '0');
  const fracDigits = f.padEnd(scale, '0');
  const DIG = [0, 1, 1, 2, 2, 3, 3, 4, 4, 4];
  const parts: Buffer[] = [];
  const head = intg % 9;
  if (head) parts.push(be(Number(intDigits.slice(0, head)), DIG[head]));
  for (let k = head; k < intg; k += 9) parts.push(be(Number(intDigits.slice(k, k + 9)), 4));
  const full = Math.floor(scale / 9) * 9;
  for (let k = 0; k < full; k += 9) parts.push(be(Number(fracDigits.slice(k, k + 9)), 4));
  if (scale % 9) parts.push(be(Number(fracDigits.slice(full)), DIG[scale % 9]));
  const out = Buffer.concat(parts);
  if (neg) for (let k = 0; k < out.length; k++) out[k] ^= 0xff;
  out[0] ^= 0x80;
  return out;
}

describe('binary value readers agree with binlog-values.ts on random encodings', () => {
  it('TIME2 at every precision, negative fractions included (durations)', () => {
    for (let fsp = 0; fsp <= 6; fsp++) {
      const mapped = table([column('dur', 1, 'time', `time(${fsp})`, { datetimePrecision: fsp })]);
      const wire = { type: 19, meta: [fsp] };
      const reference = createBinlogRowConverter(mapped);
      fc.assert(
        fc.property(fc.integer({ min: -3_020_399_999_999, max: 3_020_399_999_999 }), (micros) => {
          const bytes = time2(micros, fsp);
          expect(decodeOne(mapped, wire, [bytes])[0]).toBe(reference({ dur: bytes })[0]);
        }),
        { numRuns: 300 },
      );
    }
  });

  it('DATETIME2, TIMESTAMP2 and DATE bytes, zero dates included', () => {
    for (let fsp = 0; fsp <= 6; fsp++) {
      const fracBytes = (fsp + 1) >> 1;
      const mapped = table([column('a', 1, 'datetime', `datetime(${fsp})`), column('b', 2, 'timestamp', `timestamp(${fsp})`), column('c', 3, 'date', 'date')]);
      const compiled = compileTable(parseTableMap(tableMapEvent([{ type: 18, meta: [fsp] }, { type: 17, meta: [fsp] }, { type: 10, meta: [] }]), 0), mapped);
      const reference = createBinlogRowConverter(mapped);
      fc.assert(
        fc.property(
          fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 0, max: 31 }), fc.integer({ min: 0, max: 2 ** 17 - 1 }),
          fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.integer({ min: 0, max: 999_999 }),
          (year, month, day, hms, seconds, frac) => {
            const ymd = ((year * 13 + month) << 5) | day;
            const fraction = fracBytes === 0 ? Buffer.alloc(0) : be(Math.floor(frac / 10 ** (6 - 2 * fracBytes)), fracBytes);
            const dt = Buffer.concat([be(ymd * 2 ** 17 + hms + 0x8000000000, 5), fraction]);
            const ts = Buffer.concat([be(seconds, 4), fraction]);
            const packedDate = day | (month << 5) | (year << 9);
            const date = Buffer.from([packedDate & 0xff, (packedDate >> 8) & 0xff, packedDate >> 16]);
            const ours = decodeRowsEvent(rowsEvent(23, 3, [[dt, ts, date]]), compiled, 0).rows[0];
            expect(ours).toEqual(reference({ a: dt, b: ts, c: date }));
          },
        ),
        { numRuns: 300 },
      );
    }
  });

  it('DECIMAL of every group layout, against mysql-json.ts binaryDecimalToString', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 65 }).chain((p) => fc.tuple(fc.constant(p), fc.integer({ min: 0, max: Math.min(p, 30) }))),
        fc.boolean(),
        fc.nat(),
        ([p, s], neg, seed) => {
          const digits = (n: number, k: number) => Array.from({ length: n }, (_, j) => String((seed * 7 + j * 13 + k) % 10)).join('');
          const text = `${neg ? '-' : ''}${digits(p - s, 1) || '0'}${s > 0 ? '.' + digits(s, 2) : ''}`;
          const bytes = decimalBytes(text, p, s);
          const mapped = table([column('x', 1, 'decimal', `decimal(${p},${s})`, { precision: p, scale: s })]);
          expect(decodeOne(mapped, { type: 246, meta: [p, s] }, [bytes])[0]).toBe(binaryDecimalToString(bytes, p, s));
        },
      ),
      { numRuns: 500 },
    );
    const mapped = table([column('x', 1, 'decimal', 'decimal(10,2)', { precision: 10, scale: 2 })]);
    expect(decodeOne(mapped, { type: 246, meta: [10, 2] }, [decimalBytes('-0.00', 10, 2), decimalBytes('-12.50', 10, 2), decimalBytes('0.05', 10, 2)])).toEqual(['0.00', '-12.50', '0.05']);
  });
});

describe('binlog-values: SETs of 7–8 bytes arrive as raw little-endian bytes', () => {
  it('decodes members above bit 53 from the bytes, as floe\'s decoder does', () => {
    const labels = Array.from({ length: 64 }, (_, i) => `m${i}`);
    const mapped = table([column('s', 1, 'set', `set(${labels.map((l) => `'${l}'`).join(',')})`, { labels })]);
    const mask = (1n << 63n) | (1n << 54n) | 5n;
    const bytes = Buffer.alloc(8);
    bytes.writeBigUInt64LE(mask);
    expect(createBinlogRowConverter(mapped)({ s: bytes })).toEqual(['m0,m2,m54,m63']);
    expect(decodeOne(mapped, { type: 254, meta: [248, 8] }, [bytes])).toEqual(['m0,m2,m54,m63']);
  });
});

describe("MariaDB's COMPRESSED columns (sql/field_comp.cc envelopes)", () => {
  const text = table([column('v', 1, 'varchar', 'varchar(300)', { charset: 'utf8mb4', maxLength: 300 })]);
  const blob = table([column('b', 1, 'blob', 'blob')]);
  const long = 'compressible 한글 text '.repeat(20);
  /** An envelope: method 8 with the original length in `lengthBytes` big-endian bytes, then the stream. */
  const zlibValue = (value: Buffer, raw: boolean, lengthBytes = 2): Buffer => Buffer.concat([Buffer.from([0x80 | (raw ? 0x08 : 0) | lengthBytes]), be(value.length, lengthBytes), raw ? deflateRawSync(value) : deflateSync(value)]);
  const prefixed = (value: Buffer, bytes: number): Buffer => Buffer.concat([bytes === 1 ? Buffer.from([value.length]) : Buffer.from([value.length & 0xff, value.length >> 8]), value]);

  it('reads VARCHAR COMPRESSED stored, zlib and raw deflate values, and the empty value without a header', () => {
    const wire = { type: 141, meta: [0xb0, 0x04] }; // max 1,200 bytes: a 2-byte length
    const values = [Buffer.concat([Buffer.from([0]), Buffer.from('short 😀')]), zlibValue(Buffer.from(long), false), zlibValue(Buffer.from(long), true), zlibValue(Buffer.from('abc'.repeat(30)), false, 1), Buffer.alloc(0)];
    expect(decodeOne(text, wire, values.map((v) => prefixed(v, 2)))).toEqual(['short 😀', long, long, 'abc'.repeat(30), '']);
  });

  it('reads BLOB COMPRESSED as bytes, and refuses an unknown method or a broken stream', () => {
    const bytes = Buffer.from(long.repeat(3));
    const wire = { type: 140, meta: [2] };
    expect(decodeOne(blob, wire, [prefixed(zlibValue(bytes, false, 3), 2)])).toEqual([bytes]);
    expect(() => decodeOne(blob, wire, [prefixed(Buffer.from([0x42, 1, 2]), 2)])).toThrow(/d\.t\.b \(blob\): expected a COMPRESSED value of method 0 \(stored\) or 8 \(zlib\).*method 4/);
    expect(() => decodeOne(blob, wire, [prefixed(Buffer.from([0x81, 9, 1, 2, 3]), 2)])).toThrow(/d\.t\.b \(blob\): expected a COMPRESSED value whose zlib stream inflates/);
  });
});

describe('rows event layouts', () => {
  const mapped = table([column('id', 1, 'int', 'int(11)'), column('v', 2, 'varchar', 'varchar(10)', { charset: 'utf8mb4', maxLength: 10 })]);
  const map = parseTableMap(tableMapEvent([{ type: 3, meta: [] }, { type: 15, meta: [40, 0] }]), 0);
  const compiled = compileTable(map, mapped);
  const int = (v: number) => {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    return b;
  };
  const str = (s: string) => Buffer.concat([Buffer.from([Buffer.byteLength(s)]), Buffer.from(s)]);

  it('v1 and v2 (with extra data), updates as before/after pairs, NULLs, partial images', () => {
    expect(map).toMatchObject({ tableId: 7, database: 'd', table: 't' });
    expect(decodeRowsEvent(rowsEvent(30, 2, [[int(-5), str('😀x')], [int(7), null]], { extra: Buffer.from([0, 3, 1, 2, 3]) }), compiled, 0)).toMatchObject({ kind: 'insert', flags: 1, rows: [[-5, '😀x'], [7, null]] });
    expect(decodeRowsEvent(rowsEvent(24, 2, [[int(1), str('a')], [int(1), str('b')]]), compiled, 0)).toMatchObject({ kind: 'update', rows: [[1, 'a'], [1, 'b']] });
    const partial = decodeRowsEvent(rowsEvent(25, 2, [[int(9)]], { present: [0] }), compiled, 0);
    expect(partial).toMatchObject({ kind: 'delete', rows: [[9, null]] });
    expect(partial.present).toEqual(Uint8Array.from([1]));
  });

  it('refuses a type that is no rows event, a TABLE_MAP of other columns, and a truncated event with FloeErrors', () => {
    const refusal = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return isFloeError(e) ? `${e.kind}: ${e.message}` : `not a FloeError: ${String(e)}`;
      }
      return 'no error';
    };
    expect(refusal(() => decodeRowsEvent(rowsEvent(40, 2, []), compiled, 0))).toMatch(/^unsupported: source\.mysql\.binlog: expected a WRITE\/UPDATE\/DELETE_ROWS event .*found type 40$/);
    expect(refusal(() => compileTable(parseTableMap(tableMapEvent([{ type: 3, meta: [] }]), 0), mapped))).toMatch(/^invalid-data: .*captured columns \(id, v\).*re-capture/);
    expect(refusal(() => compileTable(parseTableMap(tableMapEvent([{ type: 3, meta: [] }, { type: 255, meta: [4] }]), 0), mapped))).toMatch(/^unsupported: .*d\.t\.v .*spatial columns.*exclude the table/);
    // a charset nothing decodes (the mapping refuses it first: type-mapping.ts)
    const dec8 = { ...mapped, columns: mapped.columns.map((c) => (c.column.name === 'v' ? { ...c, column: { ...c.column, charset: 'dec8' } } : c)) };
    expect(refusal(() => compileTable(map, dec8))).toMatch(/^unsupported: .*character set dec8.*exclude the table/);
    const event = rowsEvent(23, 2, [[int(1), str('abcdef')]]);
    expect(refusal(() => decodeRowsEvent(event.subarray(0, event.length - 3), compiled, 0))).toMatch(/^invalid-data: .*d\.t/);
  });
});

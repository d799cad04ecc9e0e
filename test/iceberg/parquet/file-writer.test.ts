import * as arrow from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { schemaToJson } from '../../../src/iceberg/spec/schema-json.js';
import { toBinary } from '../../../src/iceberg/spec/single-value.js';
import { Types, type IcebergType, type NestedField } from '../../../src/iceberg/spec/types.js';
import { stringifyJson } from '../../../src/util/json.js';
import type { Row } from '../../../src/model/values.js';
import { ParquetFileWriter, writeParquetFile } from '../../../src/iceberg/parquet/file-writer.js';
import { ICEBERG_SCHEMA_KEY } from '../../../src/iceberg/parquet/file-writer-options.js';
import { readParquetRows } from '../../../src/iceberg/parquet/reader.js';
import { makeCompatibleName } from '../../../src/iceberg/parquet/compatible-name.js';
import { MetricsModes } from '../../../src/iceberg/parquet/metrics-config.js';
import { summarizeFooter } from '../../../src/iceberg/parquet/footer.js';
import { columnSizesById, readFooter, splitOffsets } from '../../support/parquet-footer.js';
import { elementsById, footerOf, readWithHyparquet } from './hyparquet-raw.js';

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;
const enc = new TextEncoder();

const PRIMITIVES: Array<[string, IcebergType]> = [
  ['bool', Types.boolean],
  ['int', Types.int],
  ['long', Types.long],
  ['float', Types.float],
  ['double', Types.double],
  ['dec_9_2', Types.decimal(9, 2)],
  ['dec_18_4', Types.decimal(18, 4)],
  ['dec_38_10', Types.decimal(38, 10)],
  ['date', Types.date],
  ['time', Types.time],
  ['ts', Types.timestamp],
  ['tstz', Types.timestamptz],
  ['ts_ns', Types.timestampNs],
  ['tstz_ns', Types.timestamptzNs],
  ['str', Types.string],
  ['uuid', Types.uuid],
  ['fixed', Types.fixed(3)],
  ['bin', Types.binary],
];

// One required id column, then every primitive as an optional column, plus a name that needs sanitizing.
const FIELDS: NestedField[] = [
  { id: 1, name: 'id', required: true, type: Types.long },
  ...PRIMITIVES.map(([name, type], i) => ({ id: 10 + i, name, required: false, type })),
  { id: 99, name: 'weird name.ü', required: false, type: Types.string },
];
const SCHEMA = new Schema(3, FIELDS, [1]);

const BIG_DEC = '9999999999999999999999999999.9999999999';
const LONG_STR = 'abcdefghijklmnopqrstuvwxyz'; // 26 code points: bounds truncate at 16

// Values per primitive column: [row0, row1, row2, row3]; row3 is all nulls.
const VALUES: unknown[][] = [
  [true, false, true, null],
  [-(2 ** 31), 2 ** 31 - 1, 0, null],
  [LONG_MIN, LONG_MAX, 0n, null],
  [NaN, -0, 0, null], // float: NaN never a bound, -0.0 < +0.0
  [Infinity, -1.7976931348623157e308, NaN, null],
  ['-9999999.99', '0.01', '1234567.89', null],
  ['99999999999999.9999', '-0.0001', '0.0000', null],
  [BIG_DEC, '-' + BIG_DEC, '0.0000000001', null],
  [-719162, -1, 2932896, null], // 0001-01-01, 1969-12-31, 9999-12-31
  [0n, 86_399_999_999n, 12_345n, null],
  [-62_135_596_800_000_000n, 1n, 1_700_000_000_123_456n, null], // 0001-01-01T00:00, epoch+1µs
  [-1n, 0n, 1_700_000_000_123_456n, null],
  [LONG_MIN, 1_700_000_000_123_456_789n, -1n, null],
  [0n, LONG_MAX, 123_456_789n, null],
  ['', '😀 four-byte', LONG_STR, null],
  ['00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff', '0b6e4f0a-1c2d-4e5f-8a9b-0c1d2e3f4a5b', null],
  [Uint8Array.of(0, 0, 0), Uint8Array.of(255, 255, 255), Uint8Array.of(1, 2, 3), null],
  [new Uint8Array(0), new Uint8Array(20).fill(0xff), Uint8Array.of(0x00, 0xff, 0x10), null],
];

const ROWS: Row[] = [0, 1, 2, 3].map((r) => [BigInt(r + 1), ...VALUES.map((col) => col[r]), r === 0 ? 'x' : null] as Row);

const hex = (b: Uint8Array | undefined): string | undefined => (b === undefined ? undefined : Buffer.from(b).toString('hex'));

describe('Parquet file writer: every primitive type', () => {
  it('writes a footer with field ids, repetition, the spec physical/logical types and iceberg.schema', async () => {
    const result = await writeParquetFile(SCHEMA, ROWS);
    const md = footerOf(result.bytes);
    const byId = elementsById(md);

    expect(md.num_rows).toBe(4n);
    expect(result.recordCount).toBe(4n);
    expect(result.fileSizeInBytes).toBe(BigInt(result.bytes.length));
    // Every non-root element is a field with an id.
    expect(md.schema.slice(1).every((e) => typeof e.field_id === 'number')).toBe(true);
    expect(byId.get(1)).toMatchObject({ name: 'id', type: 'INT64', repetition_type: 'REQUIRED' });
    for (const f of FIELDS.slice(1)) expect(byId.get(f.id)!.repetition_type).toBe('OPTIONAL');

    const el = (name: string) => byId.get(FIELDS.find((f) => f.name === name)!.id)!;
    expect(el('bool').type).toBe('BOOLEAN');
    expect(el('int')).toMatchObject({ type: 'INT32' });
    expect(el('int').logical_type).toBeUndefined();
    expect(el('long').logical_type).toBeUndefined();
    expect(el('float').type).toBe('FLOAT');
    expect(el('double').type).toBe('DOUBLE');
    expect(el('dec_9_2')).toMatchObject({ type: 'INT32', logical_type: { type: 'DECIMAL', precision: 9, scale: 2 } });
    expect(el('dec_18_4')).toMatchObject({ type: 'INT64', logical_type: { type: 'DECIMAL', precision: 18, scale: 4 } });
    expect(el('dec_38_10')).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16, logical_type: { type: 'DECIMAL', precision: 38, scale: 10 } });
    expect(el('date')).toMatchObject({ type: 'INT32', logical_type: { type: 'DATE' } });
    expect(el('time')).toMatchObject({ type: 'INT64', logical_type: { type: 'TIME', isAdjustedToUTC: false, unit: 'MICROS' } });
    expect(el('ts')).toMatchObject({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'MICROS' } });
    expect(el('tstz')).toMatchObject({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'MICROS' } });
    expect(el('ts_ns')).toMatchObject({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: false, unit: 'NANOS' } });
    expect(el('tstz_ns')).toMatchObject({ type: 'INT64', logical_type: { type: 'TIMESTAMP', isAdjustedToUTC: true, unit: 'NANOS' } });
    expect(el('str')).toMatchObject({ type: 'BYTE_ARRAY', logical_type: { type: 'STRING' } });
    expect(el('uuid')).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 16 });
    expect(el('fixed')).toMatchObject({ type: 'FIXED_LEN_BYTE_ARRAY', type_length: 3 });
    expect(el('bin').type).toBe('BYTE_ARRAY');
    expect(el('bin').logical_type).toBeUndefined();
    // Physical names are Java's makeCompatibleName; iceberg.schema keeps the original.
    expect(byId.get(99)!.name).toBe('weird_x20name_x2E_xFC');

    const kv = new Map(md.key_value_metadata!.map((e) => [e.key, e.value]));
    expect(kv.get(ICEBERG_SCHEMA_KEY)).toBe(stringifyJson(schemaToJson(SCHEMA)));
    expect(kv.get(ICEBERG_SCHEMA_KEY)).toContain('"name":"weird name.ü"');
    expect(md.row_groups[0].columns[0].meta_data!.codec).toBe('ZSTD');
  });

  it('reads back identically with floe’s reader and with hyparquet', async () => {
    const { bytes } = await writeParquetFile(SCHEMA, ROWS);
    const ours = await readParquetRows(bytes, { projection: SCHEMA });
    expect(ours).toEqual(ROWS);
    // -0.0 survives as -0.0 (toEqual treats -0 and +0 as different).
    expect(Object.is(ours[1][4], -0)).toBe(true);

    const theirs = await readWithHyparquet(bytes, FIELDS, FIELDS.map((f) => makeCompatibleName(f.name)));
    // hyparquet returns float columns as float32-rounded doubles, like ours.
    expect(theirs).toEqual(ROWS);
  });

  it('computes exact metrics: counts, NaN counts, bounds in the binary single-value encoding', async () => {
    const { metrics, bytes } = await writeParquetFile(SCHEMA, ROWS);
    const id = (name: string) => FIELDS.find((f) => f.name === name)!.id;
    for (const f of FIELDS) {
      expect(metrics.valueCounts.get(f.id)).toBe(4n);
      expect(metrics.nullValueCounts.get(f.id)).toBe(f.id === 1 ? 0n : f.id === 99 ? 3n : 1n);
    }
    expect(metrics.nanValueCounts).toEqual(
      new Map([
        [id('float'), 1n],
        [id('double'), 1n],
      ]),
    );
    const lower = (name: string) => hex(metrics.lowerBounds.get(id(name)));
    const upper = (name: string) => hex(metrics.upperBounds.get(id(name)));

    expect(lower('bool')).toBe('00');
    expect(upper('bool')).toBe('01');
    expect(lower('int')).toBe('00000080');
    expect(upper('int')).toBe('ffffff7f');
    expect(lower('long')).toBe('0000000000000080');
    expect(upper('long')).toBe('ffffffffffffff7f');
    expect(lower('float')).toBe('00000080'); // -0.0f
    expect(upper('float')).toBe('00000000'); // +0.0f
    expect(lower('double')).toBe(hex(toBinary(Types.double, -1.7976931348623157e308)));
    expect(upper('double')).toBe('000000000000f07f'); // +Infinity
    expect(lower('dec_9_2')).toBe(hex(Uint8Array.of(0xc4, 0x65, 0x36, 0x01))); // -999999999 minimal two's complement
    expect(upper('dec_9_2')).toBe(hex(Uint8Array.of(0x07, 0x5b, 0xcd, 0x15))); // 123456789
    expect(lower('dec_18_4')).toBe('ff'); // -1
    expect(upper('dec_18_4')).toBe(hex(toBinary(Types.decimal(18, 4), '99999999999999.9999')));
    expect(lower('dec_38_10')).toBe(hex(toBinary(Types.decimal(38, 10), '-' + BIG_DEC)));
    expect(metrics.upperBounds.get(id('dec_38_10'))!.length).toBe(16);
    expect(lower('date')).toBe(hex(toBinary(Types.date, -719162)));
    expect(upper('date')).toBe(hex(toBinary(Types.date, 2932896)));
    expect(lower('time')).toBe('0000000000000000');
    expect(upper('time')).toBe(hex(toBinary(Types.time, 86_399_999_999n)));
    expect(lower('ts')).toBe(hex(toBinary(Types.timestamp, -62_135_596_800_000_000n)));
    expect(upper('tstz')).toBe(hex(toBinary(Types.timestamptz, 1_700_000_000_123_456n)));
    expect(lower('ts_ns')).toBe('0000000000000080');
    expect(upper('tstz_ns')).toBe('ffffffffffffff7f');
    // Strings: '' is the lower bound; '😀…' (U+1F600) sorts after every ASCII string, and at 11 code
    // points it is not truncated.
    expect(lower('str')).toBe('');
    expect(upper('str')).toBe(hex(enc.encode('😀 four-byte')));
    expect(lower('uuid')).toBe('00000000000000000000000000000000');
    expect(upper('uuid')).toBe('ffffffffffffffffffffffffffffffff');
    expect(lower('fixed')).toBe('000000');
    expect(upper('fixed')).toBe('ffffff');
    // Binary: lower = empty; upper = 20 × 0xff truncated to 16 cannot be incremented → no upper bound.
    expect(lower('bin')).toBe('');
    expect(upper('bin')).toBeUndefined();

    // Column sizes: compressed bytes per column, from the footer.
    const md = footerOf(bytes);
    for (const f of FIELDS) {
      const chunk = md.row_groups[0].columns.find((c) => c.meta_data!.path_in_schema[0] === makeCompatibleName(f.name))!;
      expect(metrics.columnSizes.get(f.id)).toBe(chunk.meta_data!.total_compressed_size);
    }
  });

  it('truncates string and binary bounds to 16 and increments the upper bound', async () => {
    const schema = new Schema(0, [
      { id: 1, name: 's', required: true, type: Types.string },
      { id: 2, name: 'b', required: true, type: Types.binary },
    ]);
    const rows: Row[] = [
      ['abcdefghijklmnopqrstuvwxyz', new Uint8Array([...new Array(16).fill(1), 0xff, 0xff])],
      ['abcdefghijklmnop', Uint8Array.of(1, 1)],
      // 17 code points, the 16th is U+10FFFF: the 15th is incremented instead.
      ['aaaaaaaaaaaaaa\u{10FFFF}\u{10FFFF}z', new Uint8Array([...new Array(15).fill(1), 0xff, 7])],
    ];
    const full = await writeParquetFile(schema, [rows[0], rows[1]]);
    expect(hex(full.metrics.lowerBounds.get(1))).toBe(hex(enc.encode('abcdefghijklmnop')));
    expect(hex(full.metrics.upperBounds.get(1))).toBe(hex(enc.encode('abcdefghijklmnoq')));
    expect(hex(full.metrics.lowerBounds.get(2))).toBe('0101');
    expect(hex(full.metrics.upperBounds.get(2))).toBe('01010101010101010101010101010102');

    const edge = await writeParquetFile(schema, [rows[2]]);
    expect(hex(edge.metrics.lowerBounds.get(1))).toBe(hex(enc.encode('aaaaaaaaaaaaaa\u{10FFFF}\u{10FFFF}')));
    expect(hex(edge.metrics.upperBounds.get(1))).toBe(hex(enc.encode('aaaaaaaaaaaaab')));
    expect(hex(edge.metrics.upperBounds.get(2))).toBe('01010101010101010101010101010102'.slice(0, 28) + '02');

    const untruncated = await writeParquetFile(schema, rows, { metrics: { defaultMode: MetricsModes.full } });
    expect(hex(untruncated.metrics.upperBounds.get(1))).toBe(hex(enc.encode('abcdefghijklmnopqrstuvwxyz')));
    const countsOnly = await writeParquetFile(schema, rows, { metrics: { defaultMode: MetricsModes.counts, columnModes: new Map([[2, MetricsModes.none]]) } });
    expect(countsOnly.metrics.valueCounts.get(1)).toBe(3n);
    expect(countsOnly.metrics.lowerBounds.size).toBe(0);
    expect(countsOnly.metrics.valueCounts.has(2)).toBe(false);
    expect(countsOnly.metrics.columnSizes.has(2)).toBe(false);
    expect(countsOnly.metrics.columnSizes.has(1)).toBe(true);
  });

  it('keeps NaN out of bounds and leaves all-NaN columns without bounds', async () => {
    const schema = new Schema(0, [
      { id: 1, name: 'f', required: false, type: Types.float },
      { id: 2, name: 'd', required: false, type: Types.double },
    ]);
    const r = await writeParquetFile(schema, [
      [NaN, NaN],
      [null, NaN],
      [NaN, null],
    ]);
    expect(r.metrics.nanValueCounts.get(1)).toBe(2n);
    expect(r.metrics.nanValueCounts.get(2)).toBe(2n);
    expect(r.metrics.nullValueCounts.get(1)).toBe(1n);
    expect(r.metrics.lowerBounds.size).toBe(0);
    expect(r.metrics.upperBounds.size).toBe(0);
  });
});

describe('Parquet file writer: nested types', () => {
  const schema = new Schema(0, [
    { id: 1, name: 'id', required: true, type: Types.int },
    {
      id: 2,
      name: 'point',
      required: false,
      type: {
        kind: 'struct',
        fields: [
          { id: 3, name: 'x', required: true, type: Types.double },
          { id: 4, name: 'label', required: false, type: Types.string },
          { id: 5, name: 'gone', required: false, type: Types.unknown },
        ],
      },
    },
    { id: 6, name: 'tags', required: false, type: { kind: 'list', elementId: 7, elementRequired: false, element: Types.string } },
    { id: 8, name: 'attrs', required: true, type: { kind: 'map', keyId: 9, keyType: Types.string, valueId: 10, valueRequired: false, valueType: Types.long } },
    { id: 11, name: 'nothing', required: false, type: Types.unknown },
  ]);
  const rows: Row[] = [
    [1, [1.5, 'a', null], ['x', null, 'y'], new Map([['k1', 1n], ['k2', null]]), null],
    [2, null, null, [['k3', -5n]], null],
    [3, [-2.5, null, null], [], [], null],
  ] as unknown as Row[];
  const expected = [
    [1, [1.5, 'a', null], ['x', null, 'y'], [['k1', 1n], ['k2', null]], null],
    [2, null, null, [['k3', -5n]], null],
    [3, [-2.5, null, null], [], [], null],
  ];

  it('writes ids on struct children, list element and map key/value; Java group names; no unknown columns', async () => {
    const { bytes, metrics } = await writeParquetFile(schema, rows);
    const md = footerOf(bytes);
    const shape = md.schema.slice(1).map((e) => `${e.name}:${e.repetition_type}:${e.field_id ?? '-'}`);
    expect(shape).toEqual([
      'id:REQUIRED:1',
      'point:OPTIONAL:2',
      'x:REQUIRED:3',
      'label:OPTIONAL:4',
      'tags:OPTIONAL:6',
      'list:REPEATED:-',
      'element:OPTIONAL:7',
      'attrs:REQUIRED:8',
      'key_value:REPEATED:-',
      'key:REQUIRED:9',
      'value:OPTIONAL:10',
    ]);
    expect(md.schema.find((e) => e.name === 'tags')!.logical_type?.type).toBe('LIST');
    expect(md.schema.find((e) => e.name === 'attrs')!.logical_type?.type).toBe('MAP');

    // Struct children get metrics (a null struct makes its children null); list/map contents get none.
    expect(metrics.valueCounts.get(3)).toBe(3n);
    expect(metrics.nullValueCounts.get(3)).toBe(1n);
    expect(metrics.nullValueCounts.get(4)).toBe(2n);
    expect(hex(metrics.lowerBounds.get(3))).toBe(hex(toBinary(Types.double, -2.5)));
    for (const inner of [7, 9, 10]) {
      expect(metrics.valueCounts.has(inner)).toBe(false);
      expect(metrics.lowerBounds.has(inner)).toBe(false);
      expect(metrics.columnSizes.has(inner)).toBe(true);
    }

    expect(await readParquetRows(bytes, { projection: schema })).toEqual(expected);
    const written = schema.fields.filter((f) => f.type.kind !== 'unknown');
    const theirs = await readWithHyparquet(bytes, written, written.map((f) => f.name));
    expect(theirs).toEqual(expected.map((r) => [r[0], r[1] === null ? null : (r[1] as unknown[]).slice(0, 2), r[2], r[3]]));
  });
});

describe('Parquet file writer: row groups, batches and errors', () => {
  const schema = new Schema(0, [
    { id: 1, name: 'k', required: true, type: Types.long },
    { id: 2, name: 'v', required: false, type: Types.string },
  ]);
  const rows = (n: number, from = 0): Row[] =>
    Array.from({ length: n }, (_, i) => {
      const k = from + i;
      return [BigInt(k), k % 7 === 0 ? null : `value-${k}-${'x'.repeat(k % 13)}`];
    });

  it('splits into row groups with ascending split offsets and sums column sizes over them', async () => {
    const writer = new ParquetFileWriter(schema, { rowGroupBytes: 64 * 1024, batchRows: 1000 });
    for (let b = 0; b < 20; b++) await writer.write(rows(1000, b * 1000));
    const r = await writer.close();
    const md = footerOf(r.bytes);
    expect(md.row_groups.length).toBeGreaterThan(2);
    expect(r.splitOffsets).toHaveLength(md.row_groups.length);
    expect(r.splitOffsets[0]).toBe(4n);
    for (let i = 1; i < r.splitOffsets.length; i++) expect(r.splitOffsets[i]).toBeGreaterThan(r.splitOffsets[i - 1]);
    const sum = (path: string) => md.row_groups.reduce((s, g) => s + g.columns.find((c) => c.meta_data!.path_in_schema[0] === path)!.meta_data!.total_compressed_size, 0n);
    expect(r.metrics.columnSizes.get(1)).toBe(sum('k'));
    expect(r.metrics.columnSizes.get(2)).toBe(sum('v'));
    expect(r.recordCount).toBe(20_000n);
    expect(r.metrics.nullValueCounts.get(2)).toBe(BigInt(rows(20_000).filter((x) => x[1] === null).length));
    expect(hex(r.metrics.upperBounds.get(1))).toBe(hex(toBinary(Types.long, 19_999n)));
    const back = await readParquetRows(r.bytes, { projection: schema, batchRows: 777 });
    expect(back).toEqual(rows(20_000));
  });

  it('reads its own footers as hyparquet does (the writer’s lean footer reader): nested columns, row groups, dictionaries, no rows', async () => {
    const nested = new Schema(0, [
      { id: 1, name: 'id', required: true, type: Types.long },
      { id: 2, name: 'point', required: false, type: { kind: 'struct', fields: [{ id: 3, name: 'x', required: true, type: Types.double }] } },
      { id: 4, name: 'tags', required: false, type: { kind: 'list', elementId: 5, elementRequired: false, element: Types.string } },
      { id: 6, name: 'v', required: false, type: Types.string },
    ]);
    const data = (n: number): Row[] => Array.from({ length: n }, (_, i) => [BigInt(i), i % 3 === 0 ? null : [i / 2], i % 4 === 0 ? null : ['a', `t${i % 5}`], i % 7 === 0 ? null : `value-${i % 11}`] as unknown as Row);
    for (const [rows, options] of [
      [data(0), {}],
      [data(5), {}],
      [data(20_000), { rowGroupBytes: 64 * 1024, batchRows: 1000 }],
      [data(3000), { dictionary: false }],
    ] as const) {
      const written = await writeParquetFile(nested, rows, options);
      const summary = summarizeFooter(written.bytes);
      const full = readFooter(written.bytes);
      expect(summary.numRows).toBe(full.numRows);
      expect(summary.leaves).toEqual(full.leaves.map((l) => ({ path: l.path, fieldId: l.fieldId })));
      expect(summary.columnSizes).toEqual(columnSizesById(full));
      expect(summary.splitOffsets).toEqual(splitOffsets(full));
      expect(written.metrics.columnSizes).toEqual(columnSizesById(full));
    }
    expect(() => summarizeFooter(new Uint8Array([1, 2, 3]))).toThrow(/not a Parquet file/);
  });

  it('a file of one small batch is written without dictionary pages and page index; larger files with both', async () => {
    const small = await writeParquetFile(schema, rows(200));
    for (const c of footerOf(small.bytes).row_groups[0].columns) {
      expect(c.meta_data!.dictionary_page_offset).toBeUndefined();
      expect(c.column_index_offset).toBeUndefined();
      expect(c.meta_data!.statistics).toBeDefined(); // chunk statistics stay
    }
    expect(await readParquetRows(small.bytes, { projection: schema })).toEqual(rows(200));
    const asked = await writeParquetFile(schema, rows(200), { dictionary: true });
    expect(footerOf(asked.bytes).row_groups[0].columns[1].meta_data!.dictionary_page_offset).toBeDefined();
    const large = await writeParquetFile(schema, rows(5000));
    const column = footerOf(large.bytes).row_groups[0].columns[1];
    expect(column.meta_data!.dictionary_page_offset).toBeDefined();
    expect(column.column_index_offset).toBeDefined();
  });

  it('hands the encoder the IPC stream arrow-js writes for the same batch', async () => {
    let ipc: Uint8Array | undefined;
    const capture = () => ({
      bytesEmitted: 0,
      chunksEmitted: 0,
      write: async () => {},
      finish: async (last?: Uint8Array) => {
        ipc = last;
        return [];
      },
      abort: async () => {},
    });
    const w = new ParquetFileWriter(schema, { encoderFactory: capture });
    for (const r of rows(50)) w.appendOne(r);
    await expect(w.close()).rejects.toThrow(); // the fake encoder returns no file
    const table = arrow.tableFromIPC(ipc!);
    expect(table.numRows).toBe(50);
    expect(Buffer.from(ipc!).equals(Buffer.from(arrow.tableToIPC(table, 'stream')))).toBe(true);
  });

  it('accepts column batches', async () => {
    const w = new ParquetFileWriter(schema, { batchRows: 3 });
    await w.writeColumns([
      [1n, 2n, 3n, 4n, 5n],
      ['a', null, 'c', 'd', 'e'],
    ]);
    const r = await w.close();
    expect(await readParquetRows(r.bytes, { projection: schema })).toEqual([
      [1n, 'a'],
      [2n, null],
      [3n, 'c'],
      [4n, 'd'],
      [5n, 'e'],
    ]);
  });

  it('writes a valid empty file', async () => {
    const r = await writeParquetFile(schema, []);
    expect(r.recordCount).toBe(0n);
    expect(footerOf(r.bytes).num_rows).toBe(0n);
    expect(await readParquetRows(r.bytes)).toEqual([]);
    expect(r.metrics.valueCounts.get(1)).toBe(0n);
    expect(r.metrics.lowerBounds.size).toBe(0);
  });

  it('rejects values that do not fit the column, naming it, and refuses to continue', async () => {
    const all = new Schema(0, [
      { id: 1, name: 'i', required: false, type: Types.int },
      { id: 2, name: 'l', required: false, type: Types.long },
      { id: 3, name: 'd', required: false, type: Types.decimal(5, 2) },
      { id: 4, name: 'r', required: true, type: Types.string },
      { id: 5, name: 'u', required: false, type: Types.uuid },
      { id: 6, name: 'f', required: false, type: Types.fixed(2) },
      { id: 7, name: 't', required: false, type: Types.time },
    ]);
    const ok: Row = [1, 1n, '1.00', 'x', null, null, null];
    const bad: Array<[number, unknown, RegExp]> = [
      [0, 2 ** 31, /column i \(int\): expected a 32-bit integer/],
      [0, 1.5, /column i/],
      [1, 2n ** 63n, /column l \(long\).*signed 64-bit/],
      [1, 1.5, /column l/],
      [2, '1000.00', /column d \(decimal\(5, 2\)\).*precision/],
      [2, '1.001', /column d.*at most 2 fraction digits/],
      [2, 1.5, /column d.*decimal string/],
      [3, null, /column r is required but the value is null/],
      [4, 'not-a-uuid', /column u \(uuid\)/],
      [5, Uint8Array.of(1, 2, 3), /column f \(fixed\[2\]\): expected 2 bytes/],
      [6, 86_400_000_000n, /column t \(time\): expected microseconds since midnight/],
      [6, -1n, /column t \(time\)/],
    ];
    for (const [col, value, message] of bad) {
      const w = new ParquetFileWriter(all);
      const row = [...ok];
      row[col] = value as never;
      await expect(w.write([ok, row])).rejects.toThrow(message);
      await expect(w.close()).rejects.toThrow(/rejected a value earlier/);
      await w.abort();
    }
    const w = new ParquetFileWriter(all);
    await expect(w.write([[1, 2n]] as never)).rejects.toThrow(/expected an array of 7 values/);
    await w.abort();
  });
});

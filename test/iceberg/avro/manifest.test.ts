/**
 * Manifests and manifest lists written by floe, decoded by the independent `avsc` library: the writer
 * schema (record names, field ids, optional unions, logical types), the key-value metadata and the
 * values; then read back by floe's reader with inheritance applied.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaToJson as avroSchemaToJson } from '../../../src/iceberg/avro/schema.js';
import type { DataFile, ManifestEntry } from '../../../src/iceberg/data-file.js';
import { readManifestList, writeManifestList } from '../../../src/iceberg/manifest-list.js';
import { manifestEntryAvroSchema, manifestListAvroSchema } from '../../../src/iceberg/manifest-schemas.js';
import { readManifest, writeManifest, type WriteManifestOptions } from '../../../src/iceberg/manifest.js';
import type { ManifestFile } from '../../../src/iceberg/manifest-file.js';
import type { PartitionSpec } from '../../../src/iceberg/partition.js';
import { deletionVectorFile, writeDeletionVectorPuffin } from '../../../src/iceberg/puffin/index.js';
import { Schema } from '../../../src/iceberg/schema.js';
import { applyTransform } from '../../../src/iceberg/transforms.js';
import { Types } from '../../../src/iceberg/types.js';
import { parseDate, type Value } from '../../../src/model/values.js';
import { decodeWithAvsc, plain } from './avsc-decode.js';

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const le32 = (n: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n, true);
  return b;
};
/** Two's complement big-endian of `v` in `bytes` bytes, computed independently of the writer. */
const twosComplement = (v: bigint, bytes: number): Uint8Array => {
  const u = BigInt.asUintN(bytes * 8, v);
  return Uint8Array.from({ length: bytes }, (_, i) => Number((u >> BigInt(8 * (bytes - 1 - i))) & 0xffn));
};

const schema = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'name', required: false, type: Types.string },
    { id: 3, name: 'day', required: false, type: Types.date },
    { id: 4, name: 'cat', required: false, type: Types.int },
    { id: 5, name: 'code', required: false, type: Types.string },
    { id: 6, name: 'amount', required: false, type: Types.decimal(10, 2) },
    { id: 7, name: 'amount2', required: false, type: Types.decimal(10, 2) },
  ],
  [1],
);

const spec: PartitionSpec = {
  specId: 1,
  fields: [
    { sourceId: 2, fieldId: 1000, name: 'name', transform: { kind: 'identity' } },
    { sourceId: 3, fieldId: 1001, name: 'day_day', transform: { kind: 'day' } },
    { sourceId: 4, fieldId: 1002, name: 'cat_bucket', transform: { kind: 'bucket', n: 16 } },
    { sourceId: 5, fieldId: 1003, name: 'code_trunc', transform: { kind: 'truncate', width: 4 } },
    { sourceId: 6, fieldId: 1004, name: 'amount', transform: { kind: 'identity' } },
    { sourceId: 7, fieldId: 1005, name: 'amount2', transform: { kind: 'identity' } },
  ],
};
const unpartitioned: PartitionSpec = { specId: 0, fields: [] };

/** The partition tuple of a source row (values by source field id) under `spec`. */
function partitionOf(row: Record<number, Value>): Value[] {
  return spec.fields.map((f) => applyTransform(f.transform, schema.field(f.sourceId).type, row[f.sourceId] ?? null));
}

function dataFile(path: string, recordCount: bigint, partition: Value[], extra: Partial<DataFile> = {}): DataFile {
  return { content: 'data', filePath: path, fileFormat: 'PARQUET', specId: spec.specId, partition, recordCount, fileSizeInBytes: 1000n + recordCount, ...extra };
}

const SNAPSHOT = 5_000_000_000_000_000_001n; // above 2^53: must survive exactly
const rowA = { 2: 'alice', 3: parseDate('2024-02-29'), 4: 34, 5: 'abcdef', 6: '123.45', 7: '-0.01' };
const rowB = { 2: null, 3: parseDate('1969-12-31'), 4: -3, 5: 'xy', 6: '-99999999.99', 7: null };
const rowC = { 2: 'bob', 3: 0, 4: 1, 5: 'zzzz', 6: '0.00', 7: '1.00' };
const rowD = { 2: 'carol', 3: 10, 4: 2, 5: 'q', 6: '5.55', 7: '2.00' };

function dataEntries(formatVersion: 2 | 3): ManifestEntry[] {
  return [
    {
      status: 'added',
      dataFile: dataFile('s3://b/t/data/a.parquet', 10n, partitionOf(rowA), {
        columnSizes: new Map([
          [2, 30n],
          [1, 100n],
        ]),
        valueCounts: new Map([[1, 10n]]),
        nullValueCounts: new Map([[1, 0n]]),
        nanValueCounts: new Map(),
        lowerBounds: new Map([[1, le32(1)]]),
        upperBounds: new Map([[1, le32(99)]]),
        splitOffsets: [4n],
        sortOrderId: 0,
      }),
    },
    { status: 'added', dataFile: dataFile('s3://b/t/data/b.parquet', 5n, partitionOf(rowB)) },
    {
      status: 'existing',
      snapshotId: 111n,
      sequenceNumber: 3n,
      fileSequenceNumber: 3n,
      dataFile: dataFile('s3://b/t/data/c.parquet', 7n, partitionOf(rowC), formatVersion === 3 ? { firstRowId: 100n } : {}),
    },
    {
      status: 'deleted',
      snapshotId: 99n, // replaced by the writing snapshot, as Java's ManifestWriter.delete does
      sequenceNumber: 2n,
      fileSequenceNumber: 2n,
      dataFile: dataFile('s3://b/t/data/d.parquet', 4n, partitionOf(rowD), formatVersion === 3 ? { firstRowId: 50n } : {}),
    },
  ];
}

function write(o: Partial<WriteManifestOptions> & Pick<WriteManifestOptions, 'formatVersion' | 'entries'>) {
  return writeManifest({ schema, spec, content: 'data', snapshotId: SNAPSHOT, path: 's3://b/t/metadata/m0.avro', ...o });
}

/** Checks the Iceberg rules for an Avro schema: ids everywhere, null-first optional unions with default null. */
function checkIcebergAvroSchema(s: any, path = 'root'): void {
  if (Array.isArray(s)) {
    expect(s.length, `${path}: union`).toBe(2);
    expect(s[0], `${path}: null first`).toBe('null');
    checkIcebergAvroSchema(s[1], path);
    return;
  }
  if (typeof s !== 'object') return;
  if (s.type === 'record') {
    for (const f of s.fields) {
      expect(Number.isInteger(f['field-id']), `${path}.${f.name} field-id`).toBe(true);
      if (Array.isArray(f.type)) expect(f.default, `${path}.${f.name} default`).toBeNull();
      checkIcebergAvroSchema(f.type, `${path}.${f.name}`);
    }
  } else if (s.type === 'array') {
    if (s.logicalType === 'map') {
      expect(s.items.type).toBe('record');
      expect(s.items.fields.map((f: any) => f.name)).toEqual(['key', 'value']);
      expect(s.items.name).toBe(`k${s.items.fields[0]['field-id']}_v${s.items.fields[1]['field-id']}`);
    } else {
      expect(Number.isInteger(s['element-id']), `${path} element-id`).toBe(true);
    }
    checkIcebergAvroSchema(s.items, `${path}[]`);
  }
}

const fieldOf = (record: any, name: string): any => record.fields.find((f: any) => f.name === name);
const unwrap = (t: any): any => (Array.isArray(t) ? t[1] : t);

describe.each([2, 3] as const)('format v%i manifests', (formatVersion) => {
  it('writes a partitioned data manifest with Java record names, field ids, logical types and metadata', async () => {
    const entries = dataEntries(formatVersion);
    const { bytes, manifest } = write({ formatVersion, entries });
    const f = await decodeWithAvsc(bytes);
    expect(f.codec).toBe('deflate');

    // Schema: names and ids as Java writes them.
    const s = f.schema;
    checkIcebergAvroSchema(s);
    expect(s.name).toBe('manifest_entry');
    expect(s.fields.map((x: any) => [x.name, x['field-id']])).toEqual([
      ['status', 0],
      ['snapshot_id', 1],
      ['sequence_number', 3],
      ['file_sequence_number', 4],
      ['data_file', 2],
    ]);
    const df = fieldOf(s, 'data_file').type;
    expect(df.name).toBe('r2');
    const v3Fields = formatVersion === 3 ? [['first_row_id', 142]] : [];
    const v3Tail = formatVersion === 3 ? [['content_offset', 144], ['content_size_in_bytes', 145]] : [];
    expect(df.fields.map((x: any) => [x.name, x['field-id']])).toEqual([
      ['content', 134], ['file_path', 100], ['file_format', 101], ['partition', 102], ['record_count', 103], ['file_size_in_bytes', 104],
      ['column_sizes', 108], ['value_counts', 109], ['null_value_counts', 110], ['nan_value_counts', 137], ['lower_bounds', 125], ['upper_bounds', 128],
      ['key_metadata', 131], ['split_offsets', 132], ['equality_ids', 135], ['sort_order_id', 140], ...v3Fields, ['referenced_data_file', 143], ...v3Tail,
    ]);
    expect(unwrap(fieldOf(df, 'column_sizes').type).items.name).toBe('k117_v118');
    expect(unwrap(fieldOf(df, 'lower_bounds').type).items.fields[1].type).toBe('bytes');
    expect(unwrap(fieldOf(df, 'split_offsets').type)['element-id']).toBe(133);
    expect(unwrap(fieldOf(df, 'equality_ids').type)['element-id']).toBe(136);
    const partition = fieldOf(df, 'partition').type;
    expect(partition.name).toBe('r102');
    expect(partition.fields.map((x: any) => [x.name, x['field-id'], x.default])).toEqual([
      ['name', 1000, null], ['day_day', 1001, null], ['cat_bucket', 1002, null], ['code_trunc', 1003, null], ['amount', 1004, null], ['amount2', 1005, null],
    ]);
    expect(partition.fields.map((x: any) => x.type)).toEqual([
      ['null', 'string'],
      ['null', { type: 'int', logicalType: 'date' }],
      ['null', 'int'],
      ['null', 'string'],
      ['null', { type: 'fixed', name: 'decimal_10_2', size: 5, logicalType: 'decimal', precision: 10, scale: 2 }],
      ['null', 'decimal_10_2'], // a named type is defined once, then referenced
    ]);

    // Key-value metadata (spec "Manifests").
    expect(JSON.parse(f.meta.schema)).toMatchObject({ type: 'struct', 'schema-id': 0, 'identifier-field-ids': [1] });
    expect(JSON.parse(f.meta.schema).fields.map((x: any) => x.id)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(f.meta['schema-id']).toBe('0');
    expect(JSON.parse(f.meta['partition-spec'])).toEqual([
      { name: 'name', transform: 'identity', 'source-id': 2, 'field-id': 1000 },
      { name: 'day_day', transform: 'day', 'source-id': 3, 'field-id': 1001 },
      { name: 'cat_bucket', transform: 'bucket[16]', 'source-id': 4, 'field-id': 1002 },
      { name: 'code_trunc', transform: 'truncate[4]', 'source-id': 5, 'field-id': 1003 },
      { name: 'amount', transform: 'identity', 'source-id': 6, 'field-id': 1004 },
      { name: 'amount2', transform: 'identity', 'source-id': 7, 'field-id': 1005 },
    ]);
    expect(f.meta['partition-spec-id']).toBe('1');
    expect(f.meta['format-version']).toBe(String(formatVersion));
    expect(f.meta.content).toBe('data');
    expect(JSON.parse(f.meta['iceberg.schema']).fields.map((x: any) => x.id)).toEqual([0, 1, 3, 4, 2]);

    // Values.
    const r = f.records.map(plain);
    expect(r.map((e: any) => [e.status, e.snapshot_id, e.sequence_number, e.file_sequence_number])).toEqual([
      [1, null, null, null], // ADDED: everything inherited
      [1, null, null, null],
      [0, 111n, 3n, 3n],
      [2, SNAPSHOT, 2n, 2n], // DELETED: the deleting snapshot
    ]);
    expect(r[0].data_file.partition).toEqual({
      name: 'alice',
      day_day: 19782, // 2024-02-29 is day 19782 since 1970-01-01
      cat_bucket: 3, // spec Appendix B: hash(34) = 2017239379, 2017239379 mod 16 = 3
      code_trunc: 'abcd',
      amount: twosComplement(12345n, 5),
      amount2: twosComplement(-1n, 5),
    });
    expect(r[1].data_file.partition).toEqual({
      name: null,
      day_day: -1,
      cat_bucket: partitionOf(rowB)[2],
      code_trunc: 'xy',
      amount: twosComplement(-9999999999n, 5),
      amount2: null,
    });
    expect(r[0].data_file).toMatchObject({
      content: 0,
      file_path: 's3://b/t/data/a.parquet',
      file_format: 'PARQUET',
      record_count: 10n,
      file_size_in_bytes: 1010n,
      column_sizes: [{ key: 1, value: 100n }, { key: 2, value: 30n }],
      value_counts: [{ key: 1, value: 10n }],
      nan_value_counts: [],
      lower_bounds: [{ key: 1, value: le32(1) }],
      split_offsets: [4n],
      equality_ids: null,
      sort_order_id: 0,
      referenced_data_file: null,
    });
    expect(r[1].data_file.column_sizes).toBeNull();
    if (formatVersion === 3) {
      expect(r.map((e: any) => e.data_file.first_row_id)).toEqual([null, null, 100n, 50n]);
      expect(r.map((e: any) => e.data_file.content_offset)).toEqual([null, null, null, null]);
    } else {
      expect('first_row_id' in r[0].data_file).toBe(false);
    }

    // The manifest-list row.
    expect(manifest).toEqual({
      path: 's3://b/t/metadata/m0.avro',
      length: BigInt(bytes.length),
      specId: 1,
      content: 'data',
      addedSnapshotId: SNAPSHOT,
      addedFilesCount: 2,
      existingFilesCount: 1,
      deletedFilesCount: 1,
      addedRowsCount: 15n,
      existingRowsCount: 7n,
      deletedRowsCount: 4n,
      minSequenceNumber: 3n, // live entries only: the DELETED entry's 2 does not count
      partitions: [
        { containsNull: true, containsNan: false, lowerBound: utf8('alice'), upperBound: utf8('carol') },
        { containsNull: false, containsNan: false, lowerBound: le32(-1), upperBound: le32(19782) },
        expect.objectContaining({ containsNull: false, containsNan: false }),
        { containsNull: false, containsNan: false, lowerBound: utf8('abcd'), upperBound: utf8('zzzz') },
        // decimal bounds: minimal two's complement bytes (Appendix D), not the fixed width
        { containsNull: false, containsNan: false, lowerBound: twosComplement(-9999999999n, 5), upperBound: twosComplement(12345n, 2) },
        { containsNull: true, containsNan: false, lowerBound: twosComplement(-1n, 1), upperBound: twosComplement(200n, 2) },
      ],
    });

    // floe's reader, with the list row's inheritance.
    const row: ManifestFile = { ...manifest, sequenceNumber: 8n, minSequenceNumber: 3n, ...(formatVersion === 3 ? { firstRowId: 1000n } : {}) };
    const read = readManifest(bytes, row);
    expect(read.metadata).toMatchObject({ formatVersion, content: 'data', schemaId: 0, specId: 1 });
    expect(read.metadata.partitionFields.map((p) => [p.fieldId, p.name, p.transform, p.type])).toEqual([
      [1000, 'name', 'identity', Types.string],
      [1001, 'day_day', 'day', Types.date],
      [1002, 'cat_bucket', 'bucket[16]', Types.int],
      [1003, 'code_trunc', 'truncate[4]', Types.string],
      [1004, 'amount', 'identity', Types.decimal(10, 2)],
      [1005, 'amount2', 'identity', Types.decimal(10, 2)],
    ]);
    expect(read.entries.map((e) => [e.status, e.snapshotId, e.sequenceNumber, e.fileSequenceNumber])).toEqual([
      ['added', SNAPSHOT, 8n, 8n],
      ['added', SNAPSHOT, 8n, 8n],
      ['existing', 111n, 3n, 3n],
      ['deleted', SNAPSHOT, 2n, 2n],
    ]);
    expect(read.entries.map((e) => e.dataFile.partition)).toEqual([partitionOf(rowA), partitionOf(rowB), partitionOf(rowC), partitionOf(rowD)]);
    expect(read.entries[0].dataFile.columnSizes).toEqual(entries[0].dataFile.columnSizes);
    expect(read.entries[0].dataFile.lowerBounds).toEqual(entries[0].dataFile.lowerBounds);
    if (formatVersion === 3) {
      // First Row ID Inheritance: ADDED files without one take the manifest's, in order.
      expect(read.entries.map((e) => e.dataFile.firstRowId)).toEqual([1000n, 1010n, 100n, 50n]);
    }
  });

  it('writes an unpartitioned manifest whose schema is the checked-in .avsc', async () => {
    const file = dataFile('s3://b/t/data/u.parquet', 3n, [], { specId: 0 });
    const { bytes, manifest } = writeManifest({ formatVersion, schema, spec: unpartitioned, content: 'data', snapshotId: 1n, path: 'm.avro', entries: [{ status: 'added', dataFile: file }] });
    const f = await decodeWithAvsc(bytes);
    const avsc = JSON.parse(readFileSync(new URL(`../../../schemas/manifest-entry-v${formatVersion}.avsc`, import.meta.url), 'utf8'));
    // Exact JSON text, key order included, so the reference files cannot drift from the writer.
    expect(JSON.stringify(f.schema)).toBe(JSON.stringify(avsc));
    expect(avroSchemaToJson(manifestEntryAvroSchema(formatVersion, { kind: 'struct', fields: [] }))).toBe(JSON.stringify(avsc));
    expect(fieldOf(fieldOf(f.schema, 'data_file').type, 'partition').type).toEqual({ type: 'record', name: 'r102', fields: [] });
    expect(plain(f.records[0]).data_file.partition).toEqual({});
    expect(manifest.partitions).toEqual([]);
    expect(f.meta['partition-spec']).toBe('[]');
  });

  it('writes delete manifests (equality deletes; position deletes in v2, deletion vectors in v3)', async () => {
    const eq: DataFile = { ...dataFile('s3://b/t/data/eq.parquet', 2n, partitionOf(rowA)), content: 'equality-deletes', equalityIds: [1] };
    let pos: DataFile;
    if (formatVersion === 2) {
      pos = { ...dataFile('s3://b/t/data/pos.parquet', 3n, partitionOf(rowA)), content: 'position-deletes', referencedDataFile: 's3://b/t/data/a.parquet' };
    } else {
      const puffin = writeDeletionVectorPuffin([{ referencedDataFile: 's3://b/t/data/a.parquet', positions: [0n, 5n, 9n] }]);
      pos = deletionVectorFile({ puffinPath: 's3://b/t/data/dv.puffin', fileSizeInBytes: puffin.fileSizeInBytes, vector: puffin.vectors[0], specId: 1, partition: partitionOf(rowA) });
    }
    const { bytes, manifest } = write({ formatVersion, content: 'deletes', entries: [{ status: 'added', dataFile: eq }, { status: 'added', dataFile: pos }] });
    const f = await decodeWithAvsc(bytes);
    expect(f.meta.content).toBe('deletes');
    const r = f.records.map(plain);
    expect(r[0].data_file).toMatchObject({ content: 2, equality_ids: [1], referenced_data_file: null });
    expect(r[1].data_file).toMatchObject({ content: 1, equality_ids: null, referenced_data_file: 's3://b/t/data/a.parquet' });
    if (formatVersion === 3) {
      expect(r[1].data_file).toMatchObject({ file_format: 'PUFFIN', record_count: 3n, content_offset: 4n, first_row_id: null });
      expect(r[1].data_file.content_size_in_bytes).toBe(pos.contentSizeInBytes);
    }
    expect(manifest).toMatchObject({ content: 'deletes', addedFilesCount: 2, addedRowsCount: 5n });
    expect(manifest.minSequenceNumber).toBeUndefined(); // assigned with the snapshot's sequence number
    const read = readManifest(bytes, { ...manifest, sequenceNumber: 4n, minSequenceNumber: 4n });
    expect(read.entries.map((e) => e.dataFile)).toEqual([
      { ...eq },
      { ...pos },
    ]);
  });
});

describe('writer rules', () => {
  const added = (f: DataFile): ManifestEntry => ({ status: 'added', dataFile: f });
  const a = dataFile('s3://b/t/data/a.parquet', 1n, partitionOf(rowA));

  it('refuses new position-delete files in v3, DVs in v2, and mixed content', () => {
    const pos: DataFile = { ...a, content: 'position-deletes', filePath: 's3://b/t/p.parquet' };
    expect(() => write({ formatVersion: 3, content: 'deletes', entries: [added(pos)] })).toThrow(/v3 forbids adding position-delete files/);
    // an EXISTING v2 position-delete file stays valid after an upgrade to v3
    expect(() => write({ formatVersion: 3, content: 'deletes', entries: [{ status: 'existing', snapshotId: 1n, sequenceNumber: 1n, fileSequenceNumber: 1n, dataFile: pos }] })).not.toThrow();
    const dv: DataFile = { ...pos, fileFormat: 'PUFFIN', referencedDataFile: a.filePath, contentOffset: 4n, contentSizeInBytes: 30n };
    expect(() => write({ formatVersion: 2, content: 'deletes', entries: [added(dv)] })).toThrow(/need format version 3/);
    expect(() => write({ formatVersion: 2, content: 'data', entries: [added(pos)] })).toThrow(/cannot go into a data manifest/);
    expect(() => write({ formatVersion: 2, content: 'deletes', entries: [added({ ...a, content: 'equality-deletes' })] })).toThrow(/needs equality_ids/);
  });

  it('requires explicit sequence numbers on EXISTING and DELETED entries, and none assigned on ADDED ones', () => {
    expect(() => write({ formatVersion: 2, entries: [{ status: 'existing', snapshotId: 1n, sequenceNumber: 1n, dataFile: a }] })).toThrow(/EXISTING entry must carry/);
    expect(() => write({ formatVersion: 2, entries: [{ status: 'deleted', sequenceNumber: 1n, dataFile: a }] })).toThrow(/DELETED entry must carry/);
    expect(() => write({ formatVersion: 2, entries: [{ status: 'added', fileSequenceNumber: 3n, dataFile: a }] })).toThrow(/assigned at commit/);
    expect(() => write({ formatVersion: 2, entries: [added(a), added(a)] })).toThrow(/live twice/);
    expect(() => write({ formatVersion: 2, entries: [added({ ...a, specId: 0 })] })).toThrow(/spec 0, the manifest is for spec 1/);
  });

  it('keeps an explicit data sequence number on an ADDED entry (data older than the commit)', async () => {
    const { bytes, manifest } = write({ formatVersion: 2, entries: [{ status: 'added', sequenceNumber: 2n, dataFile: a }] });
    const r = plain((await decodeWithAvsc(bytes)).records[0]);
    expect([r.sequence_number, r.file_sequence_number]).toEqual([2n, null]);
    expect(manifest.minSequenceNumber).toBe(2n);
    expect(readManifest(bytes, { ...manifest, sequenceNumber: 9n }).entries[0]).toMatchObject({ sequenceNumber: 2n, fileSequenceNumber: 9n });
  });

  it('never writes contains_null=false with null bounds: omits the summaries instead', () => {
    const fSchema = new Schema(0, [{ id: 1, name: 'x', required: false, type: Types.double }]);
    const fSpec: PartitionSpec = { specId: 0, fields: [{ sourceId: 1, fieldId: 1000, name: 'x', transform: { kind: 'identity' } }] };
    const file = (p: string, x: Value): DataFile => ({ content: 'data', filePath: p, fileFormat: 'PARQUET', specId: 0, partition: [x], recordCount: 1n, fileSizeInBytes: 1n });
    const w = (entries: ManifestEntry[]) => writeManifest({ formatVersion: 2, schema: fSchema, spec: fSpec, content: 'data', snapshotId: 1n, path: 'm', entries }).manifest.partitions;
    expect(w([])).toBeUndefined();
    expect(w([added(file('a', Number.NaN))])).toBeUndefined();
    expect(w([added(file('a', Number.NaN)), added(file('b', null))])).toEqual([{ containsNull: true, containsNan: true }]);
    expect(w([added(file('a', Number.NaN)), added(file('b', -0))])).toEqual([
      { containsNull: false, containsNan: true, lowerBound: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0x80), upperBound: Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0x80) },
    ]);
  });
});

describe('partition values of every primitive type', () => {
  const types = {
    b: Types.boolean,
    i: Types.int,
    l: Types.long,
    f: Types.float,
    d: Types.double,
    dec: Types.decimal(38, 10),
    dt: Types.date,
    t: Types.time,
    ts: Types.timestamp,
    tstz: Types.timestamptz,
    tsns: Types.timestampNs,
    tstzns: Types.timestamptzNs,
    s: Types.string,
    u: Types.uuid,
    fx: Types.fixed(3),
    bin: Types.binary,
    'odd-name': Types.int,
  };
  const names = Object.keys(types);
  const pSchema = new Schema(
    0,
    names.map((n, i) => ({ id: i + 1, name: n, required: false, type: types[n as keyof typeof types] })),
  );
  const pSpec: PartitionSpec = { specId: 3, fields: names.map((n, i) => ({ sourceId: i + 1, fieldId: 1000 + i, name: n, transform: { kind: 'identity' } })) };
  const values: Value[] = [
    true, -2147483648, -(2n ** 63n), 1.5, -0.25, '-1234567890123456789012345678.0123456789', 19782, 86_399_999_999n,
    -1n, 1_709_164_800_000_000n, 1_709_164_800_000_000_123n, 2n ** 62n, 'héllo', 'f79c3e09-677c-4bbd-a479-3f349cb785e7',
    Uint8Array.of(1, 2, 255), Uint8Array.of(), 7,
  ];

  it('stores each with its Appendix A Avro type and reads it back unchanged', async () => {
    const file: DataFile = { content: 'data', filePath: 'x.parquet', fileFormat: 'PARQUET', specId: 3, partition: values, recordCount: 1n, fileSizeInBytes: 9n };
    const { bytes, manifest } = writeManifest({ formatVersion: 3, schema: pSchema, spec: pSpec, content: 'data', snapshotId: 1n, path: 'm', entries: [{ status: 'added', dataFile: file }] });
    const f = await decodeWithAvsc(bytes);
    const partition = fieldOf(fieldOf(f.schema, 'data_file').type, 'partition').type;
    expect(partition.fields.map((x: any) => [x.name, unwrap(x.type)])).toEqual([
      ['b', 'boolean'],
      ['i', 'int'],
      ['l', 'long'],
      ['f', 'float'],
      ['d', 'double'],
      ['dec', { type: 'fixed', name: 'decimal_38_10', size: 16, logicalType: 'decimal', precision: 38, scale: 10 }],
      ['dt', { type: 'int', logicalType: 'date' }],
      ['t', { type: 'long', logicalType: 'time-micros' }],
      ['ts', { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': false }],
      ['tstz', { type: 'long', logicalType: 'timestamp-micros', 'adjust-to-utc': true }],
      ['tsns', { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': false }],
      ['tstzns', { type: 'long', logicalType: 'timestamp-nanos', 'adjust-to-utc': true }],
      ['s', 'string'],
      ['u', { type: 'fixed', name: 'uuid_fixed', size: 16, logicalType: 'uuid' }],
      ['fx', { type: 'fixed', name: 'fixed_3', size: 3 }],
      ['bin', 'bytes'],
      ['odd_x2Dname', 'int'],
    ]);
    expect(fieldOf(partition, 'odd_x2Dname')['iceberg-field-name']).toBe('odd-name');
    const p = plain(f.records[0]).data_file.partition;
    expect(p.dec).toEqual(twosComplement(-12345678901234567890123456780123456789n, 16));
    expect(p.u).toEqual(Uint8Array.from(Buffer.from('f79c3e09677c4bbda4793f349cb785e7', 'hex')));
    expect([p.l, p.t, p.tsns, p.tstzns]).toEqual([-(2n ** 63n), 86_399_999_999n, 1_709_164_800_000_000_123n, 2n ** 62n]);
    expect(readManifest(bytes, { ...manifest, sequenceNumber: 1n }).entries[0].dataFile.partition).toEqual(values);
    expect(manifest.partitions?.every((s) => s.containsNull || s.lowerBound !== undefined)).toBe(true);
  });
});

describe('manifest lists', () => {
  const SNAP = 7_000_000_000_000_000_007n;
  const built = write({ formatVersion: 3, entries: dataEntries(3) });
  const dataManifest = built.manifest;
  const eq: DataFile = { ...dataFile('s3://b/t/data/eq.parquet', 2n, partitionOf(rowA)), content: 'equality-deletes', equalityIds: [1, 2] };
  const deleteManifest = write({ formatVersion: 3, content: 'deletes', entries: [{ status: 'added', dataFile: eq }], path: 's3://b/t/metadata/d0.avro' }).manifest;
  const carried: ManifestFile = {
    path: 's3://b/t/metadata/old.avro', length: 1234n, specId: 0, content: 'data', sequenceNumber: 1n, minSequenceNumber: 1n, addedSnapshotId: 42n,
    addedFilesCount: 1, existingFilesCount: 0, deletedFilesCount: 0, addedRowsCount: 100n, existingRowsCount: 0n, deletedRowsCount: 0n,
    partitions: [], firstRowId: 0n,
  };

  it('v3: assigns sequence numbers and first_row_id like Java V3Writer.prepare, with Java key-value metadata', async () => {
    const mine = { ...dataManifest, addedSnapshotId: SNAP };
    const del = { ...deleteManifest, addedSnapshotId: SNAP };
    const rewritten: ManifestFile = { ...carried, path: 's3://b/t/metadata/rw.avro', sequenceNumber: undefined, minSequenceNumber: 1n, addedSnapshotId: SNAP, firstRowId: undefined, addedRowsCount: 0n, existingRowsCount: 30n, addedFilesCount: 0, existingFilesCount: 3 };
    const out = writeManifestList({ formatVersion: 3, snapshotId: SNAP, parentSnapshotId: 42n, sequenceNumber: 9n, firstRowId: 500n, manifests: [mine, del, carried, rewritten] });
    // first_row_id: data manifests without one, in order; each reserves added + existing rows.
    expect(out.manifests.map((m) => m.firstRowId)).toEqual([500n, undefined, 0n, 522n]);
    expect(out.addedRows).toBe(15n + 7n + 30n);
    expect(out.nextRowId).toBe(500n + 52n);
    expect(out.manifests.map((m) => [m.sequenceNumber, m.minSequenceNumber])).toEqual([[9n, 3n], [9n, 9n], [1n, 1n], [9n, 1n]]);

    const f = await decodeWithAvsc(out.bytes);
    expect(f.meta).toMatchObject({ 'snapshot-id': String(SNAP), 'parent-snapshot-id': '42', 'sequence-number': '9', 'first-row-id': '500', 'format-version': '3' });
    checkIcebergAvroSchema(f.schema);
    expect(f.schema.name).toBe('manifest_file');
    expect(f.schema.fields.map((x: any) => [x.name, x['field-id']])).toEqual([
      ['manifest_path', 500], ['manifest_length', 501], ['partition_spec_id', 502], ['content', 517], ['sequence_number', 515], ['min_sequence_number', 516],
      ['added_snapshot_id', 503], ['added_files_count', 504], ['existing_files_count', 505], ['deleted_files_count', 506], ['added_rows_count', 512],
      ['existing_rows_count', 513], ['deleted_rows_count', 514], ['partitions', 507], ['key_metadata', 519], ['first_row_id', 520],
    ]);
    const partitions = unwrap(fieldOf(f.schema, 'partitions').type);
    expect(partitions['element-id']).toBe(508);
    expect(partitions.items.name).toBe('r508');
    expect(partitions.items.fields.map((x: any) => [x.name, x['field-id']])).toEqual([['contains_null', 509], ['contains_nan', 518], ['lower_bound', 510], ['upper_bound', 511]]);
    expect(JSON.stringify(f.schema)).toBe(JSON.stringify(JSON.parse(readFileSync(new URL('../../../schemas/manifest-list-v3.avsc', import.meta.url), 'utf8'))));

    const r = f.records.map(plain);
    expect(r[0]).toMatchObject({
      manifest_path: 's3://b/t/metadata/m0.avro', manifest_length: dataManifest.length, partition_spec_id: 1, content: 0, sequence_number: 9n,
      min_sequence_number: 3n, added_snapshot_id: SNAP, added_files_count: 2, existing_files_count: 1, deleted_files_count: 1,
      added_rows_count: 15n, existing_rows_count: 7n, deleted_rows_count: 4n, key_metadata: null, first_row_id: 500n,
    });
    expect(r[0].partitions[0]).toEqual({ contains_null: true, contains_nan: false, lower_bound: utf8('alice'), upper_bound: utf8('carol') });
    expect(r[1]).toMatchObject({ content: 1, sequence_number: 9n, min_sequence_number: 9n, first_row_id: null });
    expect(r[2]).toMatchObject({ sequence_number: 1n, added_snapshot_id: 42n, first_row_id: 0n, partitions: [] });

    const back = readManifestList(out.bytes);
    expect(back.metadata).toEqual({ snapshotId: SNAP, parentSnapshotId: 42n, sequenceNumber: 9n, firstRowId: 500n, formatVersion: 3 });
    expect(back.manifests).toEqual(out.manifests);
  });

  it('v2: no first_row_id, parent-snapshot-id "null" for a first snapshot, schema = the .avsc', async () => {
    const v2 = write({ formatVersion: 2, entries: dataEntries(2) }).manifest;
    const out = writeManifestList({ formatVersion: 2, snapshotId: SNAPSHOT, sequenceNumber: 1n, manifests: [v2] });
    expect(out.addedRows).toBeUndefined();
    const f = await decodeWithAvsc(out.bytes);
    expect(f.meta).toMatchObject({ 'snapshot-id': String(SNAPSHOT), 'parent-snapshot-id': 'null', 'sequence-number': '1', 'format-version': '2' });
    expect(f.meta['first-row-id']).toBeUndefined();
    expect(JSON.stringify(f.schema)).toBe(avroSchemaToJson(manifestListAvroSchema(2)));
    expect(JSON.stringify(f.schema)).toBe(JSON.stringify(JSON.parse(readFileSync(new URL('../../../schemas/manifest-list-v2.avsc', import.meta.url), 'utf8'))));
    expect('first_row_id' in plain(f.records[0])).toBe(false);
    expect(readManifestList(out.bytes).metadata).toEqual({ snapshotId: SNAPSHOT, sequenceNumber: 1n, formatVersion: 2 });
  });

  it('refuses to assign a sequence number to a manifest another snapshot added', () => {
    expect(() => writeManifestList({ formatVersion: 2, snapshotId: 2n, sequenceNumber: 3n, manifests: [{ ...carried, sequenceNumber: undefined }] })).toThrow(/only manifests added by snapshot 2/);
    expect(() => writeManifestList({ formatVersion: 3, snapshotId: 2n, sequenceNumber: 3n, manifests: [] })).toThrow(/needs the snapshot first-row-id/);
  });
});

/**
 * Manifests written by floe, decoded by the independent `avsc` library: the writer schema (record
 * names, field ids, optional unions, logical types), the key-value metadata and the values; then read
 * back by floe's reader with inheritance applied.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaToJson as avroSchemaToJson } from '../../../src/iceberg/avro/schema.js';
import type { DataFile, ManifestEntry } from '../../../src/iceberg/spec/data-file.js';
import { manifestEntryAvroSchema } from '../../../src/iceberg/manifest/manifest-schemas.js';
import { readManifest, writeManifest } from '../../../src/iceberg/manifest/manifest.js';
import type { ManifestFile } from '../../../src/iceberg/manifest/manifest-file.js';
import type { PartitionSpec } from '../../../src/iceberg/spec/partition.js';
import { deletionVectorFile, writeDeletionVectorPuffin } from '../../../src/iceberg/puffin/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import type { Value } from '../../../src/model/values.js';
import { decodeWithAvsc, plain } from './avsc-decode.js';
import {
  utf8,
  le32,
  twosComplement,
  schema,
  unpartitioned,
  partitionOf,
  dataFile,
  SNAPSHOT,
  rowA,
  rowB,
  rowC,
  rowD,
  dataEntries,
  write,
  checkIcebergAvroSchema,
  fieldOf,
  unwrap,
} from './manifest-fixtures.js';

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

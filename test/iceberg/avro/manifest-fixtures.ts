/** Shared fixtures of the manifest tests: a partitioned table, its data files, and schema checks. */
import { expect } from 'vitest';
import type { DataFile, ManifestEntry } from '../../../src/iceberg/spec/data-file.js';
import { writeManifest, type WriteManifestOptions } from '../../../src/iceberg/manifest/manifest.js';
import type { PartitionSpec } from '../../../src/iceberg/spec/partition.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { applyTransform } from '../../../src/iceberg/spec/transforms.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { parseDate, type Value } from '../../../src/model/values.js';

export const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
export const le32 = (n: number): Uint8Array => {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setInt32(0, n, true);
  return b;
};
/** Two's complement big-endian of `v` in `bytes` bytes, computed independently of the writer. */
export const twosComplement = (v: bigint, bytes: number): Uint8Array => {
  const u = BigInt.asUintN(bytes * 8, v);
  return Uint8Array.from({ length: bytes }, (_, i) => Number((u >> BigInt(8 * (bytes - 1 - i))) & 0xffn));
};

export const schema = new Schema(
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
export const unpartitioned: PartitionSpec = { specId: 0, fields: [] };

/** The partition tuple of a source row (values by source field id) under `spec`. */
export function partitionOf(row: Record<number, Value>): Value[] {
  return spec.fields.map((f) => applyTransform(f.transform, schema.field(f.sourceId).type, row[f.sourceId] ?? null));
}

export function dataFile(path: string, recordCount: bigint, partition: Value[], extra: Partial<DataFile> = {}): DataFile {
  return { content: 'data', filePath: path, fileFormat: 'PARQUET', specId: spec.specId, partition, recordCount, fileSizeInBytes: 1000n + recordCount, ...extra };
}

export const SNAPSHOT = 5_000_000_000_000_000_001n; // above 2^53: must survive exactly
export const rowA = { 2: 'alice', 3: parseDate('2024-02-29'), 4: 34, 5: 'abcdef', 6: '123.45', 7: '-0.01' };
export const rowB = { 2: null, 3: parseDate('1969-12-31'), 4: -3, 5: 'xy', 6: '-99999999.99', 7: null };
export const rowC = { 2: 'bob', 3: 0, 4: 1, 5: 'zzzz', 6: '0.00', 7: '1.00' };
export const rowD = { 2: 'carol', 3: 10, 4: 2, 5: 'q', 6: '5.55', 7: '2.00' };

export function dataEntries(formatVersion: 2 | 3): ManifestEntry[] {
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

export function write(o: Partial<WriteManifestOptions> & Pick<WriteManifestOptions, 'formatVersion' | 'entries'>) {
  return writeManifest({ schema, spec, content: 'data', snapshotId: SNAPSHOT, path: 's3://b/t/metadata/m0.avro', ...o });
}

/** Checks the Iceberg rules for an Avro schema: ids everywhere, null-first optional unions with default null. */
export function checkIcebergAvroSchema(s: any, path = 'root'): void {
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

export const fieldOf = (record: any, name: string): any => record.fields.find((f: any) => f.name === name);
export const unwrap = (t: any): any => (Array.isArray(t) ? t[1] : t);

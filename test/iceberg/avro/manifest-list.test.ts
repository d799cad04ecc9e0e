/** Manifest lists written by floe (v2, v3), decoded by avsc and by floe's reader. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { schemaToJson as avroSchemaToJson } from '../../../src/iceberg/avro/schema.js';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { readManifestList, writeManifestList } from '../../../src/iceberg/manifest/manifest-list.js';
import type { ManifestFile } from '../../../src/iceberg/manifest/manifest-file.js';
import { manifestListAvroSchema } from '../../../src/iceberg/manifest/manifest-schemas.js';
import { decodeWithAvsc, plain } from './avsc-decode.js';
import { SNAPSHOT, checkIcebergAvroSchema, dataEntries, dataFile, fieldOf, partitionOf, rowA, unwrap, utf8, write } from './manifest-fixtures.js';

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

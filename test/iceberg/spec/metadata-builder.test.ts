import { describe, expect, it } from 'vitest';
import {
  ancestorsOf,
  applyUpdates,
  checkRequirements,
  currentSnapshot,
  newSnapshotId,
  newTableMetadata,
} from '../../../src/iceberg/metadata/metadata-builder.js';
import type { MetadataUpdate } from '../../../src/iceberg/metadata/metadata-updates.js';
import { parsePartitionSpec } from '../../../src/iceberg/spec/partition-spec-text.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { parseTableMetadata, writeTableMetadata } from '../../../src/iceberg/spec/table-metadata-json.js';
import type { Snapshot, TableMetadata } from '../../../src/iceberg/spec/table-metadata.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { isFloeError } from '../../../src/util/errors.js';

const schema = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'name', required: false, type: Types.string },
    { id: 3, name: 'created_at', required: false, type: Types.timestamptz },
  ],
  [1],
);

function fresh(formatVersion: 2 | 3 = 2, partition = ''): TableMetadata {
  return newTableMetadata({
    schema,
    spec: parsePartitionSpec(partition, schema),
    location: 'file:/tmp/wh/db/t/',
    formatVersion,
    uuid: '9c12d441-03fe-4693-9a96-a0705ddf69c1',
    nowMs: 1_000n,
  });
}

let nextId = 100n;
function snapshot(base: TableMetadata, extra: Partial<Snapshot> = {}): Snapshot {
  const id = nextId++;
  const s: Snapshot = {
    snapshotId: id,
    sequenceNumber: base.lastSequenceNumber + 1n,
    timestampMs: 2_000n + id,
    manifestList: `file:/tmp/wh/db/t/metadata/snap-${id}.avro`,
    summary: { operation: 'append' },
    schemaId: base.currentSchemaId,
    ...extra,
  };
  if (base.currentSnapshotId !== undefined && !('parentSnapshotId' in extra)) s.parentSnapshotId = base.currentSnapshotId;
  if (base.formatVersion >= 3 && !('firstRowId' in extra)) {
    s.firstRowId = base.nextRowId;
    s.addedRows = 10n;
  }
  return s;
}

function append(base: TableMetadata, extra: Partial<Snapshot> = {}, location = 'file:/tmp/wh/db/t/metadata/v1.metadata.json', nowMs = 5_000n): TableMetadata {
  const s = snapshot(base, extra);
  return applyUpdates(base, [{ action: 'add-snapshot', snapshot: s }, { action: 'set-snapshot-ref', refName: 'main', type: 'branch', snapshotId: s.snapshotId }], {
    metadataLocationOfBase: location,
    nowMs,
  });
}

describe('newTableMetadata', () => {
  it('builds a fresh v2 table as Java does', () => {
    const m = fresh(2);
    expect(m).toMatchObject({
      formatVersion: 2,
      location: 'file:/tmp/wh/db/t',
      lastSequenceNumber: 0n,
      lastColumnId: 3,
      currentSchemaId: 0,
      defaultSpecId: 0,
      lastPartitionId: 999,
      sortOrders: [{ orderId: 0, fields: [] }],
      defaultSortOrderId: 0,
      properties: { 'write.parquet.compression-codec': 'zstd' },
      refs: {},
      snapshots: [],
    });
    expect(m.nextRowId).toBe(undefined);
    const text = writeTableMetadata(m);
    expect(text).toContain('"current-snapshot-id": -1');
    expect(parseTableMetadata(text)).toEqual(m);
  });

  it('v3 starts next-row-id at 0 and writes current-snapshot-id null; partition ids start at 1000', () => {
    const m = fresh(3, 'day(created_at), bucket(16, id)');
    expect(m.nextRowId).toBe(0n);
    expect(m.lastPartitionId).toBe(1001);
    expect(writeTableMetadata(m)).toContain('"current-snapshot-id": null,\n  "next-row-id": 0,');
  });

  it('rejects defaults and v3 types in a v2 table, reserved properties and relative locations', () => {
    const withDefault = new Schema(0, [{ id: 1, name: 'f', required: false, type: Types.float, writeDefault: 1 }]);
    expect(() => newTableMetadata({ schema: withDefault, location: 'file:/t' })).toThrow(/field f: non-null write-default \(1\) is not supported until v3/);
    expect(newTableMetadata({ schema: withDefault, location: 'file:/t', formatVersion: 3 }).schemas[0].fields[0].writeDefault).toBe(1);
    expect(() => newTableMetadata({ schema, location: 'file:/t', properties: { 'format-version': '3' } })).toThrow(/reserved properties, found format-version/);
    expect(() => newTableMetadata({ schema, location: 'db/t' })).toThrow(/fully qualified URI/);
  });
});

describe('checkRequirements', () => {
  it('passes matching requirements and fails stale ones with expected vs found (commit-conflict)', () => {
    const m = append(fresh(2));
    const main = m.currentSnapshotId!;
    expect(() =>
      checkRequirements(m, [
        { type: 'assert-table-uuid', uuid: m.tableUuid },
        { type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: main },
        { type: 'assert-current-schema-id', currentSchemaId: 0 },
        { type: 'assert-last-assigned-field-id', lastAssignedFieldId: 3 },
        { type: 'assert-default-spec-id', defaultSpecId: 0 },
        { type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: 999 },
        { type: 'assert-default-sort-order-id', defaultSortOrderId: 0 },
      ]),
    ).not.toThrow();
    const fail = (r: Parameters<typeof checkRequirements>[1][number], base: TableMetadata | null = m) => {
      try {
        checkRequirements(base ?? undefined, [r]);
      } catch (e) {
        expect(isFloeError(e, 'commit-conflict')).toBe(true);
        expect((e as Error & { retryable: boolean }).retryable).toBe(true);
        return (e as Error).message;
      }
      throw new Error('expected a failure');
    };
    expect(fail({ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: 12n })).toBe(
      `iceberg.commit: requirement failed: branch main has changed: expected id 12, found ${main}; reload the table and retry`,
    );
    expect(fail({ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: null })).toMatch(/branch main was created concurrently: expected no ref, found id/);
    expect(fail({ type: 'assert-ref-snapshot-id', ref: 'dev', snapshotId: 5n })).toMatch(/branch or tag dev is missing: expected id 5, found no ref/);
    expect(fail({ type: 'assert-table-uuid', uuid: 'x' })).toMatch(/table uuid does not match: expected x, found 9c12d441/);
    expect(fail({ type: 'assert-create' })).toMatch(/table already exists/);
    expect(fail({ type: 'assert-table-uuid', uuid: 'x' }, null)).toMatch(/expected an existing table, found none/);
    expect(fail({ type: 'assert-current-schema-id', currentSchemaId: 4 })).toMatch(/current schema changed: expected id 4, found 0/);
    expect(() => checkRequirements(undefined, [{ type: 'assert-create' }])).not.toThrow();
  });
});

describe('applyUpdates', () => {
  it('appends a snapshot: sequence numbers, main ref, snapshot-log, metadata-log, last-updated-ms', () => {
    const m0 = fresh(2);
    const m1 = append(m0, {}, 'file:/tmp/wh/db/t/metadata/v1.metadata.json', 5_000n);
    expect(m1.lastSequenceNumber).toBe(1n);
    expect(m1.refs.main).toEqual({ snapshotId: m1.currentSnapshotId, type: 'branch' });
    expect(m1.snapshotLog).toEqual([{ timestampMs: m1.snapshots[0].timestampMs, snapshotId: m1.currentSnapshotId }]);
    expect(m1.metadataLog).toEqual([{ timestampMs: 1_000n, metadataFile: 'file:/tmp/wh/db/t/metadata/v1.metadata.json' }]);
    expect(m1.lastUpdatedMs).toBe(5_000n);
    const m2 = append(m1, {}, 'file:/tmp/wh/db/t/metadata/v2.metadata.json', 6_000n);
    expect(m2.snapshots[1].parentSnapshotId).toBe(m1.currentSnapshotId);
    expect(ancestorsOf(m2, m2.currentSnapshotId).map((s) => s.sequenceNumber)).toEqual([2n, 1n]);
    expect(currentSnapshot(m2)?.snapshotId).toBe(m2.currentSnapshotId);
    expect(m0.snapshots).toEqual([]); // base untouched
    expect(parseTableMetadata(writeTableMetadata(m2))).toEqual(m2);
  });

  it('rejects a stale sequence number as a retryable conflict', () => {
    const m1 = append(fresh(2));
    const stale = snapshot(m1, { sequenceNumber: 1n });
    try {
      applyUpdates(m1, [{ action: 'add-snapshot', snapshot: stale }]);
      throw new Error('expected a failure');
    } catch (e) {
      expect(isFloeError(e, 'commit-conflict')).toBe(true);
      expect((e as Error).message).toMatch(/with sequence number 1: expected a number above the last sequence number 1; reload the table and retry/);
    }
  });

  it('v3 row lineage: first-row-id must not be behind next-row-id, next-row-id advances by added-rows', () => {
    const m0 = fresh(3);
    const m1 = append(m0, { firstRowId: 0n, addedRows: 25n });
    expect(m1.nextRowId).toBe(25n);
    const m2 = append(m1, { firstRowId: 25n, addedRows: 5n });
    expect(m2.nextRowId).toBe(30n);
    expect(() => append(m2, { firstRowId: 29n, addedRows: 1n })).toThrow(/first-row-id 29 is behind the table's next-row-id 30/);
    expect(() => applyUpdates(m2, [{ action: 'add-snapshot', snapshot: { ...snapshot(m2), firstRowId: undefined } }])).toThrow(/first-row-id is required in format v3/);
    expect(parseTableMetadata(writeTableMetadata(m2))).toEqual(m2);
  });

  it('caps the metadata-log with write.metadata.previous-versions-max', () => {
    let m = applyUpdates(fresh(2), [{ action: 'set-properties', updates: { 'write.metadata.previous-versions-max': '2' } }], { metadataLocationOfBase: 'v1', nowMs: 2_000n });
    for (let i = 2; i <= 5; i++) m = append(m, {}, `v${i}`, BigInt(10_000 * i));
    expect(m.metadataLog.map((e) => e.metadataFile)).toEqual(['v4', 'v5']);
  });

  it('drops intermediate snapshots from the snapshot-log and cuts history at removed snapshots', () => {
    const m1 = append(fresh(2));
    const a = snapshot(m1);
    const b = { ...snapshot(m1), parentSnapshotId: a.snapshotId, sequenceNumber: a.sequenceNumber + 1n };
    const m2 = applyUpdates(m1, [
      { action: 'add-snapshot', snapshot: a },
      { action: 'set-snapshot-ref', refName: 'main', type: 'branch', snapshotId: a.snapshotId },
      { action: 'add-snapshot', snapshot: b },
      { action: 'set-snapshot-ref', refName: 'main', type: 'branch', snapshotId: b.snapshotId },
    ]);
    expect(m2.snapshotLog.map((e) => e.snapshotId)).toEqual([m1.currentSnapshotId, b.snapshotId]);
    const m3 = applyUpdates(m2, [{ action: 'remove-snapshots', snapshotIds: [m1.currentSnapshotId!] }]);
    expect(m3.snapshots.map((s) => s.snapshotId)).toEqual([a.snapshotId, b.snapshotId]);
    expect(m3.snapshotLog.map((e) => e.snapshotId)).toEqual([b.snapshotId]);
    // removing the current snapshot removes main and the current snapshot id
    const m4 = applyUpdates(m3, [{ action: 'remove-snapshots', snapshotIds: [b.snapshotId] }]);
    expect(m4.currentSnapshotId).toBe(undefined);
    expect(m4.refs.main).toBe(undefined);
  });

  it('rolls main back to an existing snapshot, logging the time of the change', () => {
    const m1 = append(fresh(2));
    const m2 = append(m1);
    const m3 = applyUpdates(m2, [{ action: 'set-snapshot-ref', refName: 'main', type: 'branch', snapshotId: m1.currentSnapshotId! }], { nowMs: 99_000n });
    expect(m3.currentSnapshotId).toBe(m1.currentSnapshotId);
    expect(m3.snapshotLog[m3.snapshotLog.length - 1]).toEqual({ timestampMs: 99_000n, snapshotId: m1.currentSnapshotId });
    expect(() => applyUpdates(m2, [{ action: 'set-snapshot-ref', refName: 'main', type: 'tag', snapshotId: m1.currentSnapshotId! }])).toThrow(/cannot set main to a tag/);
    expect(() => applyUpdates(m2, [{ action: 'set-snapshot-ref', refName: 'x', type: 'tag', snapshotId: 1n }])).toThrow(/cannot set x to unknown snapshot 1/);
  });

  it('evolves the schema: add-schema + set-current-schema -1, reusing an equal schema id', () => {
    const m0 = fresh(2);
    const evolved = new Schema(0, [...schema.fields, { id: 4, name: 'email', required: false, type: Types.string }], [1]);
    const updates: MetadataUpdate[] = [
      { action: 'add-schema', schema: evolved, lastColumnId: 4 },
      { action: 'set-current-schema', schemaId: -1 },
    ];
    const m1 = applyUpdates(m0, updates);
    expect(m1.schemas.map((s) => s.schemaId)).toEqual([0, 1]);
    expect(m1.currentSchemaId).toBe(1);
    expect(m1.lastColumnId).toBe(4);
    // the same change again is a no-op: same metadata object back
    expect(applyUpdates(m1, updates)).toBe(m1);
    expect(() => applyUpdates(m0, [{ action: 'set-current-schema', schemaId: -1 }])).toThrow(/no schema has been added/);
    expect(() => applyUpdates(m1, [{ action: 'add-schema', schema: evolved, lastColumnId: 2 }])).toThrow(/invalid last column id 2/);
    const v3only = new Schema(0, [...schema.fields, { id: 4, name: 'd', required: false, type: Types.int, initialDefault: 5, writeDefault: 5 }], [1]);
    expect(() => applyUpdates(m0, [{ action: 'add-schema', schema: v3only }])).toThrow(/non-null initial-default \(5\) is not supported until v3/);
  });

  it('adds partition specs with reused or fresh field ids and the last-added default', () => {
    const m0 = fresh(2, 'day(created_at)');
    const byBucket = { specId: -1, fields: [
      { sourceId: 3, fieldId: -1, name: 'created_at_day', transform: { kind: 'day' as const } },
      { sourceId: 1, fieldId: -1, name: 'id_bucket', transform: { kind: 'bucket' as const, n: 8 } },
    ] };
    const m1 = applyUpdates(m0, [{ action: 'add-spec', spec: byBucket }, { action: 'set-default-spec', specId: -1 }]);
    expect(m1.defaultSpecId).toBe(1);
    expect(m1.partitionSpecs[1].fields.map((f) => f.fieldId)).toEqual([1000, 1001]);
    expect(m1.lastPartitionId).toBe(1001);
    expect(() => applyUpdates(m0, [{ action: 'add-spec', spec: { specId: -1, fields: [{ sourceId: 2, fieldId: -1, name: 'n_hour', transform: { kind: 'hour' } }] } }])).toThrow(
      /invalid source type string for transform hour/,
    );
  });

  it('upgrades v2 → v3 (next-row-id 0) and refuses downgrades', () => {
    const m1 = append(fresh(2));
    const m2 = applyUpdates(m1, [{ action: 'upgrade-format-version', formatVersion: 3 }]);
    expect(m2.formatVersion).toBe(3);
    expect(m2.nextRowId).toBe(0n);
    expect(writeTableMetadata(m2)).toContain('"next-row-id": 0');
    expect(() => applyUpdates(m2, [{ action: 'upgrade-format-version', formatVersion: 2 }])).toThrow(/cannot downgrade a v3 table to v2/);
  });

  it('creates a table from updates alone (REST create transaction)', () => {
    const m = applyUpdates(undefined, [
      { action: 'assign-uuid', uuid: '11111111-2222-4333-8444-555555555555' },
      { action: 'upgrade-format-version', formatVersion: 3 },
      { action: 'add-schema', schema },
      { action: 'set-current-schema', schemaId: -1 },
      { action: 'add-spec', spec: { specId: -1, fields: [] } },
      { action: 'set-default-spec', specId: -1 },
      { action: 'add-sort-order', sortOrder: { orderId: -1, fields: [] } },
      { action: 'set-default-sort-order', sortOrderId: -1 },
      { action: 'set-location', location: 's3://b/wh/t/' },
      { action: 'set-properties', updates: { owner: 'floe' } },
    ], { nowMs: 7n });
    expect(m).toMatchObject({ formatVersion: 3, tableUuid: '11111111-2222-4333-8444-555555555555', location: 's3://b/wh/t', nextRowId: 0n, lastColumnId: 3, lastPartitionId: 999, defaultSortOrderId: 0 });
    expect(parseTableMetadata(writeTableMetadata(m))).toEqual(m);
    expect(() => applyUpdates(undefined, [{ action: 'add-schema', schema }])).toThrow(/table location is not set/);
    expect(() => applyUpdates(undefined, [{ action: 'add-schema', schema }, { action: 'set-location', location: 's3://b/t' }])).toThrow(/current schema -1 does not exist/);
  });

  it('refuses reserved properties and removing the current schema or default spec', () => {
    const m = fresh(2);
    expect(() => applyUpdates(m, [{ action: 'set-properties', updates: { 'format-version': '3' } }])).toThrow(/format-version is reserved/);
    expect(() => applyUpdates(m, [{ action: 'remove-schemas', schemaIds: [0] }])).toThrow(/cannot remove the current schema 0/);
    expect(() => applyUpdates(m, [{ action: 'remove-partition-specs', specIds: [0] }])).toThrow(/cannot remove the default partition spec 0/);
  });
});

describe('snapshot ids', () => {
  it('are positive 63-bit and distinct', () => {
    const ids = new Set<bigint>();
    for (let i = 0; i < 1000; i++) {
      const id = newSnapshotId();
      expect(id > 0n && id < 2n ** 63n).toBe(true);
      ids.add(id);
    }
    expect(ids.size).toBe(1000);
    // ids use the whole 63-bit range, well beyond 2^53
    expect([...ids].some((id) => id > 2n ** 53n)).toBe(true);
  });
});

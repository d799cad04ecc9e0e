import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  currentSchema,
  parseTableMetadata,
  tableMetadataFromJson,
  tableMetadataToJson,
  writeTableMetadata,
} from '../../../src/iceberg/spec/table-metadata-json.js';
import { parseJson, stringifyJson } from '../../../src/util/json.js';
import { applyUpdates } from '../../../src/iceberg/metadata/metadata-builder.js';
import { GOLDEN_DIR, goldenAvailable } from '../../support/golden.js';

const GOLDEN_ROOT = GOLDEN_DIR + '/data/persistent';

function metadataFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...metadataFiles(p));
    else if (name.endsWith('.metadata.json') && dir.endsWith('/metadata')) out.push(p);
  }
  return out.sort();
}

/** A v3 document with longs beyond 2^53, two snapshots with row lineage, a tag and both logs. */
const V3_TEXT = `{
  "format-version": 3,
  "table-uuid": "9c12d441-03fe-4693-9a96-a0705ddf69c1",
  "location": "s3://bucket/wh/db/t",
  "last-sequence-number": 2,
  "last-updated-ms": 1760000000500,
  "last-column-id": 3,
  "current-schema-id": 1,
  "schemas": [
    {
      "type": "struct",
      "schema-id": 0,
      "identifier-field-ids": [
        1
      ],
      "fields": [
        {
          "id": 1,
          "name": "id",
          "required": true,
          "type": "long"
        },
        {
          "id": 2,
          "name": "score",
          "required": false,
          "type": "double",
          "write-default": 1.0
        }
      ]
    },
    {
      "type": "struct",
      "schema-id": 1,
      "identifier-field-ids": [
        1
      ],
      "fields": [
        {
          "id": 1,
          "name": "id",
          "required": true,
          "type": "long"
        },
        {
          "id": 2,
          "name": "score",
          "required": false,
          "type": "double",
          "write-default": 1.0
        },
        {
          "id": 3,
          "name": "at",
          "required": false,
          "type": "timestamptz_ns",
          "initial-default": "2017-11-16T22:31:08.123456789+00:00",
          "write-default": "2017-11-16T22:31:08.123456789+00:00"
        }
      ]
    }
  ],
  "default-spec-id": 1,
  "partition-specs": [
    {
      "spec-id": 0,
      "fields": []
    },
    {
      "spec-id": 1,
      "fields": [
        {
          "name": "id_bucket",
          "transform": "bucket[16]",
          "source-id": 1,
          "field-id": 1000
        }
      ]
    }
  ],
  "last-partition-id": 1000,
  "default-sort-order-id": 0,
  "sort-orders": [
    {
      "order-id": 0,
      "fields": []
    }
  ],
  "properties": {
    "write.format.default": "parquet"
  },
  "current-snapshot-id": 9223372036854775807,
  "next-row-id": 9007199254740993,
  "refs": {
    "main": {
      "snapshot-id": 9223372036854775807,
      "type": "branch"
    },
    "v1": {
      "snapshot-id": 9007199254740993,
      "type": "tag",
      "max-ref-age-ms": 9223372036854775000
    }
  },
  "snapshots": [
    {
      "sequence-number": 1,
      "snapshot-id": 9007199254740993,
      "timestamp-ms": 1760000000000,
      "summary": {
        "operation": "append",
        "added-records": "10"
      },
      "manifest-list": "s3://bucket/wh/db/t/metadata/snap-1.avro",
      "schema-id": 0,
      "first-row-id": 0,
      "added-rows": 10
    },
    {
      "sequence-number": 2,
      "snapshot-id": 9223372036854775807,
      "parent-snapshot-id": 9007199254740993,
      "timestamp-ms": 1760000000500,
      "summary": {
        "operation": "overwrite"
      },
      "manifest-list": "s3://bucket/wh/db/t/metadata/snap-2.avro",
      "schema-id": 1,
      "first-row-id": 10,
      "added-rows": 9007199254740983
    }
  ],
  "statistics": [
    {
      "snapshot-id": 9223372036854775807,
      "statistics-path": "s3://bucket/wh/db/t/metadata/stats.puffin",
      "file-size-in-bytes": 413,
      "file-footer-size-in-bytes": 42,
      "blob-metadata": []
    }
  ],
  "partition-statistics": [],
  "snapshot-log": [
    {
      "timestamp-ms": 1760000000000,
      "snapshot-id": 9007199254740993
    },
    {
      "timestamp-ms": 1760000000500,
      "snapshot-id": 9223372036854775807
    }
  ],
  "metadata-log": [
    {
      "timestamp-ms": 1759999999000,
      "metadata-file": "s3://bucket/wh/db/t/metadata/00000-a.metadata.json"
    }
  ]
}`;

describe('table metadata JSON', () => {
  const files = goldenAvailable ? metadataFiles(GOLDEN_ROOT) : [];

  it.skipIf(!goldenAvailable)('finds the golden metadata files', () => {
    expect(files.length).toBeGreaterThanOrEqual(17);
  });

  for (const file of files) {
    it(`parses golden ${file.slice(GOLDEN_ROOT.length + 1)} and writes it back to the same JSON`, () => {
      const text = readFileSync(file, 'utf8');
      const m = parseTableMetadata(text);
      const original = parseJson(text);
      expect(m.formatVersion).toBe(original['format-version']);
      expect(m.snapshots.length).toBe((original.snapshots ?? []).length);
      const written = parseJson(writeTableMetadata(m));
      // Java-written keys all survive with the same values; empty identifier-field-ids are omitted (as Java)
      for (const s of original.schemas) if (Array.isArray(s['identifier-field-ids']) && s['identifier-field-ids'].length === 0) delete s['identifier-field-ids'];
      for (const key of Object.keys(original)) expect([key, written[key]]).toEqual([key, original[key]]);
      expect(parseTableMetadata(writeTableMetadata(m))).toEqual(m);
      // each snapshot's text is kept for the next write: the same text as written whole, every time
      const whole = stringifyJson(tableMetadataToJson(m), 2);
      expect(writeTableMetadata(m)).toBe(whole);
      expect(writeTableMetadata(m)).toBe(whole);
      if (m.formatVersion === 2) {
        const upgraded = applyUpdates(m, [{ action: 'upgrade-format-version', formatVersion: 3 }]);
        expect(writeTableMetadata(upgraded), 'the same snapshots written for v3').toBe(stringifyJson(tableMetadataToJson(upgraded), 2));
      }
    });
  }

  it.skipIf(!goldenAvailable)('reads the golden table at its current version exactly (BigInt ids, snapshot lineage, refs)', () => {
    const m = parseTableMetadata(readFileSync(`${GOLDEN_ROOT}/equality_deletes/warehouse/mydb/mytable_partitioned/metadata/v6.metadata.json`, 'utf8'));
    expect(m.currentSnapshotId).toBe(3138177759849079112n);
    expect(m.refs.main).toEqual({ snapshotId: 3138177759849079112n, type: 'branch' });
    expect(m.snapshots[4]).toMatchObject({ sequenceNumber: 5n, parentSnapshotId: 883882341917253211n, summary: { operation: 'delete', 'total-equality-deletes': '3' } });
    expect(m.partitionSpecs[0].fields[0]).toEqual({ sourceId: 2, fieldId: 1000, name: 'name', transform: { kind: 'identity' } });
    expect(m.metadataLog.length).toBe(5);
    expect(m.lastUpdatedMs).toBe(1760585154430n);
    expect(currentSchema(m).fields.map((f) => f.name)).toEqual(['id', 'name', 'bir']);
  });

  it('v3: write → parse → write is byte-stable and keeps longs beyond 2^53 exact', () => {
    const m = parseTableMetadata(V3_TEXT);
    expect(m.currentSnapshotId).toBe(9223372036854775807n);
    expect(m.nextRowId).toBe(9007199254740993n);
    expect(m.snapshots[1].addedRows).toBe(9007199254740983n);
    expect(m.refs.v1.maxRefAgeMs).toBe(9223372036854775000n);
    expect(currentSchema(m).findFieldByName('at')!.initialDefault).toBe(1510871468123456789n);
    expect(writeTableMetadata(m)).toBe(V3_TEXT);
    expect(writeTableMetadata(parseTableMetadata(writeTableMetadata(m)))).toBe(V3_TEXT);
  });

  it('writes current-snapshot-id -1 in v2 and null in v3 when there is no snapshot, and always writes the key', () => {
    const v3 = parseTableMetadata(V3_TEXT);
    const empty = { ...v3, currentSnapshotId: undefined, refs: {}, snapshots: [], snapshotLog: [], statistics: [] };
    expect(tableMetadataToJson(empty)['current-snapshot-id']).toBe(null);
    expect(writeTableMetadata(empty)).toContain('"current-snapshot-id": null,\n  "next-row-id": 9007199254740993,');
    const v2 = { ...empty, formatVersion: 2 as const, nextRowId: undefined, schemas: empty.schemas.slice(0, 1), currentSchemaId: 0, lastColumnId: 2 };
    const v2Json = tableMetadataToJson({ ...v2, schemas: v2.schemas });
    expect(v2Json['current-snapshot-id']).toBe(-1);
    expect('next-row-id' in v2Json && v2Json['next-row-id'] !== undefined).toBe(false);
    const back = parseTableMetadata(stringifyJson(v2Json));
    expect(back.currentSnapshotId).toBe(undefined);
    expect(back.refs).toEqual({});
  });

  it('reads v1 metadata (schema / partition-spec only, no refs, no sequence numbers)', () => {
    const v1 = {
      'format-version': 1,
      location: 's3://b/t/',
      'last-updated-ms': 1000,
      'last-column-id': 2,
      schema: { type: 'struct', fields: [{ id: 1, name: 'a', required: true, type: 'int' }, { id: 2, name: 'b', required: false, type: 'string' }] },
      'partition-spec': [{ name: 'b', transform: 'identity', 'source-id': 2 }],
      properties: {},
      'current-snapshot-id': 5,
      snapshots: [{ 'snapshot-id': 5, 'timestamp-ms': 900, summary: { operation: 'append' }, 'manifest-list': 's3://b/t/metadata/snap-5.avro' }],
    };
    const m = tableMetadataFromJson(v1);
    expect(m.location).toBe('s3://b/t');
    expect(m.lastSequenceNumber).toBe(0n);
    expect(m.snapshots[0].sequenceNumber).toBe(0n);
    expect(m.partitionSpecs[0].fields[0].fieldId).toBe(1000);
    expect(m.lastPartitionId).toBe(1000);
    expect(m.refs.main).toEqual({ snapshotId: 5n, type: 'branch' });
    expect(m.sortOrders).toEqual([{ orderId: 0, fields: [] }]);
    expect(() => writeTableMetadata(m)).toThrow(/writing format v1 metadata is not supported/);
  });
});

describe('table metadata validation (Java TableMetadata constructor checks)', () => {
  const base = () => parseJson(V3_TEXT);
  const expectInvalid = (mutate: (o: any) => void, message: string | RegExp) => {
    const o = base();
    mutate(o);
    expect(() => tableMetadataFromJson(o)).toThrow(message);
  };

  it('rejects what Java rejects, saying what was expected and what was found', () => {
    expectInvalid((o) => (o['current-schema-id'] = 7), 'iceberg.table-metadata: cannot find schema with current-schema-id 7; schema ids present: 0, 1');
    expectInvalid((o) => (o['default-spec-id'] = 4), 'cannot find partition spec with default-spec-id 4; spec ids present: 0, 1');
    expectInvalid((o) => (o['sort-orders'] = []), /expected at least one sort order/);
    expectInvalid((o) => (o['last-sequence-number'] = 1), 'snapshot 9223372036854775807 has sequence-number 2, greater than last-sequence-number 1; expected <= 1');
    expectInvalid((o) => (o.refs.main['snapshot-id'] = 9007199254740993n), /current-snapshot-id 9223372036854775807 does not match the main branch \(found 9007199254740993\)/);
    expectInvalid((o) => (o.refs.v1['snapshot-id'] = 1), 'ref v1 points at snapshot 1, which is not in snapshots (found 9007199254740993, 9223372036854775807)');
    expectInvalid((o) => {
      o['current-snapshot-id'] = null;
    }, /refs.main points at snapshot 9223372036854775807 but there is no current-snapshot-id/);
    expectInvalid((o) => (o['snapshot-log'][0]['timestamp-ms'] = 1760000100000), /snapshot-log is not sorted: entry 1 has timestamp-ms 1760000000500, before entry 0 at 1760000100000/);
    expectInvalid((o) => (o['last-updated-ms'] = 1759000000000), /last-updated-ms 1759000000000 is before the last snapshot-log entry at 1760000000500/);
    expectInvalid((o) => delete o['next-row-id'], 'next-row-id is required in format v3, found nothing');
    expectInvalid((o) => (o.snapshots[1]['snapshot-id'] = 9007199254740993n), /snapshot id 9007199254740993 is used twice/);
    expectInvalid((o) => delete o.snapshots[0]['added-rows'], /has first-row-id 0 but no added-rows/);
    expectInvalid((o) => (o.schemas[1]['identifier-field-ids'] = [2]), /identifier field 2 \(score\) is optional/);
    expectInvalid((o) => (o['format-version'] = 4), /cannot read format-version 4/);
    expectInvalid((o) => (o['table-uuid'] = null), 'table-uuid is required in format v3, found none');
    expectInvalid((o) => (o.properties.x = 1), 'properties.x: expected a JSON string, found 1');
  });

  it('reads but refuses to write metadata whose last-column-id / last-partition-id lag behind the ids in use', () => {
    const o = base();
    o['last-column-id'] = 2;
    const m = tableMetadataFromJson(o);
    expect(() => writeTableMetadata(m)).toThrow(/last-column-id 2 is below the highest field id 3 used by the schemas; expected last-column-id >= 3/);
    const p = base();
    p['last-partition-id'] = 999;
    expect(() => writeTableMetadata(tableMetadataFromJson(p))).toThrow(/last-partition-id 999 is below the highest partition field id 1000/);
  });
});

import { describe, expect, it } from 'vitest';
import {
  commitTableRequestFromJson,
  commitTableRequestToJson,
  metadataUpdateFromJson,
  metadataUpdateToJson,
  tableRequirementFromJson,
  tableRequirementToJson,
} from '../../../src/iceberg/metadata/metadata-updates-json.js';
import type { MetadataUpdate, TableRequirement } from '../../../src/iceberg/metadata/metadata-updates.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { parseJson, stringifyJson } from '../../../src/util/json.js';

describe('REST commit JSON (rest-catalog-open-api.yaml)', () => {
  it('writes the checklist minimal append commit exactly and reads it back', () => {
    const text =
      '{"requirements":[{"type":"assert-table-uuid","uuid":"9c12d441-03fe-4693-9a96-a0705ddf69c1"},{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":123}],' +
      '"updates":[{"action":"add-snapshot","snapshot":{"sequence-number":8,"snapshot-id":9223372036854775807,"parent-snapshot-id":123,' +
      '"timestamp-ms":1760000000000,"summary":{"operation":"append","added-data-files":"1","added-records":"10"},"manifest-list":"s3://b/t/metadata/snap-456.avro",' +
      '"schema-id":0,"first-row-id":1000,"added-rows":10}},{"action":"set-snapshot-ref","ref-name":"main","snapshot-id":9223372036854775807,"type":"branch"}]}';
    const body = commitTableRequestFromJson(parseJson(text));
    expect(body.requirements[1]).toEqual({ type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: 123n });
    expect(body.updates[0]).toMatchObject({ action: 'add-snapshot', snapshot: { snapshotId: 9223372036854775807n, firstRowId: 1000n, addedRows: 10n } });
    expect(body.updates[1]).toEqual({ action: 'set-snapshot-ref', refName: 'main', type: 'branch', snapshotId: 9223372036854775807n });
    expect(stringifyJson(commitTableRequestToJson(body))).toBe(text);
  });

  it('writes assert-ref-snapshot-id with an explicit null when the ref must not exist', () => {
    const r: TableRequirement = { type: 'assert-ref-snapshot-id', ref: 'main', snapshotId: null };
    expect(stringifyJson(tableRequirementToJson(r))).toBe('{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}');
    expect(tableRequirementFromJson(parseJson('{"type":"assert-ref-snapshot-id","ref":"main","snapshot-id":null}'))).toEqual(r);
  });

  it('round-trips every requirement', () => {
    const all: TableRequirement[] = [
      { type: 'assert-create' },
      { type: 'assert-table-uuid', uuid: 'u' },
      { type: 'assert-last-assigned-field-id', lastAssignedFieldId: 7 },
      { type: 'assert-current-schema-id', currentSchemaId: 1 },
      { type: 'assert-last-assigned-partition-id', lastAssignedPartitionId: 1000 },
      { type: 'assert-default-spec-id', defaultSpecId: 0 },
      { type: 'assert-default-sort-order-id', defaultSortOrderId: 0 },
    ];
    for (const r of all) expect(tableRequirementFromJson(parseJson(stringifyJson(tableRequirementToJson(r))))).toEqual(r);
    expect(stringifyJson(tableRequirementToJson(all[2]))).toBe('{"type":"assert-last-assigned-field-id","last-assigned-field-id":7}');
  });

  it('round-trips every update with the yaml field names', () => {
    const schema = new Schema(1, [{ id: 1, name: 'id', required: true, type: Types.long }], [1]);
    const all: [MetadataUpdate, string][] = [
      [{ action: 'assign-uuid', uuid: 'u' }, '{"action":"assign-uuid","uuid":"u"}'],
      [{ action: 'upgrade-format-version', formatVersion: 3 }, '{"action":"upgrade-format-version","format-version":3}'],
      [
        { action: 'add-schema', schema, lastColumnId: 1 },
        '{"action":"add-schema","schema":{"type":"struct","schema-id":1,"identifier-field-ids":[1],"fields":[{"id":1,"name":"id","required":true,"type":"long"}]},"last-column-id":1}',
      ],
      [{ action: 'set-current-schema', schemaId: -1 }, '{"action":"set-current-schema","schema-id":-1}'],
      [
        { action: 'add-spec', spec: { specId: 1, fields: [{ sourceId: 1, fieldId: 1000, name: 'id_bucket', transform: { kind: 'bucket', n: 8 } }] } },
        '{"action":"add-spec","spec":{"spec-id":1,"fields":[{"name":"id_bucket","transform":"bucket[8]","source-id":1,"field-id":1000}]}}',
      ],
      [{ action: 'set-default-spec', specId: 1 }, '{"action":"set-default-spec","spec-id":1}'],
      [{ action: 'add-sort-order', sortOrder: { orderId: 1, fields: [{ sourceId: 1, transform: 'identity', direction: 'asc', nullOrder: 'nulls-first' }] } }, '{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"transform":"identity","source-id":1,"direction":"asc","null-order":"nulls-first"}]}}'],
      [{ action: 'set-default-sort-order', sortOrderId: 1 }, '{"action":"set-default-sort-order","sort-order-id":1}'],
      [
        { action: 'set-snapshot-ref', refName: 'v1', type: 'tag', snapshotId: 5n, maxRefAgeMs: 9223372036854775807n },
        '{"action":"set-snapshot-ref","ref-name":"v1","snapshot-id":5,"type":"tag","max-ref-age-ms":9223372036854775807}',
      ],
      [{ action: 'remove-snapshots', snapshotIds: [9223372036854775807n, 2n] }, '{"action":"remove-snapshots","snapshot-ids":[9223372036854775807,2]}'],
      [{ action: 'remove-snapshot-ref', refName: 'v1' }, '{"action":"remove-snapshot-ref","ref-name":"v1"}'],
      [{ action: 'set-location', location: 's3://b/t' }, '{"action":"set-location","location":"s3://b/t"}'],
      [{ action: 'set-properties', updates: { a: '1' } }, '{"action":"set-properties","updates":{"a":"1"}}'],
      [{ action: 'remove-properties', removals: ['a'] }, '{"action":"remove-properties","removals":["a"]}'],
      [{ action: 'remove-statistics', snapshotId: 5n }, '{"action":"remove-statistics","snapshot-id":5}'],
      [{ action: 'remove-partition-specs', specIds: [0] }, '{"action":"remove-partition-specs","spec-ids":[0]}'],
      [{ action: 'remove-schemas', schemaIds: [0] }, '{"action":"remove-schemas","schema-ids":[0]}'],
    ];
    for (const [u, text] of all) {
      expect(stringifyJson(metadataUpdateToJson(u))).toBe(text);
      expect(stringifyJson(metadataUpdateToJson(metadataUpdateFromJson(parseJson(text))))).toBe(text);
    }
  });

  it('reads an add-spec without ids as unassigned (-1) and the pre-1.0 property names', () => {
    const u = metadataUpdateFromJson(parseJson('{"action":"add-spec","spec":{"fields":[{"name":"d","transform":"day","source-id":3}]}}'));
    expect(u).toEqual({ action: 'add-spec', spec: { specId: -1, fields: [{ sourceId: 3, fieldId: -1, name: 'd', transform: { kind: 'day' } }] } });
    expect(metadataUpdateFromJson(parseJson('{"action":"set-properties","updated":{"k":"v"}}'))).toEqual({ action: 'set-properties', updates: { k: 'v' } });
  });

  it('refuses unknown actions and requirement types instead of dropping them', () => {
    expect(() => metadataUpdateFromJson(parseJson('{"action":"add-encryption-key","encryption-key":{}}'))).toThrow('iceberg.rest-json: table update action "add-encryption-key" is not supported by floe');
    expect(() => tableRequirementFromJson(parseJson('{"type":"assert-view-uuid","uuid":"x"}'))).toThrow(/table requirement type "assert-view-uuid" is not supported/);
    expect(() => metadataUpdateFromJson(parseJson('{"action":"set-current-schema"}'))).toThrow(/update set-current-schema schema-id: expected an integer \(int\), found nothing/);
  });
});

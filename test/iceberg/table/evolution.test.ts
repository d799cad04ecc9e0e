/**
 * Schema evolution commits (add column with initial/write default on v3, rename keeping the id, drop,
 * widen int→long / float→double / decimal precision), then scans: files written before the change
 * read correctly under the new schema (defaults fill the added columns, renamed columns keep their
 * values, widened values come out in the new type), an equality delete keyed on a column dropped
 * later still applies, and time travel reads a snapshot with the schema it was written with. A schema
 * change committed in one metadata change with a snapshot; a table without rows given another
 * definition (ids kept by name, a new default spec), and refused once it is no longer empty.
 */
import { describe, expect, it } from 'vitest';
import { readTableRows, rowToJson } from '../../../src/iceberg/scan/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { appendFiles, commitRowDelta, createTable, evolveTableSchema, replaceTableDefinition, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { parsePartitionSpec } from '../../../src/iceberg/spec/partition-spec-text.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import type { Row } from '../../../src/model/values.js';
import { stringifyJson } from '../../../src/util/json.js';
import { committedTable, useTempCatalog, writeDataFile, writeEqualityDeletes } from './table-fixtures.js';

const env = useTempCatalog('floe-evolution-');

function json(t: CatalogTable, rows: Row[], schemaId = t.metadata.currentSchemaId): string[] {
  const schema = t.metadata.schemas.find((s) => s.schemaId === schemaId)!;
  return rows.map((r) => stringifyJson(rowToJson(schema, r))).sort();
}

const original = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'name', required: false, type: Types.string },
    { id: 3, name: 'amount', required: false, type: Types.int },
    { id: 4, name: 'ratio', required: false, type: Types.float },
    { id: 5, name: 'price', required: false, type: Types.decimal(5, 2) },
    { id: 6, name: 'legacy', required: false, type: Types.string },
  ],
  [1],
);

describe('schema evolution commits', () => {
  it('v3: add with defaults, rename, drop, widen; old files read under the new schema', async () => {
    let t = await createTable(env.catalog, { namespace: ['db'], name: 'evolve_v3' }, { schema: original, formatVersion: 3 });
    const before = await writeDataFile(t, [
      [1n, 'one', 10, 0.5, '1.25', 'x'],
      [2n, 'two', null, 1.5, '-3.10', 'gone'],
      [3n, 'three', 30, null, null, 'y'],
    ]);
    t = committedTable(await appendFiles(t, [before]));
    const firstSnapshot = t.metadata.currentSnapshotId!;
    // A delete keyed on `legacy`, the column about to be dropped: it must keep applying.
    t = committedTable(await commitRowDelta(t, { deleteFiles: [await writeEqualityDeletes(t, [6], [['gone']])] }));

    t = await evolveTableSchema(t, [
      { kind: 'add-column', name: 'region', type: Types.string, defaultValue: 'kr' },
      { kind: 'add-column', name: 'qty', type: Types.int, required: true, defaultValue: 7 },
      { kind: 'rename-column', name: 'name', newName: 'title' },
      { kind: 'drop-column', name: 'legacy' },
      { kind: 'update-column-type', name: 'amount', type: Types.long },
      { kind: 'update-column-type', name: 'ratio', type: Types.double },
      { kind: 'update-column-type', name: 'price', type: Types.decimal(9, 2) },
    ]);
    const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
    expect(t.metadata.currentSchemaId).toBe(1);
    expect(schema.fields.map((f) => `${f.id}:${f.name}`)).toEqual(['1:id', '2:title', '3:amount', '4:ratio', '5:price', '7:region', '8:qty']);

    t = committedTable(await appendFiles(t, [await writeDataFile(t, [[4n, 'four', 5_000_000_000n, 0.1, '1234567.89', 'us', 1]])]));
    const rows = await readTableRows(t);
    expect(json(t, rows)).toEqual(
      [
        { id: 1, title: 'one', amount: 10, ratio: 0.5, price: '1.25', region: 'kr', qty: 7 },
        { id: 3, title: 'three', amount: 30, ratio: null, price: null, region: 'kr', qty: 7 },
        { id: 4, title: 'four', amount: 5000000000, ratio: 0.1, price: '1234567.89', region: 'us', qty: 1 },
      ]
        .map((o) => stringifyJson(o))
        .sort(),
    );
    // Widened values come out in the new types (long as bigint, double as the float's exact value).
    const one = rows.find((r) => r[0] === 1n)!;
    expect(one[2]).toBe(10n);
    expect(one[3]).toBe(0.5);

    // Time travel: the first snapshot with the schema it was written with (old names, `legacy` there).
    const old = await readTableRows(t, { snapshotId: firstSnapshot });
    expect(json(t, old, 0)).toEqual(
      [
        { id: 1, name: 'one', amount: 10, ratio: 0.5, price: '1.25', legacy: 'x' },
        { id: 2, name: 'two', amount: null, ratio: 1.5, price: '-3.10', legacy: 'gone' },
        { id: 3, name: 'three', amount: 30, ratio: null, price: null, legacy: 'y' },
      ]
        .map((o) => stringifyJson(o))
        .sort(),
    );
  });

  it('v2: an optional column added without default reads as null in old files; a v2 default is refused', async () => {
    let t = await createTable(env.catalog, { namespace: ['db'], name: 'evolve_v2' }, { schema: original, formatVersion: 2 });
    t = committedTable(await appendFiles(t, [await writeDataFile(t, [[1n, 'one', 1, 1.5, '0.01', 'a']])]));
    await expect(evolveTableSchema(t, [{ kind: 'add-column', name: 'region', type: Types.string, defaultValue: 'kr' }])).rejects.toThrow(/defaults need format v3/);
    t = await evolveTableSchema(t, [
      { kind: 'add-column', name: 'region', type: Types.string },
      { kind: 'rename-column', name: 'legacy', newName: 'old_code' },
    ]);
    expect(json(t, await readTableRows(t))).toEqual([stringifyJson({ id: 1, name: 'one', amount: 1, ratio: 1.5, price: '0.01', old_code: 'a', region: null })]);
    // Nothing to change: no commit, no new metadata version.
    const same = await evolveTableSchema(t, [{ kind: 'make-optional', name: 'region' }]);
    expect(same.metadataLocation).toBe(t.metadataLocation);
  });

  it('a schema change in the same commit as a snapshot: the snapshot carries the new schema id and the properties', async () => {
    let t = await createTable(env.catalog, { namespace: ['db'], name: 'evolve_with_snapshot' }, { schema: original, formatVersion: 3 });
    t = committedTable(await appendFiles(t, [await writeDataFile(t, [[1n, 'one', 1, 1.5, '0.01', 'a']])]));
    const versions = t.metadata.metadataLog.length;
    t = committedTable(await commitRowDelta(t, {}, { summary: { stamp: 's1' }, properties: () => ({ recorded: 'after' }), schemaChanges: [{ kind: 'add-column', name: 'n', type: Types.int, defaultValue: 7 }] }));
    expect(t.metadata.metadataLog.length).toBe(versions + 1); // one metadata change
    const snapshot = t.metadata.snapshots.at(-1)!;
    expect(snapshot.summary.stamp).toBe('s1');
    expect(snapshot.schemaId).toBe(t.metadata.currentSchemaId);
    expect(t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!.fields.map((f) => f.name)).toEqual(['id', 'name', 'amount', 'ratio', 'price', 'legacy', 'n']);
    expect(t.metadata.properties.recorded).toBe('after');
    expect(json(t, await readTableRows(t))).toEqual([stringifyJson({ id: 1, name: 'one', amount: 1, ratio: 1.5, price: '0.01', legacy: 'a', n: 7 })]);
    // changes the schema already shows commit only the snapshot
    const schemas = t.metadata.schemas.length;
    t = committedTable(await commitRowDelta(t, {}, { schemaChanges: [{ kind: 'add-column', name: 'm', type: Types.int }, { kind: 'drop-column', name: 'm' }] }));
    expect(t.metadata.schemas.length).toBe(schemas);
  });

  it('a table without rows takes another definition: ids of same-named fields kept, new ones fresh, the new spec the default', async () => {
    let t = await createTable(env.catalog, { namespace: ['db'], name: 'redefined' }, { schema: original, formatVersion: 3, partitionSpec: parsePartitionSpec(['bucket(4, id)'], original) });
    const wanted = new Schema(
      0,
      [
        { id: 1, name: 'id', required: true, type: Types.long },
        { id: 2, name: 'region', required: true, type: Types.string, writeDefault: 'kr' },
        { id: 3, name: 'name', required: false, type: Types.string },
        { id: 4, name: 'price', required: false, type: Types.decimal(9, 2) },
      ],
      [1],
    );
    const empty = (m: CatalogTable['metadata']) => m.currentSnapshotId === undefined;
    t = await replaceTableDefinition(t, { schema: wanted, spec: parsePartitionSpec(['identity(region)'], wanted), properties: { recorded: 'today' } }, empty);
    const schema = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!;
    expect(schema.fields.map((f) => [f.name, f.id])).toEqual([['id', 1], ['region', 7], ['name', 2], ['price', 5]]);
    expect(schema.identifierFieldIds).toEqual([1]);
    expect(t.metadata.lastColumnId).toBe(7);
    const spec = t.metadata.partitionSpecs.find((p) => p.specId === t.metadata.defaultSpecId)!;
    expect(spec.fields.map((f) => [f.sourceId, f.transform.kind])).toEqual([[7, 'identity']]);
    expect(t.metadata.properties.recorded).toBe('today');
    // a table that is no longer as the caller requires (here: a snapshot came) is refused
    t = committedTable(await commitRowDelta(t, {}));
    await expect(replaceTableDefinition(t, { schema: original, spec: parsePartitionSpec([], original), properties: {} }, empty)).rejects.toThrow(/rows were committed/);
  });
});

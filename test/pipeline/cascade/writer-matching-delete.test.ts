/**
 * The writer's matching delete (ON DELETE CASCADE child rows): rows committed in earlier checkpoints
 * are removed by an equality delete on the FK field, rows written earlier in the same checkpoint by
 * position (v2 position deletes, v3 deletion vectors), rows written after it stay. Read back with
 * floe's scan and, for v2, with icebird (an independent reader); the delete files checked with
 * hyparquet (equality ids, the FK column only).
 */
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import { readManifestEntries, readSnapshotManifests, loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { currentSnapshot } from '../../../src/iceberg/spec/snapshot-ids.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { TableCommitter } from '../../../src/iceberg/checkpoint/index.js';
import { deleteMatching, insert, remove, update, type RowChange } from '../../../src/iceberg/writer/index.js';
import type { Row } from '../../../src/model/values.js';
import { icebirdRows } from '../../iceberg/writer/icebird-read.js';
import { localPath, newTable, useTempWarehouse } from '../../iceberg/writer/support.js';

const w = useTempWarehouse('floe-cascade-writer-');

/** child: id long (key), pid int (FK, optional), name string. */
function childSchema(keyed = true): Schema {
  return new Schema(
    0,
    [
      { id: 1, name: 'id', required: keyed, type: Types.long },
      { id: 2, name: 'pid', required: false, type: Types.int },
      { id: 3, name: 'name', required: false, type: Types.string },
    ],
    keyed ? [1] : [],
  );
}

const r = (id: number, pid: number | null, name: string): Row => [BigInt(id), pid, name];

async function liveRows(id: TableIdentifier): Promise<string[]> {
  const t = await loadCatalogTable(w.catalog, id);
  return (await readTableRows(t)).map((x) => `${x[0]}:${x[1]}:${x[2]}`).sort();
}

async function run(formatVersion: 2 | 3): Promise<TableIdentifier> {
  const t = await newTable(w, { formatVersion, schema: childSchema() });
  const c = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'cascade', writer: { matchFields: [['pid']] } });
  await c.write([insert(r(1, 10, 'a')), insert(r(2, 10, 'b')), insert(r(3, 20, 'c')), insert(r(7, null, 'orphan'))]);
  await c.commit(1n, '{}');
  const changes: RowChange[] = [
    insert(r(4, 10, 'd')), // same checkpoint, before the cascade: removed by position
    insert(r(5, 20, 'e')),
    update(r(3, 10, 'c2'), r(3, 20, 'c')), // moved to parent 10 in this checkpoint: removed by position
    insert(r(8, 10, 'h')),
    remove(r(8, 10, 'h')), // already gone before the cascade
    deleteMatching(['pid'], [10]), // parent 10 deleted
    insert(r(6, 10, 'f')), // parent 10 re-created, child attached after the delete: stays
  ];
  await c.write(changes);
  const out = await c.commit(2n, '{}');
  expect(out.status).toBe('committed');
  return t.identifier;
}

describe('matching deletes in the upsert writer', () => {
  it('v2: equality delete on the FK for committed rows, position deletes for rows of the checkpoint', async () => {
    const id = await run(2);
    expect(await liveRows(id)).toEqual(['5:20:e', '6:10:f', '7:null:orphan']);
    const t = await loadCatalogTable(w.catalog, id);
    const viaIcebird = (await icebirdRows(t.metadata.location)).map((x) => `${x.id}:${x.pid}:${x.name}`).sort();
    expect(viaIcebird).toEqual(['5:20:e', '6:10:f', '7:null:orphan']);

    // the FK equality-delete file: equality_ids [2] (pid), one row {pid: 10}
    const entries = [];
    for (const m of await readSnapshotManifests(t.io, currentSnapshot(t.metadata)!)) entries.push(...(await readManifestEntries(t.io, m)));
    const fkDeletes = entries.filter((e) => e.status === 'added' && e.dataFile.content === 'equality-deletes' && e.dataFile.equalityIds?.join() === '2');
    expect(fkDeletes).toHaveLength(1);
    const bytes = fs.readFileSync(localPath(fkDeletes[0].dataFile.filePath));
    const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    expect(parquetMetadata(buf).schema.slice(1).map((s) => [s.name, s.field_id])).toEqual([['pid', 2]]);
    expect(await parquetReadObjects({ file: buf, compressors })).toEqual([{ pid: 10 }]);
    const positionDeletes = entries.filter((e) => e.status === 'added' && e.dataFile.content === 'position-deletes');
    expect(positionDeletes.length).toBeGreaterThan(0);
  });

  it('v3: the same through deletion vectors', async () => {
    const id = await run(3);
    expect(await liveRows(id)).toEqual(['5:20:e', '6:10:f', '7:null:orphan']);
  });

  it('keyless child tables: matched rows removed; a later delete of an identical row removes a live copy', async () => {
    const t = await newTable(w, { formatVersion: 2, schema: childSchema(false) });
    const c = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'cascade', writer: { matchFields: [['pid']] } });
    await c.write([insert(r(1, 10, 'x')), insert(r(1, 30, 'y')), insert(r(1, 30, 'y'))]);
    await c.commit(1n, '{}');
    await c.write([
      insert(r(2, 10, 'z')),
      insert(r(1, 30, 'y')), // a third identical copy, this checkpoint
      deleteMatching(['pid'], [10]),
      remove(r(1, 30, 'y')), // MySQL deletes one copy: the one of this checkpoint, by position
    ]);
    await c.commit(2n, '{}');
    expect(await liveRows(t.identifier)).toEqual(['1:30:y', '1:30:y']);
  });

  it('v3 keyless child: committed rows go by deletion vectors, each copy once, through a restart', async () => {
    const t = await newTable(w, { formatVersion: 3, schema: childSchema(false) });
    const opts = { identifier: t.identifier, catalog: w.catalog, jobId: 'cascade', writer: { matchFields: [['pid']] } };
    const c = new TableCommitter(opts);
    await c.write([insert(r(1, 10, 'x')), insert(r(1, 10, 'x')), insert(r(1, 20, 'x')), insert(r(2, 10, 'y')), insert(r(3, 30, 'z')), insert(r(3, 30, 'z')), insert(r(9, null, 'n'))]);
    await c.commit(1n, '{}');
    await c.write([
      remove(r(2, 10, 'y')), // a committed child deleted by the binlog before its parent: its copy taken already
      insert(r(4, 10, 'w')), // same checkpoint: by position
      deleteMatching(['pid'], [10]),
      insert(r(5, 10, 'after')), // attached after the delete: stays
    ]);
    await c.commit(2n, '{}');
    expect(await liveRows(t.identifier)).toEqual(['1:20:x', '3:30:z', '3:30:z', '5:10:after', '9:null:n']);
    // the row index followed the cascade's deletion vectors: a new identical copy is the one a delete finds
    await c.write([insert(r(1, 10, 'x'))]);
    await c.commit(3n, '{}');
    await c.write([remove(r(1, 10, 'x'))]);
    await c.commit(4n, '{}');
    expect(await liveRows(t.identifier)).toEqual(['1:20:x', '3:30:z', '3:30:z', '5:10:after', '9:null:n']);
    // a restart: the FK index is built from the lake
    const again = new TableCommitter(opts);
    await again.write([deleteMatching(['pid'], [30])]);
    await again.commit(5n, '{}');
    expect(await liveRows(t.identifier)).toEqual(['1:20:x', '5:10:after', '9:null:n']);

    const table = await loadCatalogTable(w.catalog, t.identifier);
    const added: string[] = [];
    for (const snap of table.metadata.snapshots) {
      for (const m of await readSnapshotManifests(table.io, snap)) {
        for (const e of await readManifestEntries(table.io, m)) if (e.status === 'added' && e.dataFile.content !== 'data') added.push(e.dataFile.content);
      }
    }
    expect(added.length).toBeGreaterThan(0);
    expect(added.filter((c) => c === 'equality-deletes')).toEqual([]);
  });

  it('refuses a matching delete on fields the writer was not told to index, naming them', async () => {
    const t = await newTable(w, { formatVersion: 2, schema: childSchema() });
    const c = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'cascade' });
    await expect(c.write([insert(r(1, 10, 'a')), deleteMatching(['pid'], [10])])).rejects.toThrow(/does not index these fields.*matchFields including \[pid\]/);
  });

  it('takes its values from a projected row and refuses float fields and nulls', async () => {
    const t = await newTable(w, { formatVersion: 3, schema: childSchema() });
    const c = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'cascade', writer: { matchFields: [['pid']] } });
    await c.write([insert(r(1, 10, 'a')), insert(r(2, 11, 'b')), { op: 'delete-matching', fields: ['pid'], row: [null, 11, null] }]);
    await c.commit(1n, '{}');
    expect(await liveRows(t.identifier)).toEqual(['1:10:a']);
    const c2 = new TableCommitter({ identifier: t.identifier, catalog: w.catalog, jobId: 'cascade', writer: { matchFields: [['pid']] } });
    await expect(c2.write([deleteMatching(['pid'], [null])])).rejects.toThrow(/value of pid is null/);
  });
});

/**
 * Tables floe writes (v2 and v3; unpartitioned and partitioned by identity / day / bucket / truncate;
 * every primitive type; appends, upserts with global and partition-scoped equality deletes, same-commit
 * duplicates removed by position deletes (v2) or deletion vectors (v3), a DV replaced by a merged one)
 * read back by floe's scan reader, by an independent reader (avsc + hyparquet + the spec's delete rules
 * written from scratch) and, on v2 tables, by icebird@0.3.1 — all equal to the model of the operations.
 */
import { describe, expect, it } from 'vitest';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import type { Schema } from '../../../src/iceberg/spec/schema.js';
import { commitRowDelta, createTable, ensureUnpartitionedSpec, type CatalogTable } from '../../../src/iceberg/table/index.js';
import type { Row, Value } from '../../../src/model/values.js';
import { committedTable, useTempCatalog, writeDeletionVectors, writeEqualityDeletes, writePositionDeletes } from '../table/table-fixtures.js';
import { readWithIcebird } from './icebird-reader.js';
import { readIndependently } from './independent-reader.js';
import { canonical, makeRow, PARTITION_FIELDS, partitionOf, roundTripSchema, writeRows, type Placement } from './roundtrip-model.js';

const env = useTempCatalog('floe-roundtrip-');

interface Config {
  name: string;
  formatVersion: 2 | 3;
  partitioned: boolean;
  /** Add a partition-scoped equality delete in the wrong partition (must not apply; icebird would apply it). */
  probe: boolean;
}

/** Position deletes (v2 files, or v3 DVs merged with the data file's earlier DV), one per data file. */
class PositionDeleter {
  private readonly dvs = new Map<string, { dv: DataFile; positions: number[] }>();
  constructor(private readonly formatVersion: 2 | 3) {}

  async delete(table: CatalogTable, places: Placement[]): Promise<{ added: DataFile[]; removed: DataFile[] }> {
    const byFile = new Map<string, { file: DataFile; positions: number[] }>();
    for (const p of places) {
      const g = byFile.get(p.file.filePath) ?? { file: p.file, positions: [] };
      g.positions.push(p.pos);
      byFile.set(p.file.filePath, g);
    }
    if (this.formatVersion === 2) {
      const added: DataFile[] = [];
      for (const g of byFile.values()) {
        added.push(await writePositionDeletes(table, g.positions.map((pos) => ({ filePath: g.file.filePath, pos: BigInt(pos) })), { specId: g.file.specId, partition: [...g.file.partition] }));
      }
      return { added, removed: [] };
    }
    const removed: DataFile[] = [];
    const vectors = [...byFile.values()].map((g) => {
      const previous = this.dvs.get(g.file.filePath);
      if (previous) removed.push(previous.dv);
      return { dataFile: g.file, positions: [...(previous?.positions ?? []), ...g.positions] };
    });
    const added = await writeDeletionVectors(table, vectors);
    added.forEach((dv, i) => this.dvs.set(vectors[i].dataFile.filePath, { dv, positions: vectors[i].positions }));
    return { added, removed };
  }
}

const configs: Config[] = [
  { name: 'v2 unpartitioned', formatVersion: 2, partitioned: false, probe: false },
  { name: 'v2 partitioned (identity, day, bucket, truncate)', formatVersion: 2, partitioned: true, probe: false },
  { name: 'v3 unpartitioned', formatVersion: 3, partitioned: false, probe: false },
  { name: 'v3 partitioned (identity, day, bucket, truncate) with a wrong-partition delete', formatVersion: 3, partitioned: true, probe: true },
  { name: 'v2 partitioned with a wrong-partition delete', formatVersion: 2, partitioned: true, probe: true },
];

describe('round trip: floe writes, floe / independent / icebird read', () => {
  for (const cfg of configs) {
    it(cfg.name, async () => {
      const schema: Schema = roundTripSchema(cfg.formatVersion);
      let t = await createTable(env.catalog, { namespace: ['db'], name: cfg.name.replace(/[^a-z0-9]+/g, '_') }, {
        schema,
        formatVersion: cfg.formatVersion,
        partitionSpec: cfg.partitioned ? { specId: 0, fields: PARTITION_FIELDS } : undefined,
      });
      let globalSpec = 0;
      if (cfg.partitioned) {
        const ensured = await ensureUnpartitionedSpec(t);
        t = ensured.table;
        globalSpec = ensured.spec.specId;
      }
      const model = new Map<bigint, Row>();
      const positions = new PositionDeleter(cfg.formatVersion);
      const placeOf = new Map<bigint, Placement>();

      // C1: append keys 1..16
      const c1Rows = Array.from({ length: 16 }, (_, i) => makeRow(schema, i + 1));
      const c1 = await writeRows(t, c1Rows);
      t = committedTable(await commitRowDelta(t, { dataFiles: c1.files }));
      c1Rows.forEach((r, i) => {
        model.set(r[0] as bigint, r);
        placeOf.set(r[0] as bigint, c1.placements[i]);
      });

      // C2: upsert 2, 5, 9 (global equality deletes + new versions); insert 17 twice in the commit
      // (the first copy removed by position); delete 7 by position.
      const c2Rows = [makeRow(schema, 2, 2), makeRow(schema, 5, 2), makeRow(schema, 9, 2), makeRow(schema, 17, 1), makeRow(schema, 17, 2)];
      const c2 = await writeRows(t, c2Rows);
      const eq = await writeEqualityDeletes(t, [1], [[2n], [5n], [9n]], { specId: globalSpec, partition: [] });
      const pos = await positions.delete(t, [c2.placements[3], placeOf.get(7n)!]);
      t = committedTable(await commitRowDelta(t, { dataFiles: c2.files, deleteFiles: [eq, ...pos.added], removedFiles: pos.removed }));
      for (const r of [c2Rows[0], c2Rows[1], c2Rows[2], c2Rows[4]]) model.set(r[0] as bigint, r);
      model.delete(7n);
      const afterC2 = { snapshotId: t.metadata.currentSnapshotId!, rows: [...model.values()] };

      // C3: delete-only: key 11 in its own partition, row 13 by name (global); the probe deletes key
      // 12 in 11's partition, where 12 does not live, so it must survive.
      const deletes: DataFile[] = [];
      const partitionOf11: Value[] = cfg.partitioned ? partitionOf(schema, PARTITION_FIELDS, model.get(11n)!) : [];
      deletes.push(await writeEqualityDeletes(t, [1], [[11n]], { specId: 0, partition: partitionOf11 }));
      deletes.push(await writeEqualityDeletes(t, [2], [[model.get(13n)![1]]], { specId: globalSpec, partition: [] }));
      if (cfg.probe) deletes.push(await writeEqualityDeletes(t, [1], [[12n]], { specId: 0, partition: partitionOf11 }));
      const c3 = await commitRowDelta(t, { deleteFiles: deletes });
      expect(c3.status === 'committed' && c3.snapshot.summary.operation).toBe('delete');
      t = committedTable(c3);
      model.delete(11n);
      model.delete(13n);

      // C4: another position delete on key 7's file (v3: the DV is merged and the old one removed), plus a row.
      const sameFile = [...placeOf.entries()].find(([k, p]) => k !== 7n && model.has(k) && p.file.filePath === placeOf.get(7n)!.file.filePath && !c2Rows.some((r) => r[0] === k));
      const c4Rows = [makeRow(schema, 18)];
      const c4 = await writeRows(t, c4Rows);
      const pos4 = sameFile ? await positions.delete(t, [sameFile[1]]) : { added: [], removed: [] };
      t = committedTable(await commitRowDelta(t, { dataFiles: c4.files, deleteFiles: pos4.added, removedFiles: pos4.removed }));
      if (sameFile) model.delete(sameFile[0]);
      model.set(18n, c4Rows[0]);
      if (!cfg.partitioned) expect(sameFile).toBeDefined();
      if (cfg.formatVersion === 3 && sameFile) expect(pos4.removed).toHaveLength(1);

      const expected = canonical(schema, [...model.values()]);
      expect(expected.length).toBe(sameFile ? 14 : 15);
      // floe's reader: current and time travel
      expect(canonical(schema, await readTableRows(t))).toEqual(expected);
      expect(canonical(schema, await readTableRows(t, { snapshotId: afterC2.snapshotId }))).toEqual(canonical(schema, afterC2.rows));
      // the independent reader
      expect(canonical(schema, await readIndependently(t.metadataLocation))).toEqual(expected);
      // icebird on v2 tables without the wrong-partition probe: compare every column it decodes
      // faithfully — not decimals (doubles), timestamps (Dates, milliseconds) or binary (text).
      if (cfg.formatVersion === 2 && !cfg.probe) {
        const rows = await readWithIcebird(t.metadata.location);
        const text = (v: unknown): unknown => (v === null || v === undefined ? null : typeof v === 'bigint' ? String(v) : v);
        const hex = (v: unknown): string | null => (v instanceof Uint8Array ? Buffer.from(v).toString('hex') : typeof v === 'string' ? v.replace(/-/g, '') : null);
        const DAY_MS = 86_400_000;
        const icebirdView = rows.map((r) =>
          JSON.stringify([text(r.id), text(r.name), text(r.cat), text(r.flag), text(r.i), text(r.l), text(r.f), Number.isNaN(r.d) ? null : text(r.d), r.day instanceof Date ? r.day.getTime() / DAY_MS : null, text(r.t), hex(r.u), hex(r.fx)]),
        );
        const modelView = [...model.values()].map((r) =>
          JSON.stringify([text(r[0]), text(r[1]), text(r[2]), text(r[3]), text(r[4]), text(r[5]), text(r[6]), Number.isNaN(r[7]) ? null : text(r[7]), text(r[10]), text(r[11]), hex(r[14]), hex(r[15])]),
        );
        expect(icebirdView.sort()).toEqual(modelView.sort());
      }
    });
  }
});

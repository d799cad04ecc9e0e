/**
 * The value indexes a table committer (table-committer.ts) keeps beside the key index, each through
 * a value-index lifecycle (keyindex/value-index-lifecycle.ts): a keyless table's row index (the whole
 * row → the places of its copies) and an `ON DELETE CASCADE` child's FK indexes (FK value → the places
 * of its rows, each with its primary key or, keyless, its whole row) — what a format-v3 table needs
 * so that none of its deletes is an equality delete. Each is dropped whenever the table's state is
 * in doubt and built from the lake again.
 *
 * A writer gets a row index when its table is keyless, format v3, with `upsertDeletes`
 * 'deletion-vectors' (the default), within `keyIndexMaxRows` — beyond it, or beyond
 * `keyIndex.memoryMaxBytes` with no state directory to move the index to, its deletes write
 * whole-row equality deletes, with a warning (keyless-change-writer.ts). A cascade child's FK indexes are those of the snapshot its
 * other deletes were located in (the key index's, or the row index's).
 */
import { join } from 'node:path';
import { identifierToString, type TableIdentifier } from '../metadata/catalog.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable, CommitResult } from '../table/index.js';
import type { CompactionCommit } from '../keyindex/key-index.js';
import type { KeyIndexOptions } from '../keyindex/key-index-options.js';
import { buildValueIndexes, fkIndexSpecs, ownerKey, ROW_INDEX, rowIndexSpec } from '../keyindex/value-index-build.js';
import { ValueIndexLifecycle } from '../keyindex/value-index-lifecycle.js';
import { NO_VALUE_MOVES, type ValueIndex, type ValueIndexDelta } from '../keyindex/value-index.js';
import type { PreparedChanges, TableChangeWriter, WriteMode } from '../writer/table-change-writer.js';

export class ValueIndexes {
  private readonly rows: ValueIndexLifecycle;
  private readonly fks: ValueIndexLifecycle;
  private readonly name: string;

  constructor(
    identifier: TableIdentifier,
    jobId: string,
    private readonly options: KeyIndexOptions,
  ) {
    const name = identifierToString(identifier);
    this.name = name;
    const stateDir = options.keyIndex?.stateDir;
    // beside the table's disk key index (key-index-loading.ts `sqlitePath`)
    const diskPath = (kind: string) => (tableUuid: string, index: string) => (stateDir ? join(stateDir, jobId, `${tableUuid}.${kind}-${index.replaceAll(',', '-')}.valueindex.sqlite`) : undefined);
    const withoutStateDir = 'without a state directory (stateDir) a value index lives in memory only';
    this.rows = new ValueIndexLifecycle(name, options, (bytes, max, rows) => `${name}: its row index of ${rows} rows takes ${bytes} bytes, more than iceberg.keyIndex.memoryMaxBytes (${max}), and ${withoutStateDir}; from now on its deletes write whole-row equality deletes, which remove every identical copy`, diskPath('rows'));
    this.fks = new ValueIndexLifecycle(name, options, (bytes, max) => `${name}: its foreign-key indexes take ${bytes} bytes, more than iceberg.keyIndex.memoryMaxBytes (${max}), and ${withoutStateDir}; from now on its cascaded deletes write equality deletes on the foreign-key columns`, diskPath('fk'));
  }

  /** Times the row index, and the FK indexes, were built from the lake (tests: a kept index is not rebuilt). */
  get builds(): { rows: number; fks: number } {
    return { rows: this.rows.built, fks: this.fks.built };
  }

  /** The snapshot a keyless table's row index located the checkpoint's deletes in, and the schema of its rows. */
  get rowIndexAt(): { snapshotId: bigint | undefined; schemaId: number | undefined } {
    return this.rows.at;
  }

  /** The row index for a writer of `table` in `mode` (undefined: none, or the writer is keyed). */
  async forWriter(table: CatalogTable, mode: WriteMode | undefined): Promise<ValueIndex | undefined> {
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    // the writer's default mode: 'append' for a table without identifier fields
    const keyless = mode !== undefined ? mode === 'append' : (schema?.identifierFieldIds.length ?? 0) === 0;
    if (!keyless || (this.options.upsertDeletes ?? 'deletion-vectors') !== 'deletion-vectors' || m.formatVersion < 3 || !schema || schema.identifierFieldIds.length > 0) {
      this.rows.drop();
      return undefined;
    }
    const records = Number(currentSnapshot(m)?.summary['total-records'] ?? '0');
    const limit = this.options.keyIndexMaxRows ?? (this.options.keyIndex?.stateDir ? 1_000_000_000 : 10_000_000);
    if (records > limit) {
      // Delivery note: a binlog DELETE then writes a whole-row equality delete, which removes every
      // identical copy (and is unreadable by PyIceberg): the lake may hold fewer copies than MySQL.
      return this.rows.refuse(`${this.name} holds ${records} rows, more than a row index may (iceberg.keyIndexMaxRows ${limit}, iceberg.keyIndex.memoryMaxBytes): its deletes write whole-row equality deletes, which remove every identical copy`);
    }
    const head = currentSnapshot(m)?.snapshotId;
    const indexes = await this.rows.forSnapshot(table, head, { names: [ROW_INDEX], build: (s, spill, snapshotId) => buildValueIndexes(table, s, [rowIndexSpec(s)], { spill, snapshotId }) });
    return indexes?.get(ROW_INDEX);
  }

  /**
   * At the commit: the children of parents `writer`'s checkpoint deleted, located through the FK
   * indexes of the snapshot the writer's other deletes were located in — the key index's
   * (`keySnapshot`), or a keyless child's row index's (equality deletes where there are none).
   */
  async resolveCascades(writer: TableChangeWriter, table: CatalogTable, keySnapshot: bigint | undefined): Promise<void> {
    const cascades = writer.cascadeFieldSets;
    if (!cascades) return;
    const at = writer.mode === 'append' ? this.rows.at.snapshotId : keySnapshot;
    await this.usingFkIndexes(table, at, cascades, (indexes) => writer.resolveCascades(indexes));
  }

  /**
   * A v3 cascade child's writer (with its key index, or a keyless one's row index): from now on each
   * matching delete names the rows it removes, through the FK indexes of the snapshot its other
   * deletes are located in, which it gets now rather than at the commit (so that the child's own
   * cascades can follow: pipeline/key-cascades.ts). False when it cannot: format v2, no FK index
   * (beyond its memory bound).
   */
  async reportRemovals(writer: TableChangeWriter, table: CatalogTable, keySnapshot: bigint | undefined): Promise<boolean> {
    const sets = writer.matchFieldSets;
    if (writer.formatVersion < 3 || sets.length === 0) return false;
    const at = writer.mode === 'append' ? this.rows.at.snapshotId : keySnapshot;
    return this.usingFkIndexes(table, at, sets, (indexes) => writer.reportCascadeRemovals(indexes));
  }

  /** `use` of the FK indexes `fkIndexes` gives; a failure of either drops them (they may be half-applied). */
  private async usingFkIndexes<T>(table: CatalogTable, at: bigint | undefined, sets: number[][], use: (indexes: ReadonlyMap<string, ValueIndex> | undefined) => T | Promise<T>): Promise<T> {
    try {
      return await use(await this.fkIndexes(table, at, sets));
    } catch (e) {
      this.fks.drop();
      throw e;
    }
  }

  /**
   * The FK indexes of FK column sets `sets` (field ids) as of snapshot `at`: kept, or built from the
   * lake (undefined: beyond the memory bound without a state directory).
   */
  async fkIndexes(table: CatalogTable, at: bigint | undefined, sets: number[][]): Promise<ReadonlyMap<string, ValueIndex> | undefined> {
    const names = sets.map((ids) => ids.join(','));
    return this.fks.forSnapshot(table, at, { names, build: (s, spill, snapshotId) => buildValueIndexes(table, s, fkIndexSpecs(s, sets), { owner: ownerKey(s), spill, snapshotId }) });
  }

  /** The indexes follow the commit that landed (or are dropped: see value-index-lifecycle.ts). */
  afterCommit(result: CommitResult, prepared: PreparedChanges | undefined): void {
    const equalityDeletes = prepared !== undefined && prepared.stats.equalityDeletes > 0;
    this.rows.afterCommit(result, prepared && { deltas: new Map([[ROW_INDEX, prepared.rowIndexDelta ?? NO_VALUE_MOVES]]), doubt: equalityDeletes });
    // a commit of rows whose FK values were not recorded leaves the FK indexes behind: dropped
    this.fks.afterCommit(result, prepared && { deltas: fkDeltas(prepared), doubt: equalityDeletes || (prepared.dataFiles.length > 0 && !prepared.fkRows) });
  }

  /** floe's own maintenance: a manifest rewrite is followed, a compaction drops them (built again from the new files). */
  follow(table: CatalogTable, compaction: CompactionCommit | undefined): void {
    this.rows.follow(table, compaction);
    this.fks.follow(table, compaction);
  }

  drop(): void {
    this.rows.drop();
    this.fks.drop();
  }
}

/** How a commit moves a cascade child's FK indexes: the rows it wrote, the committed rows its DVs removed. */
function fkDeltas(prepared: PreparedChanges): Map<string, ValueIndexDelta> {
  // the deletion vectors on committed rows, whichever index located them (key index, row index)
  const deadRows = prepared.indexDelta?.deadRows ?? prepared.rowIndexDelta?.deadRows ?? [];
  const out = new Map<string, ValueIndexDelta>();
  for (const [k, rows] of prepared.fkRows ?? []) {
    out.set(k, { setCount: rows.length, forEachSet: (each) => rows.forEach((r) => each(r.value, r.file, r.pos, r.owner)), deadRows });
  }
  return out;
}

/**
 * The value indexes a table committer (table-committer.ts) keeps beside the key index: a keyless
 * table's row index (row-index-lifecycle.ts) and an `ON DELETE CASCADE` child's FK indexes
 * (fk-index-lifecycle.ts) — what a format-v3 table needs so that none of its deletes is an equality
 * delete. Each is dropped whenever the table's state is in doubt and built from the lake again.
 */
import type { TableIdentifier } from '../metadata/catalog.js';
import type { CatalogTable, CommitResult } from '../table/index.js';
import type { CompactionCommit } from '../keyindex/key-index.js';
import type { KeyIndexOptions } from '../keyindex/key-index-options.js';
import { RowIndexLifecycle } from '../keyindex/row-index-lifecycle.js';
import { FkIndexLifecycle } from '../keyindex/fk-index-lifecycle.js';
import type { ValueIndex, ValueIndexDelta } from '../keyindex/value-index.js';
import type { PreparedChanges, TableChangeWriter, WriteMode } from '../writer/table-change-writer.js';

export class ValueIndexes {
  private readonly rows: RowIndexLifecycle;
  private readonly fks: FkIndexLifecycle;

  constructor(identifier: TableIdentifier, options: KeyIndexOptions) {
    this.rows = new RowIndexLifecycle(identifier, options);
    this.fks = new FkIndexLifecycle(identifier, options);
  }

  /** Times the row index, and the FK indexes, were built from the lake (tests: a kept index is not rebuilt). */
  get builds(): { rows: number; fks: number } {
    return { rows: this.rows.built, fks: this.fks.built };
  }

  /** The snapshot a keyless table's row index located the checkpoint's deletes in, and the schema of its rows. */
  get rowIndexAt(): { snapshotId: bigint | undefined; schemaId: number | undefined } {
    return { snapshotId: this.rows.current?.snapshotId, schemaId: this.rows.indexSchemaId };
  }

  /** The row index for a writer of `table` in `mode` (undefined: none, or the writer is keyed). */
  async forWriter(table: CatalogTable, mode: WriteMode | undefined): Promise<ValueIndex | undefined> {
    const m = table.metadata;
    // the writer's default mode: 'append' for a table without identifier fields
    const keyless = mode !== undefined ? mode === 'append' : (m.schemas.find((x) => x.schemaId === m.currentSchemaId)?.identifierFieldIds.length ?? 0) === 0;
    return keyless ? this.rows.forWriter(table) : undefined;
  }

  /**
   * At the commit: the children of parents `writer`'s checkpoint deleted, located through the FK
   * indexes of the snapshot the key index matches (`keySnapshot`; equality deletes where there are none).
   */
  async resolveCascades(writer: TableChangeWriter, table: CatalogTable, keySnapshot: bigint | undefined): Promise<void> {
    const cascades = writer.cascadeFieldSets;
    if (!cascades) return;
    try {
      await writer.resolveCascades(await this.fks.forSnapshot(table, keySnapshot, cascades));
    } catch (e) {
      this.fks.drop();
      throw e;
    }
  }

  /** The indexes follow the commit that landed (or are dropped: see their lifecycles). */
  afterCommit(result: CommitResult, prepared: PreparedChanges | undefined): void {
    const equalityDeletes = prepared !== undefined && prepared.stats.equalityDeletes > 0;
    this.rows.afterCommit(result, prepared && { rowIndexDelta: prepared.rowIndexDelta, equalityDeletes });
    // a commit of rows whose FK values were not recorded leaves the FK indexes behind: dropped
    this.fks.afterCommit(result, prepared && { deltas: fkDeltas(prepared), equalityDeletes: equalityDeletes || (prepared.dataFiles.length > 0 && !prepared.fkRows) });
  }

  /** floe's own maintenance: a manifest rewrite is followed, a compaction drops them (built again from the new files). */
  follow(table: CatalogTable, compaction: CompactionCommit | undefined): void {
    this.rows.follow(table, compaction);
    if (compaction) this.fks.drop();
  }

  drop(): void {
    this.rows.drop();
    this.fks.drop();
  }
}

/** How a commit moves a cascade child's FK indexes: the rows it wrote, the committed rows its DVs removed. */
function fkDeltas(prepared: PreparedChanges): Map<string, ValueIndexDelta> {
  const deadRows = prepared.indexDelta?.deadRows ?? [];
  const out = new Map<string, ValueIndexDelta>();
  for (const [k, rows] of prepared.fkRows ?? []) {
    out.set(k, { setCount: rows.length, forEachSet: (each) => rows.forEach((r) => each(r.value, r.file, r.pos, r.owner)), deadRows });
  }
  return out;
}

/**
 * The prepared tables of a run: each captured MySQL table (as the opened source captured it,
 * opened-source.ts) mapped to its Iceberg table (created when missing), with where this job stands
 * in it (`lastCommitted` + its `floe.source-offset`, state.ts) — the only state a restart has — and
 * the definition its binlog rows decode with (the lake's record when the MySQL table changed while
 * floe was stopped, source-schema-record.ts).
 */
import type { Catalog } from '../../iceberg/metadata/catalog.js';
import type { FloeConfig } from '../../config/schema.js';
import { currentSnapshot } from '../../iceberg/spec/snapshot-ids.js';
import { lastCommitted, type CommittedCheckpoint } from '../../iceberg/checkpoint/index.js';
import { currentSchema } from '../../iceberg/spec/table-metadata-json.js';
import { mapTable, tableKey, type MappedTable, type OpenedMySqlSource, type TableId } from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';
import type { Logger } from '../observe/logger.js';
import { typeMappingOptions } from '../config-options.js';
import type { ProgressReporter } from '../observe/progress.js';
import { decodeTableProgress, parseProgressSummary, snapshotComplete, type TableProgress } from '../state.js';
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import { ensureIcebergTable, type ReadyTable } from '../table-mapping-catalog.js';
import { planTableMapping, type TableMapping } from '../table-mapping.js';
import { compileTransforms } from '../transforms.js';
import { recordedSourceSchema, sameSourceSchema, sourceSchemaProperty } from '../schema-change/source-schema-record.js';
import { derivedSourceSchema } from '../schema-change/derived-source-schema.js';

export interface PreparedTable {
  readonly key: string;
  readonly id: TableId;
  readonly mapped: MappedTable;
  readonly mapping: TableMapping;
  readonly ready: ReadyTable;
  readonly committed: CommittedCheckpoint | undefined;
  readonly progress: TableProgress | undefined;
  /** The table holds rows although this job never committed to it (made by another job or tool). */
  readonly foreignRows: boolean;
  /**
   * `mapped` is the definition the lake recorded, not the server's current one: a DDL made while
   * floe was stopped is still ahead in the binlog (source-schema-record.ts).
   */
  readonly definitionFromLake: boolean;
}

export async function prepareTables(config: FloeConfig, tables: readonly MappedTable[], catalog: Catalog, logger: Logger): Promise<PreparedTable[]> {
  const transforms = compileTransforms(config.transforms);
  const out: PreparedTable[] = [];
  const icebergNames = new Map<string, string>();
  for (const current of tables) {
    const key = tableKey(current.schema.id);
    let mapped = current;
    let mapping = planTableMapping(mapped, config, transforms);
    const name = [...mapping.identifier.namespace, mapping.identifier.name].join('.');
    const clash = icebergNames.get(name);
    if (clash) throw new FloeError('config', 'config', `MySQL tables ${clash} and ${key} both map to the Iceberg table ${name}; give one of them another name in tables.overrides`);
    icebergNames.set(name, key);
    let fromLake = false;
    const ready = await ensureIcebergTable(catalog, mapping, logger, {
      pendingDdlPossible: (table) => lastCommitted(table.metadata, config.job.id) !== undefined,
      createProperties: sourceSchemaProperty(current.schema),
      withoutPast: (metadata) => withoutPast(metadata, config.job.id),
      resumeMapping: (table) => {
        // The binlog from this job's committed offset was logged under the definition the lake
        // recorded; the DDL that led to today's definition comes later in it (source-schema-record.ts).
        if (lastCommitted(table.metadata, config.job.id) === undefined) return undefined;
        // a table written by a floe that recorded no definition: its Iceberg schema is the table at its offset
        const kept = recordedSourceSchema(table.metadata, current.schema.id);
        const recorded = kept ?? derivedSourceSchema(currentSchema(table.metadata), current.schema, mapping, typeMappingOptions(config.source!));
        if (!recorded || sameSourceSchema(recorded, current.schema)) return undefined;
        fromLake = true;
        mapped = mapTable(recorded, typeMappingOptions(config.source!));
        mapping = planTableMapping(mapped, config, transforms);
        const from = kept ? 'the definition the lake recorded' : 'the definition derived from its Iceberg schema (the lake records none: written by an earlier floe)';
        logger.warn(`the MySQL table changed since floe last committed to it; its binlog rows are decoded with ${from} until the DDL that changed it, which the schema-change policy applies there`, {
          table: key,
          recorded: mapped.columns.map((c) => `${c.column.name} ${c.column.columnType}`).join(', '),
          now: current.columns.map((c) => `${c.column.name} ${c.column.columnType}`).join(', '),
        });
        return mapping;
      },
    });
    for (const note of mapping.notes) logger.info(note, { table: key });
    const committed = lastCommitted(ready.table.metadata, config.job.id);
    // a table without a past (emptied, or a snapshot that copied nothing) snapshots from the start:
    // its plan, if any, may key on columns it no longer has
    const progress = committed && !withoutPast(ready.table.metadata, config.job.id) ? await decodeTableProgress(committed.sourceOffset, ready.table.io, key, `table ${name} (job ${config.job.id})`) : undefined;
    const records = currentSnapshot(ready.table.metadata)?.summary['total-records'];
    const foreignRows = !committed && records !== undefined && records !== '0';
    if (foreignRows) {
      logger.warn('the Iceberg table already holds rows this job did not write; its snapshot upserts instead of appending', { table: key, iceberg: name, rows: records });
    }
    out.push({ key, id: mapped.schema.id, mapped, mapping, ready, committed, progress, foreignRows, definitionFromLake: fromLake });
  }
  return out;
}

/**
 * Whether a table has no past a restart must replay (table-mapping-catalog.ts `withoutPast`): it holds
 * no rows, and this job either never committed to it or committed only a snapshot's plan and chunks
 * that held no rows. Its binlog before now holds nothing it needs.
 */
function withoutPast(metadata: TableMetadata, jobId: string): boolean {
  const records = currentSnapshot(metadata)?.summary['total-records'];
  if (records !== undefined && records !== '0') return false;
  const committed = lastCommitted(metadata, jobId);
  if (!committed) return true;
  const progress = parseProgressSummary(committed.sourceOffset);
  return progress.phase === 'snapshot' && (progress.snapshot?.rows ?? 0) === 0;
}

/** The first checkpoint id of this run: one above anything the job committed to any table. */
export function firstCheckpointId(tables: readonly PreparedTable[]): bigint {
  let max = 0n;
  for (const t of tables) if (t.committed && t.committed.checkpointId > max) max = t.committed.checkpointId;
  return max + 1n;
}

/** Progress bars for the tables with chunks still to copy, sized by the server's row estimate. */
export async function announceSnapshotRows(source: OpenedMySqlSource, tables: readonly PreparedTable[], progress: ProgressReporter, snapshotFresh: boolean): Promise<void> {
  const toCopy = tables.filter((t) => (t.progress ? t.progress.phase === 'snapshot' && t.progress.snapshot && !snapshotComplete(t.progress.snapshot) : snapshotFresh));
  if (toCopy.length === 0) return;
  const rows = await source.rowEstimates(toCopy.map((t) => t.id));
  for (const t of toCopy) {
    progress.tableStarted(t.key, rows.get(t.key) ?? 0);
    if (t.progress?.snapshot) progress.rowsCopied(t.key, t.progress.snapshot.rows);
  }
}

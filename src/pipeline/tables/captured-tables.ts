/**
 * The run's captured tables: one `PipelineTable` record per table (pipeline-table.ts), in one map
 * (`byKey`) that the checkpointer and the router read. Tables join at start or later (a new table
 * matching the include patterns), change shape after a DDL (`refresh`), and leave when dropped in
 * MySQL (`remove`).
 */
import type { Catalog } from '../../iceberg/metadata/catalog.js';
import type { FloeConfig } from '../../config/schema.js';
import type { ParquetEncoderFactory } from '../../iceberg/parquet/encoder.js';
import { TableCommitter } from '../../iceberg/checkpoint/index.js';
import { type KeyColumnReader } from '../../iceberg/keyindex/index.js';
import { type TableChangeWriterOptions } from '../../iceberg/writer/index.js';
import type { BinlogOffset, CascadePlan, MappedTable, SourceSession } from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';
import { matchFieldsFor, carryFieldsFor } from '../cascade.js';
import type { Logger } from '../observe/logger.js';
import type { TableProgress } from '../state.js';
import { ensureIcebergTable } from '../table-mapping-catalog.js';
import { planTableMapping } from '../table-mapping.js';
import { compileTransforms } from '../transforms.js';
import type { PipelineTable } from './pipeline-table.js';
import type { PreparedTable } from './prepared-tables.js';

export interface TableWiring {
  readonly config: FloeConfig;
  readonly catalog: Catalog;
  readonly logger: Logger;
  /** The source's current ON DELETE CASCADE plan (child tables index their rows by FK values). */
  readonly cascades: () => CascadePlan | undefined;
  readonly parquetEncoder?: ParquetEncoderFactory;
  readonly keyColumnReader?: KeyColumnReader;
}

export class CapturedTables {
  /** Every captured table by its key ('db.table'): the one map of them. */
  readonly byKey = new Map<string, PipelineTable>();

  constructor(private readonly w: TableWiring) {}

  /** Wires a prepared table in: `working` is its progress to start from, `skipUntil` what it holds. */
  add(t: PreparedTable, working: TableProgress | undefined, skipUntil: BinlogOffset | undefined): void {
    const { config, catalog, logger } = this.w;
    const keyless = t.mapping.keyless;
    this.byKey.set(t.key, {
      key: t.key,
      prepared: t,
      identifier: t.mapping.identifier,
      io: t.ready.table.io,
      location: t.ready.table.metadata.location,
      committer: new TableCommitter({
        catalog,
        identifier: t.mapping.identifier,
        jobId: config.job.id,
        upsertDeletes: config.iceberg.upsertDeletes,
        keyIndexMaxRows: config.iceberg.keyIndexMaxRows,
        keyIndex: { stateDir: config.stateDir, memoryMaxBytes: config.iceberg.keyIndex.memoryMaxBytes, memoryMaxRows: config.iceberg.keyIndex.memoryMaxRows, saveMinRows: config.iceberg.keyIndex.saveMinRows },
        warn: (m) => logger.warn(m, { table: t.key }),
        info: (m) => logger.info(m, { table: t.key }),
        keyColumnReader: this.w.keyColumnReader,
        ...(this.w.parquetEncoder ? { writer: { parquet: { encoderFactory: this.w.parquetEncoder } } } : {}),
      }),
      writerOptions: () => this.writerOptions(t.key),
      committed: t.progress,
      working,
      skipUntil,
      checkpointsSinceCommit: 0,
      lastCommitMs: Date.now(),
      project: t.ready.project,
      sourceColumns: t.mapped.columns.map((col) => col.column.name),
      snapshotMode: keyless ? 'append' : t.foreignRows ? 'upsert' : 'append-only',
      streamMode: keyless ? 'append' : 'upsert',
    });
  }

  private writerOptions(key: string): TableChangeWriterOptions {
    const plan = this.w.cascades();
    const matchFields = plan ? matchFieldsFor(plan, key) : [];
    const carryFields = plan ? carryFieldsFor(plan, key) : [];
    return { ...(matchFields.length > 0 ? { matchFields } : {}), ...(carryFields.length > 0 ? { carryFields } : {}) };
  }

  /**
   * A captured table changed shape (the DDL handler evolved its Iceberg table and switched the
   * source's decoding to `mapped`): later rows map onto the table's new schema, through a new writer.
   * The caller has committed what was buffered with the old schema.
   */
  async refresh(key: string, mapped: MappedTable): Promise<void> {
    const t = this.byKey.get(key);
    if (!t) throw new FloeError('pipeline', 'internal', `refreshTable: ${key} is not a captured table`);
    if (t.committer.bufferedChanges > 0) throw new FloeError('pipeline', 'internal', `refreshTable: ${key} still has buffered changes of the old schema`);
    const mapping = planTableMapping(mapped, this.w.config, compileTransforms(this.w.config.transforms));
    // Later DDL of the same table may still be ahead in the binlog (the definition is read now).
    const ready = await ensureIcebergTable(this.w.catalog, mapping, this.w.logger, { pendingDdlPossible: () => true });
    t.project = ready.project;
    t.sourceColumns = mapped.columns.map((col) => col.column.name);
    t.committer.schemaChanged();
    t.prepared = { ...t.prepared, mapped, mapping, ready, definitionFromLake: false };
  }

  /**
   * What the next source stream captures and decodes with (opened-source.ts `events`): every
   * captured table with the definition the run maps it with (for a table resumed from the lake, the
   * one valid at its committed offset; source-schema-record.ts), and none of its rows at or before
   * its committed offset (they may predate that definition).
   */
  sourceSession(): Required<Pick<SourceSession, 'tables' | 'mapped' | 'decodeAfter' | 'changedDefinitions'>> {
    const tables = [...this.byKey.values()].map((t) => t.prepared);
    const decodeAfter = new Map<string, BinlogOffset>();
    for (const t of this.byKey.values()) if (t.skipUntil) decodeAfter.set(t.key, t.skipUntil);
    return {
      tables: tables.map((t) => t.id),
      mapped: new Map(tables.map((t) => [t.key, t.mapped])),
      decodeAfter,
      changedDefinitions: new Set(tables.filter((t) => t.definitionFromLake).map((t) => t.key)),
    };
  }

  /** The table is no longer captured (dropped or renamed away in MySQL); its lake table stays. It must have nothing buffered. */
  remove(key: string): void {
    const t = this.byKey.get(key);
    if (t && t.committer.bufferedChanges > 0) throw new FloeError('pipeline', 'internal', `${key} still has ${t.committer.bufferedChanges} buffered changes; commit them before it stops being captured`);
    t?.committer.close();
    this.byKey.delete(key);
  }
}

/**
 * Replay-safe checkpoint commits to ONE table (docs/design.md §4; flink-cdc `IcebergWriter` +
 * `IcebergCommitter`; docs/seeds/seed-003.txt §4-1): the table's changes are buffered by a
 * `TableChangeWriter`, and `commit(checkpointId, progress)` turns the buffer into ONE snapshot stamped
 * with the job id, the checkpoint id and the table's progress (checkpoint-stamps.ts) — a stamps-only
 * snapshot when nothing is buffered.
 *
 * This committer has no policy: WHEN a table commits (intervals, buffered counts, idle tables, mode
 * switches) is the checkpoint coordinator's decision (src/pipeline/checkpoint.ts). It only makes each
 * commit it is asked for safe.
 *
 * Replay safety — a checkpoint is never committed twice to a table:
 * - before writing its delete files, the table is reloaded: if this job already committed this
 *   checkpoint id or a later one, the buffered changes are dropped (and their unreferenced files);
 * - the commit's `validate` repeats the check after every reload (conflict, unknown outcome);
 * - a commit whose outcome is unknown is resolved once, by the commit loop (table/commit-engine.ts),
 *   which looks for the snapshot (the same id on every attempt); when it cannot tell, the error is
 *   raised and NO file is deleted (one of them may yet be referenced).
 * A deletion-vector checkpoint whose targets another writer rewrote is planned again (dv-replan.ts);
 * the table's key index lives in key-index-lifecycle.ts.
 *
 * Writing on during a commit: `detach` takes the buffered changes out for the next
 * `commit`, and from then on `write` buffers into a new writer — the next checkpoint's — while that
 * commit runs. With deletion vectors, the new writer's lookups of committed rows wait until the
 * commit has landed and the key index knows its rows (keyed-change-writer.ts); a table whose commit
 * would leave it without an index (or that commits nothing but its stamps) takes no writes meanwhile
 * (`writableDuringCommit`).
 *
 * Contract with the caller (the coordinator):
 * - checkpoint ids increase; after a restart they continue above `lastCommitted`, or a re-used id must
 *   carry exactly the changes it carried before (a deterministic cut). A skipped checkpoint's changes
 *   are dropped: that is only right because the table already holds them (delivery note: re-using an
 *   id for DIFFERENT changes would lose them).
 * - after `commit` (or a rejected `write`) throws, the instance is unusable: restart as after a crash
 *   (a fresh instance, resuming from `lastCommitted`).
 */
import type { TableIdentifier } from '../metadata/catalog.js';
import { identifierToString } from '../metadata/catalog.js';
import { errorMessage, FloeError } from '../../util/errors.js';
import type { Snapshot } from '../spec/table-metadata.js';
import { loadCatalogTable, reloadTable, type CatalogTable } from '../table/index.js';
import { isCheckpointCommitted, lastCommitted, type CommittedCheckpoint } from './checkpoint-stamps.js';
import type { RowChange } from '../writer/row-change.js';
import type { RemovedRows } from '../writer/cascade-removals.js';
import { TableChangeWriter, type TableChangeWriterOptions, type WriteMode, type WriterStats } from '../writer/table-change-writer.js';
import type { CompactionCommit } from '../keyindex/key-index.js';
import { KeyIndexLifecycle, type KeyIndexLoads } from '../keyindex/key-index-lifecycle.js';
import type { TableCommitterOptions, TableCommitOutcome } from './table-committer-options.js';
import { ValueIndexes } from './value-indexes.js';
import { prepareCheckpoint } from './prepare-checkpoint.js';
import { commitCheckpoint, type SchemaCommit } from './checkpoint-commit.js';
import { deleteUnreferenced } from './unreferenced-files.js';
import { commitTruncation } from './truncate-commit.js';
import { landCompaction, type LandedCompaction, type PreparedCompaction } from './compaction-landing.js';

const SUBSYSTEM = 'iceberg.writer';

export type { TableCommitterOptions, TableCommitOutcome } from './table-committer-options.js';

export class TableCommitter {
  readonly jobId: string;
  readonly identifier: TableIdentifier;
  private table: CatalogTable | undefined;
  private writerOptions: TableChangeWriterOptions;
  /** Whether the table was opened for the next writer (`open`), and not truncated or changed since. */
  private opened = false;
  private writer: TableChangeWriter | undefined;
  /** Whether `writer` was given a key index (the next writer then needs one too). */
  private writerIndexed = false;
  /** Rows the last writer detached had written: the next writer's `expectedRows`. */
  private lastRowsWritten = 0;
  /** The writer `detach` took out, for the commit under way (or about to start). */
  private detached: TableChangeWriter | undefined;
  /** While a commit is under way: whether `write` may buffer (see the header), and how. */
  private duringCommit: { writable: boolean; indexLater: boolean } | undefined;
  private readonly keys: KeyIndexLifecycle;
  /** A keyless table's row index, a cascade child's FK indexes (format v3; value-indexes.ts). */
  private readonly values: ValueIndexes;
  private failed: unknown;
  /** 'detached': changes taken out for a commit not begun yet; 'committing': `commit` runs. */
  private phase: 'idle' | 'detached' | 'committing' = 'idle';

  constructor(private readonly options: TableCommitterOptions) {
    if (!options.jobId) throw new FloeError(SUBSYSTEM, 'invalid-argument', 'a checkpoint committer needs a non-empty jobId (floe.job-id)');
    this.jobId = options.jobId;
    this.identifier = options.identifier;
    this.writerOptions = { ...options.writer };
    this.keys = new KeyIndexLifecycle(options.identifier, options.jobId, options);
    this.values = new ValueIndexes(options.identifier, options.jobId, options);
  }

  /** How the key index was obtained (tests and logs: a kept index must not be rebuilt). */
  get keyIndexLoads(): KeyIndexLoads {
    return this.keys.loads;
  }

  /** The mode the next writer writes in (`open`); undefined until the table is opened again after a truncation or `schemaChanged`. */
  get mode(): WriteMode | undefined {
    return this.opened ? this.writerOptions.mode : undefined;
  }

  /** A DDL the pipeline applied changed the table: the next writer opens it again, on its new schema. */
  schemaChanged(): void {
    if (this.bufferedChanges > 0) throw new FloeError(SUBSYSTEM, 'internal', `${identifierToString(this.identifier)} changed schema with changes of the old schema buffered; commit them first`);
    this.opened = false;
  }

  /** Changes buffered for the next commit: written since the last `detach` (or commit). */
  get bufferedChanges(): number {
    return this.writer?.stats.changes ?? 0;
  }

  /** Data files the buffered changes opened (one per partition they touch): what the next commit writes. */
  get bufferedDataFiles(): number {
    return this.writer?.stats.dataFilesOpened ?? 0;
  }

  /** Whether `write` may be called now, while a commit of this table is under way (see the header). */
  get writableDuringCommit(): boolean {
    return this.duringCommit?.writable ?? false;
  }

  /**
   * Takes the buffered changes out for the next `commit` (synchronously: a change written after
   * this goes to the checkpoint after it). `commit` detaches by itself when this was not called.
   */
  detach(): void {
    this.ensureUsable();
    const writer = this.writer;
    this.writer = undefined;
    this.detached = writer;
    if (writer) this.lastRowsWritten = writer.stats.rowsWritten;
    this.phase = 'detached';
    // A writer opened during the commit needs what this one had: an index (that commit's rows in
    // it once it lands), or none. Without a writer (a stamps-only commit) that is not known.
    const indexLater = writer !== undefined && this.writerIndexed && this.table !== undefined && this.keys.indexSurvives(this.table, writer.stats.rowsWritten);
    this.duringCommit = { writable: writer !== undefined && (!this.writerIndexed || indexLater), indexLater };
  }

  /**
   * (Re)loads the table; `options` override the writer defaults, e.g. `{mode: 'append-only'}` for
   * snapshot chunks. Nothing may be buffered. Returns where the job stands in the table.
   */
  async open(options: TableChangeWriterOptions = {}): Promise<CommittedCheckpoint | undefined> {
    this.ensureUsable();
    if (this.bufferedChanges > 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `table ${identifierToString(this.identifier)} has uncommitted changes; commit the checkpoint before re-opening it`);
    }
    const table = await loadCatalogTable(this.options.catalog, this.identifier);
    this.table = table;
    this.writerOptions = { ...this.options.writer, ...options };
    this.opened = true;
    this.writer = undefined;
    // The key index stays: the next writer's `forWriter` keeps it only while it holds the table's
    // head and schema (so a snapshot's index, kept through its chunks' commits, serves the
    // streaming writer the hand-over opens in the same run instead of being built again).
    return lastCommitted(table.metadata, this.jobId);
  }

  /** Where the job stands in the table, read from the table as the catalog has it now. */
  async lastCommitted(): Promise<CommittedCheckpoint | undefined> {
    const table = await loadCatalogTable(this.options.catalog, this.identifier);
    return lastCommitted(table.metadata, this.jobId);
  }

  /**
   * Buffers changes for the next commit (opening the table with the defaults if it was not) — also
   * while a commit is under way, when `writableDuringCommit`.
   */
  async write(changes: RowChange | Iterable<RowChange>): Promise<void> {
    const during = this.phase !== 'idle' ? this.duringCommit : undefined;
    if (!during?.writable || this.failed !== undefined) this.ensureUsable();
    const writer = await this.openWriter(during);
    try {
      if (isRowChange(changes)) await writer.apply(changes);
      else await writer.applyAll(changes);
    } catch (e) {
      // A rejected change leaves the checkpoint incomplete: it must not be committed.
      this.failed = e;
      throw e;
    }
  }

  /** The writer of the next commit, opened if need be (`during`: while a commit runs). An index built off this thread comes later (commitBuffered waits). */
  private async openWriter(during: { indexLater: boolean } | undefined): Promise<TableChangeWriter> {
    const table = this.table ?? (await this.loaded());
    if (this.writer) return this.writer;
    const index: Pick<TableChangeWriterOptions, 'keyIndex' | 'keyIndexLater'> = during ? { keyIndexLater: during.indexLater } : await this.keys.forWriter(table, this.writerOptions.mode === 'append', { later: true });
    // a keyless table's row index is looked up as each delete comes, so it is the index as the
    // last commit left it: a keyless table with one takes no writes while a commit runs (`detach`)
    const rowIndex = during ? undefined : await this.values.forWriter(table, this.writerOptions.mode);
    this.writer = new TableChangeWriter(table, { ...this.writerOptions, ...index, rowIndex, expectedRows: this.lastRowsWritten });
    this.writerIndexed = index.keyIndex !== undefined || index.keyIndexLater === true || rowIndex !== undefined;
    return this.writer;
  }

  /** Between commits: each matching delete written from now on names the rows it removes (value-indexes.ts `reportRemovals`). */
  async reportCascadeRemovals(): Promise<boolean> {
    if (this.phase !== 'idle' || this.failed !== undefined) throw new FloeError(SUBSYSTEM, 'internal', `${identifierToString(this.identifier)}: cascade removals asked for during a commit, or after a failure`);
    const writer = await this.openWriter(undefined);
    if (writer.awaitsKeyIndex) await this.handIndexTo(writer);
    return this.values.reportRemovals(writer, this.table!, this.keys.current?.snapshotId);
  }

  async takeCascadeRemovals(): Promise<RemovedRows | undefined> {
    return this.writer?.takeCascadeRemovals();
  }

  /**
   * Commits the buffered changes (none: a stamps-only snapshot) as one snapshot stamped with
   * `checkpointId` and `progress` (the table's progress, opaque JSON text: `floe.source-offset`).
   * `schema`: a schema change in the same commit, only with nothing buffered (rows of the old schema).
   */
  async commit(checkpointId: bigint, progress: string, schema?: SchemaCommit): Promise<TableCommitOutcome> {
    if (this.phase !== 'detached' || this.failed !== undefined) this.ensureUsable();
    if (typeof checkpointId !== 'bigint' || checkpointId < 0n) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `checkpoint id must be a non-negative bigint, found ${String(checkpointId)}`);
    }
    if (typeof progress !== 'string') throw new FloeError(SUBSYSTEM, 'invalid-argument', `progress must be JSON text, found ${typeof progress}`);
    if (this.phase === 'idle') {
      if (!this.table) await this.loaded();
      this.detach();
    }
    this.phase = 'committing';
    const writer = this.detached;
    this.detached = undefined;
    try {
      if (schema && writer && !writer.isEmpty) throw new FloeError(SUBSYSTEM, 'internal', `${identifierToString(this.identifier)}: a schema change commits with changes buffered under the schema before it; commit them first`);
      const outcome = await this.commitBuffered(writer, checkpointId, progress, schema);
      // (a checkpoint found committed already ends the run: the coordinator raises a conflict)
      // A writer opened during this commit waits for its key index: the index as this commit left
      // it (or rebuilt, when the commit did not land straight on top of the index's snapshot).
      if (outcome.status === 'committed' && this.writer?.awaitsKeyIndex) await this.handIndexTo(this.writer);
      return outcome;
    } catch (e) {
      this.failed = e;
      throw e;
    } finally {
      this.phase = 'idle';
      this.duringCommit = undefined;
    }
  }

  /** Checkpoint `checkpointId` as one snapshot, stamped with `progress`, that empties the table (truncate-commit.ts); nothing may be buffered. */
  async truncate(checkpointId: bigint, progress: string): Promise<TableCommitOutcome & { removedFiles: number }> {
    this.ensureUsable();
    if (this.bufferedChanges > 0) throw new FloeError(SUBSYSTEM, 'internal', `${identifierToString(this.identifier)}: truncating with changes buffered; commit them first`);
    await this.writer?.abort();
    this.writer = undefined;
    this.keys.drop(); // the next writer builds it from the emptied table
    this.values.drop();
    this.opened = false;
    const table = await loadCatalogTable(this.options.catalog, this.identifier);
    const { result, removedDataFiles, removedDeleteFiles } = await commitTruncation(table, this.jobId, checkpointId, progress, { retry: this.options.retry, warn: this.options.warn });
    this.table = result.table;
    const removedFiles = removedDataFiles + removedDeleteFiles;
    return result.status === 'committed' ? { identifier: this.identifier, status: 'committed', snapshot: result.snapshot, removedFiles } : { identifier: this.identifier, status: 'already-committed', removedFiles };
  }

  /** A writer that waits for its key index gets the index of the table as it is now (built, if need be). */
  private async handIndexTo(writer: TableChangeWriter): Promise<void> {
    const { keyIndex } = await this.keys.forWriter(this.table!, this.writerOptions.mode === 'append');
    if (!keyIndex) {
      throw new FloeError(SUBSYSTEM, 'internal', `${identifierToString(this.identifier)}: the changes buffered while the key index was built or checkpoint commits ran need the table's key index, which the table no longer gets (it grew past iceberg.keyIndexMaxRows meanwhile?); restart floe — it resumes from the committed checkpoint`);
    }
    writer.useKeyIndex(keyIndex);
  }

  private async commitBuffered(writer: TableChangeWriter | undefined, checkpointId: bigint, progress: string, schema: SchemaCommit | undefined): Promise<TableCommitOutcome> {
    const outcome = (status: TableCommitOutcome['status'], snapshot?: Snapshot, stats?: WriterStats): TableCommitOutcome => ({ identifier: this.identifier, status, snapshot, stats });

    // Replay check on the table as it is now, before writing anything more.
    let table = await reloadTable(this.table!);
    this.table = table;
    if (isCheckpointCommitted(table.metadata, this.jobId, checkpointId)) {
      await writer?.abort(); // never committed: its files are unreferenced
      this.keys.drop(); // another process committed: the index no longer knows the table
      this.values.drop();
      return outcome('already-committed');
    }

    if (writer) {
      try {
        // its lookups of committed rows waited for the index being built (write): they are made now
        if (writer.awaitsKeyIndex) await this.handIndexTo(writer);
        await this.values.resolveCascades(writer, table, this.keys.current?.snapshotId);
      } catch (e) {
        await writer.abort();
        throw e;
      }
    }

    const pre = await prepareCheckpoint(table, writer, () => {
      this.keys.drop();
      this.values.drop();
    });
    let prepared = pre.prepared;

    const committed = await commitCheckpoint(table, prepared, pre.dvTargets, {
      identifier: this.identifier,
      job: { jobId: this.jobId, checkpointId },
      progress,
      reads: pre.reads,
      addSpec: pre.addSpec,
      schema,
      keys: this.keys,
      rowIndex: this.values.rowIndexAt,
      retry: this.options.retry,
      warn: this.options.warn,
      replanned: (t) => (this.table = t),
    });
    if (committed === 'already-committed') {
      this.values.drop();
      return outcome('already-committed');
    }
    ({ table, prepared } = committed);
    const result = committed.result;
    this.table = result.table;
    await this.keys.afterCommit(result, prepared);
    this.values.afterCommit(result, prepared);
    if (result.status === 'skipped') {
      // Skipped before any attempt was sent: our files were never referenced. After attempts, keep
      // them (an attempt's outcome may have been unknown).
      if (result.attempts === 0 && prepared) await deleteUnreferenced(table, prepared.writtenPaths, this.options.warn);
      return outcome('already-committed');
    }
    return outcome('committed', result.snapshot, prepared?.stats);
  }

  /**
   * floe's own maintenance committed to `table` right after a checkpoint (nothing in flight);
   * `compaction`: what it moved. The key index follows it (key-index-lifecycle.ts `follow`).
   */
  async followMaintenance(table: CatalogTable, compaction?: CompactionCommit): Promise<'followed' | 'dropped' | 'none'> {
    this.ensureUsable();
    if (!this.table || this.bufferedChanges > 0) return 'none'; // changes buffered: validated at commit as any
    this.table = table;
    this.values.follow(table, compaction);
    return this.keys.follow(table, compaction);
  }

  /** Whether a compaction prepared beside this table's commits can land (its writer keeps a key index). */
  get landsCompactions(): boolean { return this.keys.current !== undefined; }

  /** Lands a compaction prepared beside this table's commits (compaction-landing.ts); the key index follows it. */
  async landCompaction(prepared: PreparedCompaction, loaded: CatalogTable): Promise<LandedCompaction> {
    this.ensureUsable();
    const idle = this.table !== undefined && this.bufferedChanges === 0;
    const landed = await landCompaction(this.table ?? loaded, prepared, idle ? this.keys.current : undefined, this.keys.indexSchemaId);
    if (landed.commit) {
      this.table = landed.table;
      this.values.follow(landed.table, landed.commit);
      await this.keys.follow(landed.table, landed.commit, landed.moved);
    }
    return landed;
  }

  /**
   * At a clean stop, nothing buffered: saves a memory key index that holds the table as committed to
   * the state directory, for the next start (key-index-lifecycle.ts `save`). Whether it was saved.
   */
  async saveKeyIndex(): Promise<boolean> {
    if (!this.table || this.bufferedChanges > 0 || this.phase !== 'idle' || this.failed !== undefined) return false;
    return this.keys.save(this.table);
  }

  /** Closes the key index (a disk one stays on disk for the next start). */
  close(): void {
    this.keys.drop();
    this.values.drop();
  }

  /** Drops the buffered changes and the files written for them (nothing was committed). */
  async abort(): Promise<void> {
    const w = this.writer;
    // taken out for a commit that never began (another table's commit failed first)
    const detached = this.detached;
    this.writer = undefined;
    this.detached = undefined;
    await w?.abort();
    await detached?.abort();
  }

  private async loaded(): Promise<CatalogTable> {
    await this.open(this.writerOptions);
    return this.table!;
  }

  private ensureUsable(): void {
    if (this.failed !== undefined) {
      throw new FloeError(SUBSYSTEM, 'internal', `this checkpoint committer failed earlier (${errorMessage(this.failed)}); start a new one and resume from lastCommitted`, { cause: this.failed });
    }
    if (this.phase !== 'idle') throw new FloeError(SUBSYSTEM, 'internal', `checkpoint committer used while a checkpoint commit is ${this.phase === 'committing' ? 'running' : 'about to start (detached)'}; await commit first`);
  }
}

function isRowChange(x: RowChange | Iterable<RowChange>): x is RowChange {
  return typeof (x as RowChange).op === 'string';
}

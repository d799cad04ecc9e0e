/**
 * Checkpointed, replay-safe commits of row changes to many tables (docs/design.md §4; flink-cdc
 * `IcebergWriter` + `IcebergCommitter`; docs/seeds/seed-003.txt §4-1): changes are buffered per table by a
 * `TableChangeWriter`, and `commitCheckpoint(id, offset)` turns each table's buffer into ONE snapshot
 * stamped with the job id, the checkpoint id and the source offset (checkpoint-stamps.ts).
 *
 * Replay safety — a checkpoint is never committed twice to a table:
 * - before writing the checkpoint's delete files, the table is reloaded and its ancestry read; if
 *   this job already committed this checkpoint id or a later one, the buffered changes are dropped
 *   (their files were never referenced, so they are deleted);
 * - the commit's `validate` callback repeats the check after every reload (conflict, unknown outcome),
 *   and the commit is skipped if another process of the job got there first;
 * - a commit whose outcome is unknown is resolved by reloading and looking for the checkpoint id; if
 *   it is not there the error is raised and NO file is deleted (one of them may yet be referenced).
 *
 * Contract with the caller (the pipeline):
 * - checkpoint ids increase; after a restart they continue above `lastCommitted` of every table, or a
 *   re-used id must carry for each table exactly the changes it carried before (a deterministic cut).
 *   A skipped checkpoint's changes are dropped for that table: that is only right because the table
 *   already holds them (delivery note: re-using an id for DIFFERENT changes would lose them).
 * - after `commitCheckpoint` throws, the instance is unusable: restart as after a crash (a fresh
 *   instance, resuming each table from `lastCommitted`). Tables committed before the failure keep
 *   their commit; the others did not get one.
 *
 * Tables without changes in a checkpoint get an empty snapshot (only the stamps) every
 * `emptyCommitInterval` checkpoints (default 10; 0 = never), or at once with `{commitEmpty: true}`.
 * Without it a quiet table's recorded offset would never advance and a restart would have to read the
 * binlog from far back — possibly from a file the server has purged.
 */
import type { Catalog, TableIdentifier } from '../metadata/catalog.js';
import { identifierToString } from '../metadata/catalog.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import type { Snapshot } from '../spec/table-metadata.js';
import { currentSnapshot, snapshotById } from '../spec/snapshot-ids.js';
import { commitRowDelta, ensureUnpartitionedSpec, loadCatalogTable, reloadTable, type CatalogTable, type RetryPolicy } from '../table/index.js';
import { checkpointProperties, checkpointSummary, isCheckpointCommitted, lastCommitted, type CommittedCheckpoint } from './checkpoint-stamps.js';
import type { RowChange } from './row-change.js';
import { TableChangeWriter, type PreparedChanges, type TableChangeWriterOptions, type WriterStats } from './table-change-writer.js';
import { isDvTargetConflict, validateTargetsUntouched } from './committed-dv-targets.js';
import { findExistingDeletes } from './existing-deletes.js';
import { join } from 'node:path';
import { failpoint } from '../../util/failpoints.js';
import type { Schema } from '../spec/schema.js';
import { buildKeyIndex, indexStillMatches, keyReader, type KeyIndex } from './key-index.js';
import type { KeyId } from './table-key.js';
import type { DataFile } from '../spec/data-file.js';
import type { CompactionCommit } from '../maintenance/rewrite-data-files.js';
import { DiskKeyIndex, openDiskKeyIndex, type DiskIndexIdentity } from './key-index-sqlite.js';
import { TableKey } from './table-key.js';

const SUBSYSTEM = 'iceberg.writer';
/** Times one checkpoint's deletion vectors are located again after other writers' rewrites. */
const MAX_RELOCATIONS = 10;

export interface CheckpointCommitterOptions {
  catalog: Catalog;
  /** The pipeline's stable identity (`floe.job-id`). */
  jobId: string;
  /** Commit a stamps-only snapshot for a table without changes every N checkpoints (default 10; 0 = never). */
  emptyCommitInterval?: number;
  /** Defaults for every table's writer (mode per table via `openTable`). */
  writer?: TableChangeWriterOptions;
  retry?: Partial<RetryPolicy>;
  warn?: (message: string) => void;
  /**
   * How upserts into format-v3 keyed tables delete the rows they replace: 'deletion-vectors'
   * (default) keeps a key index per table (key-index.ts) and writes DVs only, never an equality
   * delete; 'equality' writes equality deletes as format v2 must.
   */
  upsertDeletes?: 'deletion-vectors' | 'equality';
  /**
   * The ceiling of the key index: a table with more rows than this (the current snapshot's
   * `total-records`) uses equality deletes instead, with a warning. Default 10 million without a
   * `keyIndex.stateDir` (the index then lives in memory only, about 100 bytes per live row), 1
   * billion with one (beyond `memoryMaxRows` it lives on disk).
   */
  keyIndexMaxRows?: number;
  keyIndex?: {
    /**
     * Where disk-backed indexes persist: `<stateDir>/<job id>/<table uuid>.keyindex.sqlite`.
     * Without it every index lives in memory and is rebuilt from the lake at each start.
     */
    stateDir?: string;
    /** With a state dir: a table's index stays in memory up to this many rows, on disk beyond (default 2 million). */
    memoryMaxRows?: number;
  };
  /** Progress of index builds and replays. */
  info?: (message: string) => void;
}

type TableCommitStatus =
  /** A snapshot with this checkpoint was committed. */
  | 'committed'
  /** The table already held this checkpoint (or a later one) of this job; buffered changes were dropped. */
  | 'already-committed'
  /** No changes and no empty commit due. */
  | 'no-changes';

export interface TableCommitOutcome {
  identifier: TableIdentifier;
  status: TableCommitStatus;
  /** The snapshot committed (or found, for an unknown outcome that landed). */
  snapshot?: Snapshot;
  stats?: WriterStats;
}

export interface CheckpointOutcome {
  checkpointId: bigint;
  tables: TableCommitOutcome[];
}

interface TableState {
  identifier: TableIdentifier;
  table: CatalogTable;
  options: TableChangeWriterOptions;
  writer: TableChangeWriter | undefined;
  /** Checkpoints since this table's last commit. */
  idle: number;
  /** Deletion-vector upserts: the table's key index (undefined until needed, or after a doubt). */
  index?: KeyIndex;
  /** The schema the index keys were encoded with (a schema change rebuilds it). */
  indexSchemaId?: number;
  indexTooLargeWarned?: boolean;
}

export class CheckpointCommitter {
  readonly jobId: string;
  private readonly catalog: Catalog;
  private readonly tables = new Map<string, TableState>();
  private readonly emptyInterval: number;
  private failed: unknown;
  private busy = false;
  /** How each key index was obtained (tests and logs: a kept index must not be rebuilt). */
  readonly keyIndexLoads = { built: 0, builtOnDisk: 0, reused: 0, replayed: 0, spilled: 0, followed: 0 };

  constructor(private readonly options: CheckpointCommitterOptions) {
    if (!options.jobId) throw new FloeError(SUBSYSTEM, 'invalid-argument', 'a checkpoint committer needs a non-empty jobId (floe.job-id)');
    this.jobId = options.jobId;
    this.catalog = options.catalog;
    this.emptyInterval = Math.max(0, options.emptyCommitInterval ?? 10);
  }

  /**
   * Loads a table and registers it with this committer (writer options override the defaults, e.g.
   * `{mode: 'append-only'}` for snapshot chunks). Returns where the job stands in the table.
   */
  async openTable(identifier: TableIdentifier, options: TableChangeWriterOptions = {}): Promise<CommittedCheckpoint | undefined> {
    this.ensureUsable();
    const key = identifierToString(identifier);
    const existing = this.tables.get(key);
    if (existing?.writer && !existing.writer.isEmpty) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `table ${key} has uncommitted changes; commit the checkpoint before re-opening it`);
    }
    const table = await loadCatalogTable(this.catalog, identifier);
    this.tables.set(key, { identifier, table, options: { ...this.options.writer, ...options }, writer: undefined, idle: existing?.idle ?? 0 });
    return lastCommitted(table.metadata, this.jobId);
  }

  /** Where the job stands in a table, read from the table as the catalog has it now. */
  async lastCommitted(identifier: TableIdentifier): Promise<CommittedCheckpoint | undefined> {
    const table = await loadCatalogTable(this.catalog, identifier);
    return lastCommitted(table.metadata, this.jobId);
  }

  /** Buffers changes of one table for the current checkpoint. */
  async write(identifier: TableIdentifier, changes: RowChange | Iterable<RowChange>): Promise<void> {
    this.ensureUsable();
    const key = identifierToString(identifier);
    let state = this.tables.get(key);
    if (!state) {
      await this.openTable(identifier);
      state = this.tables.get(key)!;
    }
    state.writer ??= new TableChangeWriter(state.table, { ...state.options, ...(await this.keyIndexOption(state)) });
    try {
      if (isRowChange(changes)) await state.writer.apply(changes);
      else await state.writer.applyAll(changes);
    } catch (e) {
      // A rejected change leaves the checkpoint incomplete: it must not be committed.
      this.failed = e;
      throw e;
    }
  }

  /**
   * Commits every table's buffered changes as one snapshot per table, stamped with `checkpointId` and
   * `sourceOffset` (opaque JSON text). Tables are committed one after another.
   */
  async commitCheckpoint(checkpointId: bigint, sourceOffset: string, options: { commitEmpty?: boolean } = {}): Promise<CheckpointOutcome> {
    this.ensureUsable();
    if (typeof checkpointId !== 'bigint' || checkpointId < 0n) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `checkpoint id must be a non-negative bigint, found ${String(checkpointId)}`);
    }
    if (typeof sourceOffset !== 'string') throw new FloeError(SUBSYSTEM, 'invalid-argument', `source offset must be JSON text, found ${typeof sourceOffset}`);
    this.busy = true;
    const outcomes: TableCommitOutcome[] = [];
    try {
      for (const state of this.tables.values()) outcomes.push(await this.commitTable(state, checkpointId, sourceOffset, options.commitEmpty ?? false));
    } catch (e) {
      this.failed = e;
      throw e;
    } finally {
      this.busy = false;
    }
    return { checkpointId, tables: outcomes };
  }

  private async commitTable(state: TableState, checkpointId: bigint, sourceOffset: string, commitEmpty: boolean): Promise<TableCommitOutcome> {
    const writer = state.writer;
    state.writer = undefined;
    const hasChanges = writer !== undefined && !writer.isEmpty;
    if (!hasChanges && !commitEmpty && (this.emptyInterval === 0 || state.idle + 1 < this.emptyInterval)) {
      state.idle++;
      return { identifier: state.identifier, status: 'no-changes' };
    }

    // Replay check on the table as it is now, before writing anything more.
    let table = await reloadTable(state.table);
    state.table = table;
    if (isCheckpointCommitted(table.metadata, this.jobId, checkpointId)) {
      await writer?.abort(); // never committed: its files are unreferenced
      this.dropIndex(state); // another process committed: the index no longer knows the table
      state.idle = 0;
      return { identifier: state.identifier, status: 'already-committed' };
    }

    let equalityDeleteSpecId: number | undefined;
    if (writer?.needsUnpartitionedSpec) {
      try {
        const ensured = await ensureUnpartitionedSpec(table, this.options.retry);
        table = ensured.table;
        state.table = table;
        equalityDeleteSpecId = ensured.spec.specId;
      } catch (e) {
        await writer.abort();
        throw e;
      }
    }
    let dvTargets = new Set(writer?.committedTargetPaths() ?? []);
    let indexSnapshotId = state.index?.snapshotId;
    let prepared: PreparedChanges | undefined;
    if (writer && hasChanges) {
      try {
        // the deletes of these files now, to merge into the new DVs (one DV per data file)
        const existingDeletes = dvTargets.size > 0 ? await findExistingDeletes(table, dvTargets) : undefined;
        prepared = await writer.prepare({ equalityDeleteSpecId, existingDeletes });
      } catch (e) {
        this.dropIndex(state);
        await writer.abort();
        throw e;
      }
    }
    if (writer && !hasChanges) await writer.abort();

    let result;
    for (let relocations = 0; ; relocations++) {
      const previous = lastCommitted(table.metadata, this.jobId);
      const maxCommitted = previous && previous.checkpointId > checkpointId ? previous.checkpointId : checkpointId;
      const summary = checkpointSummary(this.jobId, checkpointId, maxCommitted, sourceOffset);
      const targets = dvTargets;
      const planned = indexSnapshotId;
      try {
        result = await commitRowDelta(
          table,
          { dataFiles: prepared?.dataFiles ?? [], deleteFiles: prepared?.deleteFiles ?? [], removedFiles: prepared?.removedDeleteFiles ?? [] },
          {
            summary,
            properties: (snapshotId) => checkpointProperties(this.jobId, checkpointId, maxCommitted, sourceOffset, snapshotId),
            // asked before the first attempt too (snapshot-producer.ts), on the table as loaded here
            validate: async (current) => {
              if (isCheckpointCommitted(current, this.jobId, checkpointId)) return 'skip';
              // DVs on files committed earlier: no other writer may have removed them since the index
              await validateTargetsUntouched(table.io, current, planned, targets);
              return 'proceed';
            },
            retry: this.options.retry,
            warn: this.options.warn,
          },
        );
        break;
      } catch (e) {
        if (isDvTargetConflict(e) && prepared?.relocate && relocations < MAX_RELOCATIONS) {
          // Another writer rewrote (or gave a DV to) a data file whose rows this checkpoint deletes —
          // a compaction running beside floe. Nothing of this attempt landed (a definite conflict), so
          // the deletes are located again in the table as it is now and the commit planned anew.
          this.options.warn?.(`${identifierToString(state.identifier)}: ${errorMessage(e)}; locating the checkpoint's deletes again`);
          const relocated = await this.relocate(state, prepared, checkpointId);
          if (relocated === 'already-committed') {
            await deleteQuietly(table, prepared.writtenPaths, this.options.warn);
            state.idle = 0;
            return { identifier: state.identifier, status: 'already-committed' };
          }
          table = state.table;
          prepared = relocated;
          dvTargets = new Set(relocated.committedTargets ?? []);
          indexSnapshotId = state.index?.snapshotId;
          continue;
        }
        this.dropIndex(state); // whatever happened, the index no longer knows the table's state
        // a DV-target conflict is a definite refusal (an unknown outcome before it would have made
        // it one): nothing references this checkpoint's files
        if (isDvTargetConflict(e) && prepared) await deleteQuietly(table, prepared.writtenPaths, this.options.warn);
        if (isFloeError(e, 'commit-state-unknown')) {
          // Resolve by looking for the checkpoint in the table; keep every file either way.
          const now = await reloadTable(state.table);
          state.table = now;
          const found = lastCommitted(now.metadata, this.jobId);
          if (found && found.checkpointId >= checkpointId) {
            state.idle = 0;
            return { identifier: state.identifier, status: 'committed', snapshot: snapshotById(now.metadata, found.snapshotId), stats: prepared?.stats };
          }
          throw new FloeError(SUBSYSTEM, 'commit-state-unknown', `checkpoint ${checkpointId} of job ${this.jobId} to ${identifierToString(state.identifier)}: the commit's outcome is unknown and the table does not show it (yet); its files were kept. Restart and resume from lastCommitted: ${errorMessage(e)}`, { cause: e });
        }
        // Delivery note: the files stay as orphans — after a failed attempt a catalog may still
        // reference them if its error hid a landed commit; deleting them is never worth that risk.
        throw e;
      }
    }
    state.table = result.table;
    state.idle = 0;
    if (state.index) {
      // The index follows the commit that landed — when the commit went straight on top of the
      // snapshot the index matches. A commit retried on top of another writer's snapshot (one that
      // did not touch this checkpoint's targets, e.g. a rewrite of other files) leaves the index
      // behind that writer's changes, and a skipped one in doubt: rebuilt.
      // Manifest rewrites in between (floe's maintenance) move no row: the index still matches.
      if (result.status === 'committed' && indexStillMatches(result.table.metadata, state.index.snapshotId, result.snapshot.parentSnapshotId)) {
        // a kill here leaves a disk index stamped with the parent: the next start replays this commit
        await failpoint('key-index-before-apply');
        state.index.apply(prepared?.indexDelta ?? { set: [], deleted: [] }, result.snapshot.snapshotId, prepared);
        await this.spillIfLarge(state);
      } else this.dropIndex(state);
    }
    if (result.status === 'skipped') {
      // Skipped before any attempt was sent: our files were never referenced. After attempts, keep
      // them (an attempt's outcome may have been unknown).
      if (result.attempts === 0 && prepared) await deleteQuietly(table, prepared.writtenPaths, this.options.warn);
      return { identifier: state.identifier, status: 'already-committed' };
    }
    return { identifier: state.identifier, status: 'committed', snapshot: result.snapshot, stats: prepared?.stats };
  }

  /**
   * floe's own maintenance committed to a table between two checkpoints (`floe run` runs it right
   * after a checkpoint, so nothing of this committer's is in flight): `table` is the table as that
   * commit left it, `compaction` what a compaction moved (maintenance/rewrite-data-files.ts). The key
   * index is brought to the new snapshot — for a compaction by reading the key columns of just the
   * new files (no delete applies to them: they have the commit's sequence number) — so the next
   * checkpoint writes its DVs against the new files directly, instead of taking the compaction for
   * another writer's (committed-dv-targets.ts) and locating its deletes again. Only when the index
   * matched the snapshot the commit went on top of (nothing but manifest rewrites between): a
   * commit of another writer in between is left to the usual detection (the index is rebuilt).
   * Returns what became of the index.
   */
  async followMaintenance(identifier: TableIdentifier, table: CatalogTable, compaction?: CompactionCommit): Promise<'followed' | 'dropped' | 'none'> {
    this.ensureUsable();
    const state = this.tables.get(identifierToString(identifier));
    if (!state || (state.writer && !state.writer.isEmpty)) return 'none'; // changes buffered: validated at commit as any
    state.table = table;
    const index = state.index;
    if (!index) return 'none';
    const m = table.metadata;
    const head = currentSnapshot(m)?.snapshotId;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    const base = compaction ? compaction.parentSnapshotId : head;
    if (!schema || state.indexSchemaId !== m.currentSchemaId || !indexStillMatches(m, index.snapshotId, base)) {
      this.dropIndex(state);
      return 'dropped';
    }
    if (!compaction) {
      if (index.snapshotId !== head) index.apply({ set: [], deleted: [] }, head); // a manifest rewrite moves no row
      return 'followed';
    }
    const removed = new Set(compaction.removedDataFiles.map((f) => f.filePath));
    const sequenceNumber = snapshotById(m, compaction.snapshotId)?.sequenceNumber ?? 0n;
    const reader = keyReader(table, TableKey.identifier(schema), schema);
    const moved: [KeyId, DataFile, number][] = [];
    let consistent = true;
    try {
      for (const file of compaction.addedDataFiles) {
        await reader.live({ file, sequenceNumber, deletes: { equality: [], position: [], dv: undefined } }, (k, pos) => {
          // every row of a new file was a live row of a removed one, indexed there (and only once)
          const at = index.get(k);
          if (!at || !removed.has(at.file.filePath)) consistent = false;
          moved.push([k, file, pos]);
        });
      }
    } catch (e) {
      // the index still matches the snapshot before the compaction: the next checkpoint rebuilds it
      this.options.warn?.(`${identifierToString(state.identifier)}: could not read the key columns of the files floe's compaction wrote (${errorMessage(e)}); the key index is rebuilt from the lake`);
      this.dropIndex(state);
      return 'dropped';
    }
    if (!consistent) {
      this.options.warn?.(`${identifierToString(state.identifier)}: the key index did not hold the rows floe's compaction moved as expected; rebuilding it from the lake`);
      this.dropIndex(state);
      return 'dropped';
    }
    await failpoint('key-index-before-follow-compaction');
    index.rewrite(moved, [...removed], compaction.addedDataFiles, compaction.snapshotId);
    this.keyIndexLoads.followed++;
    return 'followed';
  }

  /**
   * A deletion-vector checkpoint that lost its targets: the table reloaded, the key index rebuilt
   * from it, and the deletes of committed rows located through it anew (new DV files; the replaced
   * ones were never committed and are deleted).
   */
  private async relocate(state: TableState, prepared: PreparedChanges, checkpointId: bigint): Promise<PreparedChanges | 'already-committed'> {
    const table = await reloadTable(state.table);
    state.table = table;
    this.dropIndex(state);
    if (isCheckpointCommitted(table.metadata, this.jobId, checkpointId)) return 'already-committed';
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    if (!schema || m.currentSchemaId !== state.indexSchemaId) {
      throw new FloeError(SUBSYSTEM, 'commit-conflict', `${identifierToString(state.identifier)}: the schema changed while a checkpoint was committed; its deletes cannot be located again with the same keys. Restart and resume from lastCommitted`, { retryable: false });
    }
    const index = await this.loadIndex(state, schema);
    const relocated = await prepared.relocate!(index, (targets) => findExistingDeletes({ io: table.io, metadata: m }, targets));
    await deleteQuietly(table, relocated.replacedPaths, this.options.warn);
    return relocated;
  }

  /**
   * The key index for a writer of this table, when its upserts use deletion vectors: kept across
   * checkpoints while the table's head is the snapshot it matches (floe's own last commit), rebuilt
   * from the table otherwise (first use, a restart, another writer's commit).
   */
  private async keyIndexOption(state: TableState): Promise<{ keyIndex?: KeyIndex }> {
    const m = state.table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    const mode = state.options.mode ?? (schema && schema.identifierFieldIds.length > 0 ? 'upsert' : 'append');
    if ((this.options.upsertDeletes ?? 'deletion-vectors') !== 'deletion-vectors' || m.formatVersion < 3 || mode === 'append' || !schema || schema.identifierFieldIds.length === 0) {
      this.dropIndex(state);
      return {};
    }
    const head = currentSnapshot(m)?.snapshotId;
    const records = Number(currentSnapshot(m)?.summary['total-records'] ?? '0');
    const limit = this.options.keyIndexMaxRows ?? (this.options.keyIndex?.stateDir ? 1_000_000_000 : 10_000_000);
    if (records > limit) {
      // Delivery note: correctness is the same; the table gets equality deletes (slower reads,
      // unreadable by PyIceberg) until the index can live on disk.
      if (!state.indexTooLargeWarned) this.options.warn?.(`${identifierToString(state.identifier)} holds ${records} records, more than iceberg.keyIndexMaxRows (${limit}) for a key index: its upserts write equality deletes instead of deletion vectors`);
      state.indexTooLargeWarned = true;
      this.dropIndex(state);
      return {};
    }
    // after a manifest rewrite (floe's maintenance) the index of the snapshot before it still holds
    // (an empty delta re-stamps it: on disk, too)
    if (state.index && state.index.snapshotId !== head && indexStillMatches(m, state.index.snapshotId, head)) state.index.apply({ set: [], deleted: [] }, head);
    if (!state.index || state.index.snapshotId !== head || state.indexSchemaId !== m.currentSchemaId) await this.loadIndex(state, schema);
    return { keyIndex: state.index };
  }

  private diskPath(state: TableState): string | undefined {
    const dir = this.options.keyIndex?.stateDir;
    return dir ? join(dir, this.jobId, `${state.table.metadata.tableUuid}.keyindex.sqlite`) : undefined;
  }

  private memoryMaxRows(): number {
    return this.options.keyIndex?.memoryMaxRows ?? 2_000_000;
  }

  private dropIndex(state: TableState): void {
    state.index?.close();
    state.index = undefined;
  }

  /**
   * The index of the table as `state.table` has it now: the persisted one when it still matches
   * (replaying what was committed since its stamp), else built from the lake — on disk when the
   * table has more rows than the memory budget.
   */
  private async loadIndex(state: TableState, schema: Schema): Promise<KeyIndex> {
    this.dropIndex(state);
    const table = state.table;
    const m = table.metadata;
    const name = identifierToString(state.identifier);
    const key = TableKey.identifier(schema);
    const identity = diskIdentity(m.tableUuid, key, schema);
    const path = this.diskPath(state);
    let index: KeyIndex | undefined;
    if (path) {
      const opened = await openDiskKeyIndex(path, table, key, identity);
      if (opened.index) {
        index = opened.index;
        this.keyIndexLoads[opened.how]++;
        if (opened.how === 'replayed') this.options.info?.(`${name}: key index ${path} caught up with snapshot ${String(index.snapshotId)} (${opened.replayedFiles} data file(s) read)`);
      } else if (!opened.missing) this.options.warn?.(`${name}: key index ${path} cannot be used: ${opened.why}; rebuilding it from the lake`);
    }
    if (!index) {
      const records = Number(currentSnapshot(m)?.summary['total-records'] ?? '0');
      const started = Date.now();
      let lastReport = started;
      const progress = (done: number, total: number, rows: number): void => {
        const now = Date.now();
        if (done === total || now - lastReport >= 10_000) {
          lastReport = now;
          this.options.info?.(`${name}: building the key index from the lake: ${done}/${total} data files, ${rows} rows, ${((now - started) / 1000).toFixed(1)} s`);
        }
      };
      if (path && records > this.memoryMaxRows()) {
        index = await DiskKeyIndex.build(path, identity, currentSnapshot(m)?.snapshotId, async (set, fileRead) => {
          await buildKeyIndex(table, key, { into: { set, fileRead }, progress });
        });
        this.keyIndexLoads.builtOnDisk++;
      } else {
        index = await buildKeyIndex(table, key, { progress });
        this.keyIndexLoads.built++;
      }
    }
    state.index = index;
    state.indexSchemaId = m.currentSchemaId;
    return index;
  }

  /** A memory index grown past the budget moves to disk (stamped with the snapshot it matches). */
  private async spillIfLarge(state: TableState): Promise<void> {
    const mem = state.index;
    const path = this.diskPath(state);
    if (!mem || mem.kind !== 'memory' || !path || mem.size <= this.memoryMaxRows()) return;
    const m = state.table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === state.indexSchemaId);
    if (!schema) return;
    const identity = diskIdentity(m.tableUuid, TableKey.identifier(schema), schema);
    state.index = await DiskKeyIndex.build(path, identity, mem.snapshotId, async (set) => {
      for (const [k, file, pos] of mem.entries()) set(k, file, pos);
    });
    mem.close();
    this.keyIndexLoads.spilled++;
    this.options.info?.(`${identifierToString(state.identifier)}: key index of ${mem.size} rows moved to disk (${path})`);
  }

  /** Closes the key indexes (disk ones stay on disk for the next start). */
  close(): void {
    for (const state of this.tables.values()) this.dropIndex(state);
  }

  /** Drops every buffered change and the files written for them (nothing was committed). */
  async abort(): Promise<void> {
    for (const state of this.tables.values()) {
      const w = state.writer;
      state.writer = undefined;
      await w?.abort();
    }
  }

  private ensureUsable(): void {
    if (this.busy) throw new FloeError(SUBSYSTEM, 'internal', 'checkpoint committer used while a checkpoint commit is running; await commitCheckpoint first');
    if (this.failed !== undefined) {
      throw new FloeError(SUBSYSTEM, 'internal', `this checkpoint committer failed earlier (${errorMessage(this.failed)}); start a new one and resume each table from lastCommitted`, { cause: this.failed });
    }
  }
}

function diskIdentity(tableUuid: string, key: TableKey, schema: Schema): DiskIndexIdentity {
  return { tableUuid, keyFieldIds: key.fieldIds, keyTypes: JSON.stringify(key.types), schemaId: schema.schemaId };
}

function isRowChange(x: RowChange | Iterable<RowChange>): x is RowChange {
  return typeof (x as RowChange).op === 'string';
}

async function deleteQuietly(table: CatalogTable, paths: readonly string[], warn?: (message: string) => void): Promise<void> {
  for (const p of paths) {
    try {
      await table.io.delete(p);
    } catch (e) {
      (warn ?? ((m: string) => process.emitWarning(m, { code: 'FLOE_WRITER' })))(`could not delete unreferenced file ${p}: ${errorMessage(e)}`);
    }
  }
}

/**
 * The upsert task writer of one table for one checkpoint (Java `BaseTaskWriter.BaseEqualityDeltaWriter`,
 * Flink `BaseDeltaTaskWriter`, iceberg-rust `DeltaWriter`; docs/iceberg-writer-checklist.md §4.3;
 * docs/design.md §4; docs/seeds/seed-003.txt §4-1): row changes in, Parquet data files,
 * equality-delete files and position deletes / deletion vectors out, ready for ONE row-delta commit.
 *
 * Made like iceberg-rust's `DeltaWriter`: this writer builds the sinks (change-sinks.ts) — the data
 * sink (partitioned-data-sink.ts: one rolling file writer per partition), the position-delete / DV
 * sink (position-delete-sink.ts) and the equality-delete sink (equality-delete-sink.ts) — and
 * injects them into the writer of its mode, which decides what each change writes:
 * - `upsert` (keyed tables) and `append-only` (initial snapshot rows into keys that cannot exist yet,
 *   docs/design.md §2.3): keyed-change-writer.ts. In `append-only` an insert writes no equality
 *   delete; a key delivered twice within the checkpoint is still de-duplicated by position (the
 *   later row wins), so a chunk re-read inside one checkpoint does not duplicate rows; updates and
 *   deletes of keys not written in this checkpoint still write equality deletes (correctness before
 *   the mode's assumption). Delivery note: rows re-delivered in a LATER checkpoint under this mode
 *   are duplicated; the caller must only use it for rows that are not in the table (chunks not yet
 *   committed — progress is read back from the table, docs/design.md §2).
 * - `append` (tables without a primary key): keyless-change-writer.ts.
 * `delete-matching` changes (cascade child deletes, delete-matching.ts) apply in every mode. At
 * `prepare` the sinks are finished into one row delta (prepared-changes.ts).
 *
 * Partitioned tables: equality deletes are GLOBAL — written with an unpartitioned spec that is present
 * in the table's specs (spec "Scan Planning": a delete with an unpartitioned spec applies to every
 * partition). So an UPDATE that moves a row to another partition (or a table whose key does not
 * contain the partition source columns) still deletes the old row. The cost is that every equality
 * delete is checked against every older data file, as Java does for global deletes. Position deletes
 * and DVs go with their data file's partition.
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { DataFile } from '../spec/data-file.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { LocationProvider } from '../parquet/rolling-writer.js';
import { isUnpartitioned, type PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { Partitioner } from './partitioner.js';
import type { DataFileHandle } from './positional-data-writer.js';
import { EqualityDeleteSink, equalityDeleteSpecId } from './equality-delete-sink.js';
import type { RowChange } from './row-change.js';
import { MatchingDeletes } from './delete-matching.js';
import { ChildCascades } from './child-cascades.js';
import { CarriedColumns, type RemovedRows } from './cascade-removals.js';
import { TableKey } from '../keyindex/table-key.js';
import { NO_KEY_MOVES, type KeyIndex } from '../keyindex/key-index.js';
import type { ValueIndex } from '../keyindex/value-index.js';
import { parquetWriterOptions } from './parquet-codec.js';
import { tableLocations, targetFileSizes } from './table-locations.js';
import type { ChangeSinks, ModeWriter } from './change-sinks.js';
import { PartitionedDataSink } from './partitioned-data-sink.js';
import { PositionDeleteSink } from './position-delete-sink.js';
import { KeyedChangeWriter } from './keyed-change-writer.js';
import { KeylessChangeWriter } from './keyless-change-writer.js';
import { withRelocation, type PreparedChanges, type PrepareOptions } from './prepared-changes.js';
import type { WriterStats } from './writer-stats.js';

export type { PreparedChanges, PrepareOptions } from './prepared-changes.js';
export type { WriterStats } from './writer-stats.js';

const SUBSYSTEM = 'iceberg.writer';
const DEFAULT_ENCODE_AFTER_BYTES = 32 * 1024 * 1024;
const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;

export type WriteMode = 'upsert' | 'append-only' | 'append';

export interface WriterTable {
  metadata: TableMetadata;
  io: FileIO;
}

export interface TableChangeWriterOptions {
  /** Default: 'upsert' when the schema has identifier fields, else 'append'. */
  mode?: WriteMode;
  /** Default: table property `write.target-file-size-bytes`, else 128 MiB. */
  targetFileSizeBytes?: number;
  /** Default: table property `write.delete.target-file-size-bytes`, else 64 MiB. */
  deleteTargetFileSizeBytes?: number;
  /** Rows between file-size checks (default 1000). */
  sizeCheckRows?: number;
  /**
   * Partitioned tables: Arrow bytes the open partition files may buffer together before the larger
   * ones hand their rows to the encoder, so that encoding runs alongside the source (default 32 MiB).
   */
  encodeAfterBytes?: number;
  /**
   * Partitioned tables: the most Arrow bytes the open partition files may buffer together; beyond it
   * the largest files are finished early (default 256 MiB). The memory bound of a checkpoint that
   * touches many partitions, each with too few rows to be worth encoding on its own.
   */
  maxBufferedBytes?: number;
  parquet?: ParquetWriterOptions;
  /** Where files go; default `write.data.path` or `<location>/data`. */
  locations?: LocationProvider;
  /** Unique per writer; default a random UUID. */
  fileNameTag?: string;
  /**
   * Field-name sets that `delete-matching` changes may name (the FK columns of cascade child
   * tables): rows written in the checkpoint are indexed by them (delete-matching.ts).
   */
  matchFields?: readonly (readonly string[])[];
  /** Columns other tables' cascades reference: the rows matching deletes remove report them (cascade-removals.ts). */
  carryFields?: readonly string[];
  /**
   * Deletion-vector upserts (format v3, keyed tables): the index of the table's live rows as of the
   * snapshot this checkpoint builds on. A row committed earlier is then removed by a DV entry on its
   * data file instead of an equality delete; no equality delete is written at all. The writer never
   * changes the index: `PreparedChanges.indexDelta` says how the commit changes it.
   */
  keyIndex?: KeyIndex;
  /**
   * Rows this checkpoint is expected to write (its committer passes the previous checkpoint's): the
   * keyed writer's map of this checkpoint's keys is sized for them at once — grown by doubling, it
   * was rehashed over and over (a tenth of a CDC run's writer time in a profile).
   */
  expectedRows?: number;
  /**
   * Deletion-vector upserts whose index is handed in later (`useKeyIndex`): a writer opened while
   * the table's previous checkpoint is still being committed (keyed-change-writer.ts). It cannot be
   * prepared before it has the index.
   */
  keyIndexLater?: boolean;
  /**
   * Keyless tables in format v3: the index of the table's live rows by their whole row as of the
   * snapshot this checkpoint builds on (value-index.ts). A delete of a committed row then removes
   * exactly one copy by a DV entry; `PreparedChanges.rowIndexDelta` says how the commit changes it.
   */
  rowIndex?: ValueIndex;
}

export class TableChangeWriter {
  readonly mode: WriteMode;
  readonly schema: Schema;
  readonly spec: PartitionSpec;
  readonly formatVersion: number;
  private readonly locations: LocationProvider;
  private readonly tag: string;
  private readonly sinks: ChangeSinks;
  private readonly writer: ModeWriter;
  private readonly keyed: KeyedChangeWriter | undefined;
  private readonly keyless: KeylessChangeWriter | undefined;
  private readonly rowIndex: ValueIndex | undefined;
  /** The matching deletes of a cascade child (child-cascades.ts). */
  private readonly cascades: ChildCascades;
  private readonly matching: MatchingDeletes;
  private state: 'open' | 'prepared' | 'aborted' = 'open';
  /** The key index of DV upserts (options.keyIndex, or the one `useKeyIndex` handed in). */
  private keyIndex: KeyIndex | undefined;
  /** Every object written at prepare, recorded at once so that a failure part-way lets abort() remove it. */
  private readonly written: string[] = [];
  readonly stats: WriterStats = { changes: 0, rowsWritten: 0, positionDeletes: 0, equalityDeletes: 0, droppedDataFiles: 0, dataFilesOpened: 0 };

  constructor(
    private readonly table: WriterTable,
    options: TableChangeWriterOptions = {},
  ) {
    const m = table.metadata;
    const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
    const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId);
    if (!schema || !spec) throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${m.location}: current schema ${m.currentSchemaId} or default spec ${m.defaultSpecId} is missing from the metadata`);
    if (m.formatVersion < 2) throw new FloeError(SUBSYSTEM, 'unsupported', `table ${m.location} is format v${m.formatVersion}; row-level deletes need format v2 or v3 (upgrade the table)`);
    this.schema = schema;
    this.spec = spec;
    this.keyIndex = options.keyIndex;
    this.formatVersion = m.formatVersion;
    this.mode = options.mode ?? (schema.identifierFieldIds.length > 0 ? 'upsert' : 'append');
    const key = this.mode === 'append' ? TableKey.wholeRow(schema) : TableKey.identifier(schema);
    this.locations = options.locations ?? tableLocations(m);
    this.tag = options.fileNameTag ?? globalThis.crypto.randomUUID();
    const sizes = targetFileSizes(m);
    const deleteTargetSize = options.deleteTargetFileSizeBytes ?? sizes.deletes;
    const encodeAfterBytes = options.encodeAfterBytes ?? DEFAULT_ENCODE_AFTER_BYTES;
    const parquet = parquetWriterOptions(m, options.parquet);
    const common = { io: table.io, locations: this.locations, parquet: parquet.deletes };
    // a v3 child with a key index, or keyless with a row index: cascades by DVs (checkpoint/value-indexes.ts)
    const located = this.mode === 'append' ? options.rowIndex !== undefined : options.keyIndex !== undefined || options.keyIndexLater === true;
    const dvCascades = m.formatVersion >= 3 && located && (options.matchFields?.length ?? 0) > 0;
    const carried = dvCascades && options.carryFields?.length ? CarriedColumns.resolve(schema, options.carryFields) : undefined;
    this.matching = new MatchingDeletes(schema, { ...common, tag: this.tag, targetFileSizeBytes: deleteTargetSize, indexed: options.matchFields, ownerOf: dvCascades ? (row) => key.keyOfRow(row, 'cascade child') : undefined, carried: carried && ((row) => carried.of(row)) });
    this.cascades = new ChildCascades(this.matching, dvCascades, this.stats, carried);
    this.sinks = {
      stats: this.stats,
      data: new PartitionedDataSink(schema, spec, new Partitioner(schema, spec), this.stats, {
        ...common,
        parquet: parquet.data,
        tag: this.tag,
        targetFileSizeBytes: options.targetFileSizeBytes ?? sizes.data,
        sizeCheckRows: options.sizeCheckRows,
        sortOrderId: m.defaultSortOrderId,
        encodeAfterBytes,
        maxBufferedBytes: Math.max(encodeAfterBytes, options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES),
        onRow: (row, loc) => this.matching.record(row, loc),
      }),
      positions: new PositionDeleteSink(this.stats, { ...common, formatVersion: m.formatVersion, tag: this.tag, targetFileSizeBytes: deleteTargetSize }),
      equality: new EqualityDeleteSink(schema, key.fieldIds, { ...common, fileNamePrefix: `eq-${this.tag}`, targetFileSizeBytes: deleteTargetSize }),
    };
    if (this.mode === 'append') {
      this.rowIndex = m.formatVersion >= 3 ? options.rowIndex : undefined;
      this.keyless = new KeylessChangeWriter(key, this.sinks, m.location, this.rowIndex);
      this.writer = this.keyless;
    } else {
      this.keyed = new KeyedChangeWriter(this.mode, key, this.sinks, options.keyIndex, !options.keyIndex && options.keyIndexLater === true, options.expectedRows);
      this.writer = this.keyed;
    }
  }

  /** Whether the writer waits for its key index (`keyIndexLater`, until `useKeyIndex`). */
  get awaitsKeyIndex(): boolean {
    return this.keyed?.awaitsIndex ?? false;
  }

  /** Hands a `keyIndexLater` writer its index: the index of the table as the previous commit left it. */
  useKeyIndex(index: KeyIndex): void {
    this.ensureOpen();
    if (!this.keyed) throw new FloeError(SUBSYSTEM, 'internal', `table writer for ${this.table.metadata.location}: a key index for a writer of mode ${this.mode}`);
    this.keyed.useIndex(index);
    this.keyIndex = index;
  }

  /** Whether any change was applied since the writer was created. */
  get isEmpty(): boolean {
    return this.stats.changes === 0;
  }

  /**
   * DV mode: the data files committed earlier whose rows this checkpoint deletes — the lookups of
   * committed rows made first (keyed-change-writer.ts `lookUpCommitted`: the writer must have its index).
   */
  committedTargetPaths(): string[] {
    this.keyed?.lookUpCommitted();
    return this.sinks.positions.committedTargetPaths();
  }

  /** Whether this checkpoint holds equality deletes (a partitioned table then needs an unpartitioned spec). */
  get hasEqualityDeletes(): boolean {
    return this.stats.equalityDeletes > 0;
  }

  get needsUnpartitionedSpec(): boolean {
    return this.hasEqualityDeletes && !isUnpartitioned(this.spec);
  }

  async applyAll(changes: Iterable<RowChange>): Promise<void> {
    for (const c of changes) {
      const pending = this.step(c);
      if (pending) await pending;
    }
  }

  async apply(change: RowChange): Promise<void> {
    await this.step(change);
  }

  /**
   * One change. Synchronous unless a step must wait (a batch handed to an encoder, a file rolled):
   * then the promise of the rest, which must settle before the next change. The steps and their
   * order are those of plain `await`s; a promise per change per layer is what this saves (a snapshot
   * or streaming checkpoint applies hundreds of thousands of changes).
   */
  private step(change: RowChange): Promise<void> | undefined {
    this.ensureOpen();
    this.stats.changes++;
    if (change.op === 'delete-matching') return this.cascades.apply(change, this.sinks.positions);
    return this.writer.step(change);
  }

  /** DV mode: from now on matching deletes report the rows they remove (`takeCascadeRemovals`, child-cascades.ts); false when they cannot. */
  reportCascadeRemovals(fkIndexes: ReadonlyMap<string, ValueIndex> | undefined): boolean {
    return !this.awaitsKeyIndex && this.cascades.report(fkIndexes, this.keyed, this.sinks.positions, this.table);
  }

  /** The rows the matching deletes applied since the last call removed (their `carryFields`). */
  takeCascadeRemovals(): Promise<RemovedRows | undefined> {
    return this.cascades.take();
  }

  /** The FK column sets this writer matches deletes on (field ids in schema order). */
  get matchFieldSets(): number[][] {
    return this.matching.fieldSets;
  }

  /** Whether the commit must locate cascaded child rows (`resolveCascades`), and on which FK column sets. */
  get cascadeFieldSets(): number[][] | undefined {
    return this.cascades.toLocate;
  }

  /**
   * At the commit: the committed child rows of each deferred matching delete, found through
   * `fkIndexes` (of the key or row index's snapshot), get DV entries — through the key index, or
   * (keyless) on the places found; without an index for a set, an equality delete on it instead.
   */
  async resolveCascades(fkIndexes: ReadonlyMap<string, ValueIndex> | undefined): Promise<void> {
    await this.cascades.resolve(fkIndexes, (file, pos, owner) => (this.keyless ? this.keyless.deleteCommittedAt(file, pos, owner!) : this.keyed!.deleteCommittedKey(owner!)));
  }

  /**
   * Finishes every file of this checkpoint: closes the data writers, writes the equality deletes and
   * the position deletes (v2) or deletion vectors (v3). Data files whose rows were all deleted again
   * are dropped (never committed, so deleting them is safe). The writer is done afterwards.
   */
  async prepare(options: PrepareOptions = {}): Promise<PreparedChanges> {
    this.ensureOpen();
    if (this.awaitsKeyIndex) throw new FloeError(SUBSYSTEM, 'internal', `table writer for ${this.table.metadata.location} prepared before it was given its key index (useKeyIndex)`);
    this.state = 'prepared';
    try {
      return await this.finish(options);
    } catch (e) {
      this.state = 'open';
      await this.abort();
      throw e;
    }
  }

  private async finish(options: PrepareOptions): Promise<PreparedChanges> {
    await this.resolveCascades(undefined); // left unresolved (a writer prepared on its own): equality deletes
    this.keyed?.lookUpCommitted();
    const io = this.table.io;
    const written = this.written;
    const handles = await this.sinks.data.close(written);
    const fkRows = this.cascades.dv ? this.matching.writtenRows() : undefined;

    const deleteFiles: DataFile[] = [];
    const eqSpecId = () => equalityDeleteSpecId(this.table.metadata, this.spec, options.equalityDeleteSpecId);
    if (this.sinks.equality.count > 0) {
      for (const f of await this.sinks.equality.close(eqSpecId())) {
        written.push(f.filePath);
        deleteFiles.push(f);
      }
    }
    if (!this.matching.isEmpty) {
      for (const f of await this.matching.close(eqSpecId())) {
        written.push(f.filePath);
        deleteFiles.push(f);
      }
    }

    const dataFiles: DataFile[] = [];
    const kept: DataFileHandle[] = [];
    for (const h of handles) {
      if (h.deletedCount === h.recordCount) {
        // Every row was superseded within the checkpoint: nothing references the file, drop it.
        this.stats.droppedDataFiles++;
        await io.delete(h.path);
        continue;
      }
      dataFiles.push(h.dataFile!);
      kept.push(h);
    }
    const positions = this.sinks.positions;
    const positionalStart = written.length;
    const positional = await positions.write({ files: kept, committedTargets: positions.committedTargets(), existing: await options.existingDeletes, written });
    const otherDeletes = [...deleteFiles];
    const positionalPaths = written.slice(positionalStart);
    deleteFiles.push(...positional.deleteFiles);
    const indexDelta = this.keyIndex ? (this.keyed?.indexDelta() ?? NO_KEY_MOVES) : undefined;
    const targets = positions.committedTargetPaths();
    const rowIndexDelta = this.rowIndex ? this.keyless?.rowIndexDelta() : undefined;
    const keylessDeleted = rowIndexDelta ? this.keyless!.deletedCommitted() : [];
    this.writer.clear();
    positions.clear();
    const prepared: PreparedChanges = { dataFiles, deleteFiles, removedDeleteFiles: positional.removed, writtenPaths: [...written], stats: { ...this.stats } };
    if (!indexDelta && !rowIndexDelta) return prepared;
    if (fkRows) prepared.fkRows = fkRows;
    if (rowIndexDelta) prepared.rowIndexDelta = rowIndexDelta;
    return withRelocation(prepared, {
      indexDelta,
      deleted: indexDelta ? indexDelta.deleted : keylessDeleted,
      committedTargets: targets,
      otherDeletes,
      otherPaths: written.filter((p) => !positionalPaths.includes(p)),
      positionalPaths,
      rewrite: (committedTargets, existing, paths, generation) => positions.write({ files: kept, committedTargets, existing, written: paths, tagSuffix: `-r${generation}` }),
    });
  }

  /**
   * Abandons the checkpoint: closes writers and deletes every file written so far. Only call this
   * when no commit can reference those files (never after a commit whose outcome is unknown).
   */
  async abort(): Promise<void> {
    if (this.state === 'aborted') return;
    this.state = 'aborted';
    const paths: string[] = [...this.written, ...(await this.sinks.data.abort())];
    await this.sinks.equality.abort();
    await this.matching.abort();
    for (const p of new Set(paths)) {
      try {
        await this.table.io.delete(p);
      } catch {
        // An orphan is invisible to readers; leaving one behind is harmless.
      }
    }
    this.writer.clear();
    this.sinks.positions.clear();
  }

  private ensureOpen(): void {
    if (this.state !== 'open') throw new FloeError(SUBSYSTEM, 'internal', `table writer for ${this.table.metadata.location} used after it was ${this.state}; start a new writer per checkpoint`);
  }
}

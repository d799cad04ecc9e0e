/**
 * The upsert task writer of one table for one checkpoint (Java `BaseTaskWriter.BaseEqualityDeltaWriter`,
 * Flink `BaseDeltaTaskWriter`; docs/iceberg-writer-checklist.md §4.3; docs/design.md §4; docs/seeds/seed-003.txt §4-1): row changes in, Parquet data
 * files, equality-delete files and position deletes / deletion vectors out, ready for ONE row-delta
 * commit.
 *
 *   insert/update → deleteKey(key) + write(row); an update whose key changed also deleteKey(old key)
 *   delete        → deleteKey(key)
 *   deleteKey(k)  → k written earlier in this checkpoint: remove that row by position (v2 position
 *                   delete, v3 deletion vector); otherwise an equality delete of the key columns.
 *
 * The in-checkpoint map key → (data file, position) is the only per-row state; rows themselves go to
 * Parquet writers that roll at a target size. Once a key has been equality-deleted in this checkpoint
 * its map entry remembers it, so the key is never equality-deleted twice in one commit.
 *
 * Partitioned tables: each partition the checkpoint touches has one data writer for the whole
 * checkpoint, so the rows of all its snapshot chunks and transactions share one file per partition
 * (more only at the target file size, or when the memory bound finishes files early: see
 * `balanceBuffers`); a chunk of keys spread over the table touches nearly every partition, and a
 * file per partition per chunk would be as many files as chunks times partitions.
 *
 * Partitioned tables: equality deletes are GLOBAL — written with an unpartitioned spec that is present
 * in the table's specs (spec "Scan Planning": a delete with an unpartitioned spec applies to every
 * partition). So an UPDATE that moves a row to another partition (or a table whose key does not
 * contain the partition source columns) still deletes the old row. The cost is that every equality
 * delete is checked against every older data file, as Java does for global deletes. Position deletes
 * and DVs go with their data file's partition.
 *
 * Modes:
 * - `upsert` (keyed tables): as above.
 * - `append-only` (initial snapshot rows into keys that cannot exist yet, docs/design.md §2.3): an insert
 *   writes no equality delete. A key delivered twice within the checkpoint is still de-duplicated by
 *   position (the later row wins), so a chunk re-read inside one checkpoint does not duplicate rows.
 *   Updates and deletes of keys not written in this checkpoint still write equality deletes
 *   (correctness before the mode's assumption). Delivery note: rows re-delivered in a LATER
 *   checkpoint under this mode are duplicated; the caller must only use it for rows that are not in
 *   the table (chunks not yet committed — progress is read back from the table, docs/design.md §2).
 * - `append` (tables without a primary key): every insert is appended; the row is its own identity.
 *   A delete (or the old image of an update) removes ONE matching row written in this checkpoint by
 *   position if there is one — MySQL deletes exactly one row per event, even among identical rows.
 *   Otherwise it writes an equality delete of the whole row over every non-float primitive column.
 *   Delivery note: that equality delete removes ALL identical older copies (and rows differing only
 *   in float/double columns, which equality deletes cannot use): for keyless tables with duplicate
 *   rows the lake may hold fewer copies than MySQL. Replays of already-committed inserts duplicate
 *   rows (at-least-once, as every keyless CDC sink: docs/seeds/seed-003.txt §4-3); resuming exactly from the table's
 *   committed offset avoids them.
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { LocationProvider } from '../parquet/rolling-writer.js';
import { isUnpartitioned, type PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { Partitioner, type PartitionKey } from './partitioner.js';
import { PositionalDataWriter, type DataFileHandle, type RowLocation } from './positional-data-writer.js';
import { EqualityDeleteSink, equalityDeleteSpecId } from './equality-delete-sink.js';
import { writeCheckpointPositionDeletes, type ExistingDeletes, type PositionDeleteTarget } from './position-delete-writers.js';
import type { RowChange } from './row-change.js';
import { MatchingDeletes } from './delete-matching.js';
import { TableKey, type KeyId } from './table-key.js';
import type { KeyIndex, KeyIndexDelta } from './key-index.js';
import { PositionBitmap } from '../puffin/position-bitmap.js';
import { tableLocations, targetFileSizes } from './table-locations.js';

const SUBSYSTEM = 'iceberg.writer';
const TWO_32 = 4294967296;
/** Partition files closed at the same time at a checkpoint (see `closePartitions`). */
const CLOSE_CONCURRENCY = 16;
/** Rows between checks of what the open partition files buffer together (`balanceBuffers`). */
const BUFFER_CHECK_ROWS = 4096;
const DEFAULT_ENCODE_AFTER_BYTES = 32 * 1024 * 1024;
const DEFAULT_MAX_BUFFERED_BYTES = 256 * 1024 * 1024;
/**
 * A partition hands its rows to the encoder early only with at least this many: a batch of a few rows
 * would cost a streaming encoder (and its memory in the encoder thread) per partition.
 */
const MIN_EARLY_BATCH_ROWS = 2048;
/** Rows a partition file sets aside before appending them to its column builders (`ParquetWriterOptions.stageRows`). */
const STAGE_ROWS = 16;

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
  /**
   * Deletion-vector upserts (format v3, keyed tables): the index of the table's live rows as of the
   * snapshot this checkpoint builds on. A row committed earlier is then removed by a DV entry on its
   * data file instead of an equality delete; no equality delete is written at all. The writer never
   * changes the index: `PreparedChanges.indexDelta` says how the commit changes it.
   */
  keyIndex?: KeyIndex;
}

export interface PrepareOptions {
  /**
   * Spec id for the equality deletes of a partitioned table: an unpartitioned spec present in the
   * table's specs. Default: one found in the metadata; error when there is none.
   */
  equalityDeleteSpecId?: number;
  /**
   * Deletes already committed for data files this writer position-deletes (v3: they must be merged
   * into the new DV and replaced). floe only position-deletes files written in the same checkpoint,
   * which no committed delete can reference, so the committer passes none.
   */
  existingDeletes?: ReadonlyMap<string, ExistingDeletes>;
}

export interface PreparedChanges {
  dataFiles: DataFile[];
  /** Equality deletes, position-delete files (v2) or deletion vectors (v3). */
  deleteFiles: DataFile[];
  /** Earlier DVs replaced by merged ones (to be marked DELETED). */
  removedDeleteFiles: DataFile[];
  /** Every object written for this checkpoint (to delete if it is never committed). */
  writtenPaths: string[];
  stats: WriterStats;
  /** With a key index: how the table's rows move once this commit lands (apply it only then). */
  indexDelta?: KeyIndexDelta;
  /** With a key index: data files committed earlier that this commit's DVs delete rows of. */
  committedTargets?: readonly string[];
  /**
   * With a key index: the same changes with the deletes of committed rows located again, through
   * `index` (built from the table as it is now) — for a commit another writer got in the way of, by
   * rewriting a data file whose rows this checkpoint deletes (a compaction) or giving it a DV. The
   * data files stay; the deletion vectors are written anew (their existing deletes from
   * `existingFor`). `replacedPaths`: the DV files of these prepared changes, which the new ones
   * replace and no commit may reference.
   */
  relocate?: (index: KeyIndex, existingFor: (targets: ReadonlySet<string>) => Promise<ReadonlyMap<string, ExistingDeletes>>) => Promise<PreparedChanges & { replacedPaths: string[] }>;
}

export interface WriterStats {
  changes: number;
  rowsWritten: number;
  positionDeletes: number;
  equalityDeletes: number;
  /** Data files dropped before commit because every row in them was deleted again. */
  droppedDataFiles: number;
}


export class TableChangeWriter {
  readonly mode: WriteMode;
  readonly schema: Schema;
  readonly spec: PartitionSpec;
  readonly formatVersion: number;
  private readonly key: TableKey;
  private readonly partitioner: Partitioner;
  private readonly locations: LocationProvider;
  private readonly tag: string;
  private readonly targetSize: number;
  private readonly deleteTargetSize: number;
  private readonly partitions = new Map<PartitionKey, PositionalDataWriter>();
  /**
   * Key → where its live row written in this checkpoint is. Kept as two flat collections rather than
   * one entry object per key: the map holds one entry per row written, and a snapshot checkpoint
   * writes hundreds of thousands (hot path, and what the checkpoint's memory is mostly made of).
   */
  private readonly keys = new Map<KeyId, number>();
  /**
   * The data files rows of this checkpoint went to; a key's location is packed into one number,
   * file index × 2^32 + row position, so the map holds no object per row (less for the GC to trace
   * through a checkpoint of hundreds of thousands of rows).
   */
  private readonly rowFiles: DataFileHandle[] = [];
  /** Keys an equality delete of this checkpoint already covers. */
  private readonly eqDeleted = new Set<KeyId>();
  /** DV mode: keys whose committed row this checkpoint deletes (an index entry not to use again). */
  private readonly indexDeleted = new Set<KeyId>();
  /** DV mode: data files committed earlier → the positions this checkpoint deletes in them. */
  private readonly committedDeletes = new Map<string, { file: DataFile; positions: PositionBitmap }>();
  private readonly keylessRows = new Map<KeyId, RowLocation[]>();
  private readonly eqDeletes: EqualityDeleteSink;
  private state: 'open' | 'prepared' | 'aborted' = 'open';
  private rowsSinceBufferCheck = 0;
  private readonly encodeAfterBytes: number;
  private readonly maxBufferedBytes: number;
  private readonly extraPaths: string[] = [];
  private readonly matching: MatchingDeletes;
  readonly stats: WriterStats = { changes: 0, rowsWritten: 0, positionDeletes: 0, equalityDeletes: 0, droppedDataFiles: 0 };

  constructor(
    private readonly table: WriterTable,
    private readonly options: TableChangeWriterOptions = {},
  ) {
    const m = table.metadata;
    const schema = m.schemas.find((s) => s.schemaId === m.currentSchemaId);
    const spec = m.partitionSpecs.find((s) => s.specId === m.defaultSpecId);
    if (!schema || !spec) throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${m.location}: current schema ${m.currentSchemaId} or default spec ${m.defaultSpecId} is missing from the metadata`);
    if (m.formatVersion < 2) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `table ${m.location} is format v${m.formatVersion}; row-level deletes need format v2 or v3 (upgrade the table)`);
    }
    this.schema = schema;
    this.spec = spec;
    this.formatVersion = m.formatVersion;
    this.mode = options.mode ?? (schema.identifierFieldIds.length > 0 ? 'upsert' : 'append');
    this.key = this.mode === 'append' ? TableKey.wholeRow(schema) : TableKey.identifier(schema);
    this.partitioner = new Partitioner(schema, spec);
    this.locations = options.locations ?? tableLocations(m);
    this.tag = options.fileNameTag ?? globalThis.crypto.randomUUID();
    const sizes = targetFileSizes(m);
    this.targetSize = options.targetFileSizeBytes ?? sizes.data;
    this.deleteTargetSize = options.deleteTargetFileSizeBytes ?? sizes.deletes;
    this.encodeAfterBytes = options.encodeAfterBytes ?? DEFAULT_ENCODE_AFTER_BYTES;
    this.maxBufferedBytes = Math.max(this.encodeAfterBytes, options.maxBufferedBytes ?? DEFAULT_MAX_BUFFERED_BYTES);
    this.eqDeletes = new EqualityDeleteSink(schema, this.key.fieldIds, {
      io: table.io,
      locations: this.locations,
      fileNamePrefix: `eq-${this.tag}`,
      targetFileSizeBytes: this.deleteTargetSize,
      parquet: options.parquet,
    });
    this.matching = new MatchingDeletes(schema, {
      io: table.io,
      locations: this.locations,
      tag: this.tag,
      targetFileSizeBytes: this.deleteTargetSize,
      parquet: options.parquet,
      indexed: options.matchFields,
    });
  }

  /** Whether any change was applied since the writer was created. */
  get isEmpty(): boolean {
    return this.stats.changes === 0;
  }

  /** DV mode: the data files committed earlier whose rows this checkpoint deletes so far. */
  committedTargetPaths(): string[] {
    return [...this.committedDeletes.keys()];
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
    if (change.op === 'delete-matching') return this.applyMatching(change);
    if (this.mode === 'append') return this.applyKeyless(change);
    switch (change.op) {
      case 'insert': {
        const after = this.key.checkRow(change.after, 'insert: after');
        return this.replace(this.key.keyOfRow(after, 'insert'), after);
      }
      case 'update': {
        const after = this.key.checkRow(change.after, 'update: after');
        const newKey = this.key.keyOfRow(after, 'update');
        const oldValues = this.oldKeyValues(change) ?? this.key.valuesOf(after);
        const oldKey = this.key.encode(oldValues, 'update: key');
        if (oldKey !== newKey) {
          const deleted = this.deleteKey(oldKey, oldValues);
          if (deleted) return deleted.then(() => this.replace(newKey, after));
        }
        return this.replace(newKey, after);
      }
      case 'delete': {
        const values = this.oldKeyValues(change);
        if (!values) throw new FloeError(SUBSYSTEM, 'invalid-argument', 'delete: needs `key` or `before`');
        return this.deleteKey(this.key.encode(values, 'delete: key'), values);
      }
      default:
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `unknown change op ${JSON.stringify((change as { op: unknown }).op)}; expected insert, update or delete`);
    }
  }

  private async applyMatching(change: RowChange & { op: 'delete-matching' }): Promise<void> {
    await this.matching.apply(change, (loc) => this.deleteAt(loc));
    this.stats.equalityDeletes++;
  }

  private oldKeyValues(change: RowChange): Value[] | undefined {
    if (change.key !== undefined) return this.key.explicitToSchemaOrder(change.key);
    if (change.before !== undefined) return this.key.valuesOf(this.key.checkRow(change.before, `${change.op}: before`));
    return undefined;
  }

  /**
   * Removes the live row of key `k`: by position when this checkpoint wrote it; otherwise by an
   * equality delete of `values` (schema order) unless one was already written for `k` in this
   * checkpoint. `values` undefined = no equality delete for an unseen key (append-only inserts).
   */
  /** deleteKey(k) then writeRow(k, row) — closures only on the (rare) asynchronous path. */
  private replace(k: KeyId, row: Row): Promise<void> | undefined {
    const deleted = this.deleteKey(k, this.mode === 'upsert' ? this.key.valuesOf(row) : undefined);
    if (deleted) return deleted.then(() => this.writeRow(k, row));
    return this.writeRow(k, row);
  }

  private deleteKey(k: KeyId, values: Value[] | undefined): Promise<void> | undefined {
    const packed = this.keys.get(k);
    if (packed !== undefined) {
      this.deletePosition(this.rowFiles[Math.floor(packed / TWO_32)], packed % TWO_32);
      this.keys.delete(k);
      return undefined;
    }
    const index = this.options.keyIndex;
    if (index) {
      // DV mode: the index knows every live row, so a key it lacks has no row to delete
      if (this.indexDeleted.has(k)) return undefined;
      const at = index.get(k);
      if (at) {
        this.indexDeleted.add(k);
        let target = this.committedDeletes.get(at.file.filePath);
        if (!target) this.committedDeletes.set(at.file.filePath, (target = { file: at.file, positions: new PositionBitmap() }));
        target.positions.add(at.pos);
        this.stats.positionDeletes++;
      }
      return undefined;
    }
    if (values === undefined || this.eqDeleted.has(k)) return undefined;
    const written = this.equalityDelete(values);
    if (written) {
      return written.then(() => {
        this.eqDeleted.add(k);
      });
    }
    this.eqDeleted.add(k);
    return undefined;
  }

  private writeRow(k: KeyId, row: Row): Promise<void> | undefined {
    // deleteKey ran just before, so any earlier row of k is already position-deleted.
    const loc = this.writeData(row);
    if (loc instanceof Promise) {
      return loc.then((l) => {
        this.keys.set(k, this.pack(l));
      });
    }
    this.keys.set(k, this.pack(loc));
    return undefined;
  }

  private async applyKeyless(change: RowChange): Promise<void> {
    switch (change.op) {
      case 'insert':
        return this.appendRow(this.key.checkRow(change.after, 'insert: after'));
      case 'update':
        await this.deleteRow(this.key.checkRow(change.before, 'update in a keyless table: before (the row is its own key)'));
        return this.appendRow(this.key.checkRow(change.after, 'update: after'));
      case 'delete':
        return this.deleteRow(this.key.checkRow(change.before, 'delete in a keyless table: before (the row is its own key)'));
      default:
        throw new FloeError(SUBSYSTEM, 'invalid-argument', `unknown change op ${JSON.stringify((change as { op: unknown }).op)}; expected insert, update or delete`);
    }
  }

  private async appendRow(row: Row): Promise<void> {
    const k = this.key.keyOfRow(row);
    const loc = await this.writeData(row);
    const list = this.keylessRows.get(k);
    if (list) list.push(loc);
    else this.keylessRows.set(k, [loc]);
  }

  private async deleteRow(row: Row): Promise<void> {
    const k = this.key.keyOfRow(row);
    const list = this.keylessRows.get(k);
    let loc = list?.pop();
    // a row a matching delete already removed is not a live copy
    while (loc && loc.file.deleted?.has(loc.pos)) loc = list!.pop();
    if (list && list.length === 0) this.keylessRows.delete(k);
    if (loc) {
      this.deleteAt(loc);
      return;
    }
    if (this.key.positions.length === 0) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `cannot delete a row of keyless table ${this.table.metadata.location}: it has no column an equality delete can use (all are float/double or nested); give the table a primary key`);
    }
    await this.equalityDelete(this.key.valuesOf(row));
  }

  private pack(loc: RowLocation): number {
    // The file's index is kept on its handle: a partitioned table's consecutive rows go to different
    // files, and looking the file up in `rowFiles` would cost a scan per row.
    let i = loc.file.rowFileIndex;
    if (i < 0) i = loc.file.rowFileIndex = this.rowFiles.push(loc.file) - 1;
    return i * TWO_32 + loc.pos;
  }

  private deletePosition(file: DataFileHandle, pos: number): void {
    this.deleteAt({ file, pos });
  }

  private deleteAt(loc: RowLocation): void {
    if (loc.file.deleted?.has(loc.pos)) return; // already removed (by a matching delete)
    loc.file.deletePosition(loc.pos);
    this.stats.positionDeletes++;
  }

  private writeData(row: Row): RowLocation | Promise<RowLocation> {
    const key = this.partitioner.keyOf(row);
    let writer = this.partitions.get(key);
    if (!writer) {
      const part = this.partitioner.partitionOf(row);
      writer = new PositionalDataWriter(this.schema, {
        io: this.table.io,
        locations: this.locations,
        specId: this.spec.specId,
        partition: part.values,
        partitionPath: this.partitioner.pathOf(part.values),
        fileNamePrefix: `${String(this.partitions.size).padStart(5, '0')}-${this.tag}`,
        targetFileSizeBytes: this.targetSize,
        sizeCheckRows: this.options.sizeCheckRows,
        sortOrderId: this.table.metadata.defaultSortOrderId,
        parquet: this.options.parquet,
        // consecutive rows go to different partitions: append them to each file's builders in runs
        stageRows: this.partitioner.isUnpartitioned ? undefined : STAGE_ROWS,
      });
      this.partitions.set(key, writer);
    }
    this.stats.rowsWritten++;
    const loc = writer.writeOne(row);
    if (loc instanceof Promise) {
      return loc.then((l) => {
        this.matching.record(row, l);
        return l;
      });
    }
    this.matching.record(row, loc);
    if (++this.rowsSinceBufferCheck >= BUFFER_CHECK_ROWS && this.partitions.size > 1) {
      this.rowsSinceBufferCheck = 0;
      const balanced = this.balanceBuffers();
      if (balanced) return balanced.then(() => loc);
    }
    return loc;
  }

  /**
   * Keeps the open partition files of a checkpoint within bounds. Each file hands a batch to its
   * encoder when the batch is full (16,384 rows or 8 MiB by default), which a table with many
   * partitions rarely reaches: all its rows would wait in memory, and be encoded only at the
   * checkpoint, one file after another, instead of alongside the source as an unpartitioned table's
   * are. So, checked every few thousand rows:
   * - past `encodeAfterBytes` buffered in all, the largest files holding enough rows for a batch of
   *   their own hand them to their encoders, until half of that is left;
   * - past `maxBufferedBytes` (many partitions, each with a few rows), the largest files are finished
   *   now, until half of that is left: more files than one per partition per checkpoint, but bounded
   *   memory. The rows stay where they are (finished files are committed with the checkpoint; the
   *   positions handed out stay valid).
   * Undefined when nothing had to be done.
   */
  private balanceBuffers(): Promise<void> | undefined {
    let total = 0;
    let batchWorthy = false;
    for (const w of this.partitions.values()) {
      total += w.bufferedBytes();
      if (w.bufferedRows >= MIN_EARLY_BATCH_ROWS) batchWorthy = true;
    }
    if (total <= this.encodeAfterBytes || (!batchWorthy && total <= this.maxBufferedBytes)) return undefined;
    return this.shrinkBuffers(total);
  }

  private async shrinkBuffers(total: number): Promise<void> {
    const held = [...this.partitions.values()].map((w) => ({ w, bytes: w.bufferedBytes(), rows: w.bufferedRows })).filter((h) => h.rows > 0);
    held.sort((a, b) => b.bytes - a.bytes);
    const early = held.filter((h) => h.rows >= MIN_EARLY_BATCH_ROWS);
    for (const h of early) {
      if (total <= this.encodeAfterBytes / 2) break;
      await h.w.flush();
      total -= h.bytes;
      h.rows = 0;
    }
    if (total <= this.maxBufferedBytes) return;
    const finishing: PositionalDataWriter[] = [];
    for (const h of held) {
      if (total <= this.maxBufferedBytes / 2) break;
      if (h.rows === 0) continue;
      finishing.push(h.w);
      total -= h.bytes;
    }
    await eachConcurrently(finishing, CLOSE_CONCURRENCY, (w) => w.finishFile());
  }

  private equalityDelete(values: Value[]): Promise<void> | undefined {
    this.stats.equalityDeletes++;
    return this.eqDeletes.addOne(values);
  }

  /**
   * Finishes every file of this checkpoint: closes the data writers, writes the equality deletes and
   * the position deletes (v2) or deletion vectors (v3). Data files whose rows were all deleted again
   * are dropped (never committed, so deleting them is safe). The writer is done afterwards.
   */
  async prepare(options: PrepareOptions = {}): Promise<PreparedChanges> {
    this.ensureOpen();
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
    const io = this.table.io;
    // Every object written is recorded at once, so that a failure part-way lets abort() remove it.
    const written = this.extraPaths;
    const handles = await this.closePartitions(written);

    const deleteFiles: DataFile[] = [];
    if (this.eqDeletes.count > 0) {
      const files = await this.eqDeletes.close(equalityDeleteSpecId(this.table.metadata, this.spec, options.equalityDeleteSpecId));
      for (const f of files) {
        written.push(f.filePath);
        deleteFiles.push(f);
      }
    }
    if (!this.matching.isEmpty) {
      const files = await this.matching.close(equalityDeleteSpecId(this.table.metadata, this.spec, options.equalityDeleteSpecId));
      for (const f of files) {
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
    const committedTargets = [...this.committedDeletes.values()].map((t) => ({ dataFilePath: t.file.filePath, specId: t.file.specId, partition: t.file.partition, positions: t.positions }));
    const positionalStart = written.length;
    const positional = await writeCheckpointPositionDeletes({
      io,
      formatVersion: this.formatVersion,
      locations: this.locations,
      tag: this.tag,
      files: kept,
      committedTargets,
      existing: options.existingDeletes,
      targetFileSizeBytes: this.deleteTargetSize,
      parquet: this.options.parquet,
      written,
    });
    const otherDeletes = [...deleteFiles];
    const positionalPaths = written.slice(positionalStart);
    deleteFiles.push(...positional.deleteFiles);
    const removed = positional.removed;
    let indexDelta: KeyIndexDelta | undefined;
    if (this.options.keyIndex) {
      const set: [KeyId, DataFile, number][] = [];
      for (const [k, packed] of this.keys) {
        const h = this.rowFiles[Math.floor(packed / TWO_32)];
        set.push([k, h.dataFile!, packed % TWO_32]);
      }
      indexDelta = { set, deleted: [...this.indexDeleted] };
    }
    this.keys.clear();
    this.rowFiles.length = 0;
    this.eqDeleted.clear();
    this.keylessRows.clear();
    const targets = [...this.committedDeletes.keys()];
    this.indexDeleted.clear();
    this.committedDeletes.clear();
    const prepared: PreparedChanges = { dataFiles, deleteFiles, removedDeleteFiles: removed, writtenPaths: [...written], stats: { ...this.stats } };
    if (!indexDelta) return prepared;
    const others = written.filter((p) => !positionalPaths.includes(p));
    let generation = 0;
    const relocator = (current: PreparedChanges, currentPaths: string[]): NonNullable<PreparedChanges['relocate']> => async (index, existingFor) => {
      const found = new Map<string, PositionDeleteTarget>();
      for (const k of indexDelta.deleted) {
        const at = index.get(k);
        if (!at) continue; // no live row of k any more: nothing to delete
        let t = found.get(at.file.filePath);
        if (!t) found.set(at.file.filePath, (t = { dataFilePath: at.file.filePath, specId: at.file.specId, partition: at.file.partition, positions: new PositionBitmap() }));
        t.positions.add(at.pos);
      }
      const existing = await existingFor(new Set(found.keys()));
      const paths: string[] = [];
      const again = await writeCheckpointPositionDeletes({
        io,
        formatVersion: this.formatVersion,
        locations: this.locations,
        tag: `${this.tag}-r${++generation}`,
        files: kept,
        committedTargets: [...found.values()],
        existing,
        targetFileSizeBytes: this.deleteTargetSize,
        parquet: this.options.parquet,
        written: paths,
      });
      const next: PreparedChanges = { ...current, deleteFiles: [...otherDeletes, ...again.deleteFiles], removedDeleteFiles: again.removed, writtenPaths: [...others, ...paths], committedTargets: [...found.keys()] };
      next.relocate = relocator(next, paths);
      return { ...next, replacedPaths: currentPaths };
    };
    const withIndex: PreparedChanges = { ...prepared, indexDelta, committedTargets: targets };
    withIndex.relocate = relocator(withIndex, positionalPaths);
    return withIndex;
  }

  /**
   * Closes every partition's data writer, several at a time: a partitioned checkpoint holds one
   * open file per partition (thousands for a `day` transform), and closing one is an encoder round
   * trip and a durable write (fsync of the file and its directory); one after another, their
   * latencies add up, while side by side the encoder threads and the disk overlap them. Closing does
   * not add memory: each file's rows are already buffered (in its builders or its encoder). The files
   * come back in partition order, whatever order they finish in.
   */
  private async closePartitions(written: string[]): Promise<DataFileHandle[]> {
    const writers = [...this.partitions.values()];
    const closed: DataFileHandle[][] = new Array(writers.length);
    await eachConcurrently(writers, CLOSE_CONCURRENCY, async (w, i) => {
      closed[i] = await w.close();
      // Recorded at once, so that a failure part-way lets abort() remove it.
      for (const h of closed[i]) written.push(h.path);
    });
    return closed.flat();
  }

  /**
   * Abandons the checkpoint: closes writers and deletes every file written so far. Only call this
   * when no commit can reference those files (never after a commit whose outcome is unknown).
   */
  async abort(): Promise<void> {
    if (this.state === 'aborted') return;
    this.state = 'aborted';
    const paths: string[] = [...this.extraPaths];
    for (const w of this.partitions.values()) {
      await w.abort();
      for (const h of w.files) paths.push(h.path);
    }
    await this.eqDeletes.abort();
    await this.matching.abort();
    for (const p of new Set(paths)) {
      try {
        await this.table.io.delete(p);
      } catch {
        // An orphan is invisible to readers; leaving one behind is harmless.
      }
    }
    this.keys.clear();
    this.rowFiles.length = 0;
    this.eqDeleted.clear();
    this.keylessRows.clear();
    this.indexDeleted.clear();
    this.committedDeletes.clear();
  }

  private ensureOpen(): void {
    if (this.state !== 'open') throw new FloeError(SUBSYSTEM, 'internal', `table writer for ${this.table.metadata.location} used after it was ${this.state}; start a new writer per checkpoint`);
  }
}

/**
 * `fn` over `items`, at most `limit` at a time. After a failure no new item starts; the first failure
 * is thrown once every started call has settled (none is left running behind the caller's back).
 */
async function eachConcurrently<T>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  let failed = false;
  const lane = async () => {
    while (next < items.length && !failed) {
      const i = next++;
      try {
        await fn(items[i], i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const results = await Promise.allSettled(Array.from({ length: Math.min(limit, items.length) }, lane));
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/**
 * The event contract of the MySQL source: what `SourceStream.events()` (and, for the binlog part,
 * `BinlogReader`) emits, in order, as ONE async stream. The pipeline builds on exactly this.
 *
 * Values: every `Row` follows `src/model/values.ts` (one array entry per column of the table, in
 * column order; BigInt for longs and unsigned 64-bit keys, exact decimal strings, µs timestamps…).
 * Snapshot rows and binlog rows of the same table have the same shape and byte-identical values.
 *
 * Order and guarantees
 * 1. `phase` {phase:'snapshot'} first (unless resuming in streaming), then for each table
 *    `snapshot-plan` (its chunks, emitted before any of its rows so the caller can persist the plan),
 *    then `snapshot-rows` in any chunk order (chunks run in parallel; each chunk is emitted as ONE
 *    event, complete), then `phase` {phase:'handover'} when every chunk is done, then `transaction`
 *    and `ddl` events in binlog order forever, with `progress` events interleaved.
 * 2. `snapshot-rows.rows` is the chunk's content as of `highWatermark` (with backfill) — replaying
 *    it as upserts, then every later `transaction` in order, reproduces the table exactly (DBLog).
 *    With `backfill: false` the rows are as read by the SELECT (between low and high watermark):
 *    at-least-once — later transactions may re-apply changes the rows already contain, which
 *    upserts absorb (the delivery guarantee weakens here, as Flink CDC's backfill.skip).
 * 3. A `transaction` is always complete (never split). `offset` is where to resume to continue
 *    right after it; persisting it with the effects of this and all earlier events is a correct
 *    checkpoint. During the hand-over, changes already contained in a chunk's rows are removed
 *    from transactions (a key-changing update may be narrowed to its delete or its insert half),
 *    so a transaction can arrive with fewer changes, or none (it is still emitted for its offset).
 * 4. `ddl` is emitted at its binlog position, between the transactions before and after it;
 *    `offset` resumes after it. floe does not interpret the statement here (the pipeline's schema
 *    change policy does).
 * 5. `progress` carries an offset that is safe to resume from (a transaction boundary after
 *    everything emitted so far) while nothing else is emitted (heartbeats, skipped transactions
 *    of other tables), and snapshot counters.
 * 6. A `transaction`'s `changes` may hold synthetic `delete-matching` changes (cascade.ts): the
 *    server does not log the child rows an `ON DELETE CASCADE` removes, so right after each logged
 *    DELETE of a referenced row the source adds "delete every row of the child table whose FK
 *    columns equal these values" (at the same position as the parent delete). Consumers apply it
 *    in order like any other change; it has no `before`/`after` image. Only emitted when the source
 *    found such constraints among the captured tables (`SourceStream.cascades`).
 */
import type { Row, Value } from '../../model/values.js';
import type { BinlogOffset, EventPosition } from './offset/offset.js';
import { tableKey, type TableId } from './schema/table-schema.js';

/** A captured table, by database (schema) and name (the discovery's `TableId`). */
export type TableRef = TableId;
export { tableKey };

export type ChangeOp = 'insert' | 'update' | 'delete';

export interface RowChange {
  readonly table: TableRef;
  readonly op: ChangeOp;
  /** Row before the change: present for update and delete. */
  readonly before?: Row;
  /** Row after the change: present for insert and update. */
  readonly after?: Row;
  /** Where the change sits (its transaction's commit position + its index in the transaction). */
  readonly position: EventPosition;
  /**
   * Logged with foreign_key_checks=0 (rows-event flag NO_FOREIGN_KEY_CHECKS_F): the server enforced
   * no foreign key for it, so a delete cascaded nothing (no synthetic child deletes follow it).
   */
  readonly noForeignKeyChecks?: true;
}

/**
 * Synthetic change (guarantee 6): every row of `table` whose `columns` equal `values` is deleted —
 * the child rows an ON DELETE CASCADE removed in the server without logging them. `values` follow
 * the value model of the child's columns (the parent's referenced columns have the same types).
 */
export interface CascadeDeleteChange {
  readonly table: TableRef;
  readonly op: 'delete-matching';
  /** Child columns (names as captured), aligned with `values`; never empty. */
  readonly columns: readonly string[];
  /** Non-null values the child rows' `columns` must equal. */
  readonly values: readonly Value[];
  /** The position of the parent's delete that caused it. */
  readonly position: EventPosition;
  /** The parent table whose delete caused it, and the constraint names from it down to `table`. */
  readonly cause: { readonly table: TableRef; readonly constraints: readonly string[] };
  /** Absent: a synthetic change carries no row image (declared so that `c.before` type-checks). */
  readonly before?: undefined;
  readonly after?: undefined;
}

/** What a transaction carries: row changes as logged, and synthetic cascade deletes. */
export type TransactionChange = RowChange | CascadeDeleteChange;

export interface TransactionEvent {
  readonly kind: 'transaction';
  /** GTID of the transaction; absent for anonymous transactions (MySQL gtid_mode=OFF). */
  readonly gtid?: string;
  /** Position of the commit (changes carry the same file/commitPosition with their own index). */
  readonly position: EventPosition;
  /** Resume here to continue right after this transaction (file/pos + GTID state when known). */
  readonly offset: BinlogOffset;
  /** Commit time from the binlog event header (seconds resolution, in ms since the epoch). */
  readonly timestampMs: number;
  /** Row changes of captured tables, in binlog order (with synthetic cascade deletes, guarantee 6). */
  readonly changes: readonly TransactionChange[];
}

export interface DdlEvent {
  readonly kind: 'ddl';
  /** Default database of the statement (the session's `USE`), '' when none. */
  readonly database: string;
  /** The statement text as logged by the server. */
  readonly statement: string;
  readonly gtid?: string;
  readonly position: EventPosition;
  /** Resume here to continue right after the DDL. */
  readonly offset: BinlogOffset;
  readonly timestampMs: number;
}

export interface SnapshotPlanEvent {
  readonly kind: 'snapshot-plan';
  readonly table: TableRef;
  /** Every chunk of the table (including ones finished in an earlier run), as serializable descriptors. */
  readonly chunks: readonly ChunkDescriptor[];
}

/** A chunk as the source reports it: an id unique within the table and its key range (serialized). */
export interface ChunkDescriptor {
  readonly id: string;
  /** Opaque JSON text of the chunk's key range, as produced by the chunk splitter; persist as is. */
  readonly range: string;
}

export interface SnapshotRowsEvent {
  readonly kind: 'snapshot-rows';
  readonly table: TableRef;
  readonly chunk: ChunkDescriptor;
  /** The chunk's rows as of `highWatermark` (see guarantee 2). */
  readonly rows: readonly Row[];
  /** Binlog offset before the chunk's SELECT. */
  readonly lowWatermark: BinlogOffset;
  /** Binlog offset the rows are consistent with; persist `(chunk.id, highWatermark)` as progress. */
  readonly highWatermark: BinlogOffset;
  /** Rows of tables without a primary key carry no identity: downstream cannot upsert them. */
  readonly keyless: boolean;
}

/**
 * 'catch-up' / 'caught-up' bracket a binlog pass made before a resumed snapshot reads its remaining
 * chunks, when a captured table changed while floe was stopped (source-stream.ts): the DDL is applied in
 * binlog order first, so the remaining chunks are read and written with the new definition.
 */
type Phase = 'snapshot' | 'handover' | 'streaming' | 'catch-up' | 'caught-up';

export interface PhaseEvent {
  readonly kind: 'phase';
  readonly phase: Phase;
  /**
   * For 'handover': where the binlog is read from (lowest chunk high watermark). For 'catch-up' and
   * 'caught-up': the server position the pass reads up to — at 'caught-up', every change of a
   * finished chunk's keys up to it has been delivered.
   */
  readonly offset?: BinlogOffset;
}

export interface ProgressEvent {
  readonly kind: 'progress';
  /** A transaction boundary at or after everything emitted so far; safe to resume from. */
  readonly offset?: BinlogOffset;
  readonly chunksDone?: number;
  readonly chunksTotal?: number;
}

export type BinlogEvent = TransactionEvent | DdlEvent | ProgressEvent;
export type SourceEvent = SnapshotPlanEvent | SnapshotRowsEvent | PhaseEvent | BinlogEvent;

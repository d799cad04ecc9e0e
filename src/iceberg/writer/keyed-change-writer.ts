/**
 * The writer of a keyed table's changes in one checkpoint (modes `upsert` and `append-only`; Java
 * `BaseTaskWriter.BaseEqualityDeltaWriter`, iceberg-rust `DeltaWriter`; docs/iceberg-writer-checklist.md
 * §4.3; docs/design.md §4):
 *
 *   insert/update → write(row) + deleteKey(key) of the row it replaces (in that order: one probe
 *                   of the key map for both, `replace`); an update whose key changed also
 *                   deleteKey(old key) first
 *   delete        → deleteKey(key)
 *   deleteKey(k)  → k written earlier in this checkpoint: remove that row by position (v2 position
 *                   delete, v3 deletion vector); otherwise an equality delete of the key columns —
 *                   or, with a key index (deletion-vector upserts), a DV entry on the committed row.
 *
 * With a key index (deletion-vector upserts) the lookups of committed rows wait, as bare keys, until
 * the checkpoint's commit asks for them (`lookUpCommitted`): then they are made at once, numeric keys
 * in ascending order, so that they walk the index's sorted runs and hash in order instead of probing
 * it at random per change (memory-key-index.ts). A writer opened while the table's previous
 * checkpoint is still being committed, or while its index is built from the lake in another thread
 * (key-index-lifecycle.ts), gets its index later still (`useIndex`). The lookups touch nothing the
 * rest of a step reads (only the DV targets and the keys whose committed row is deleted, which only
 * lookups read), so making them later, and in another order, changes no outcome.
 *
 * The in-checkpoint map key → (data file, position) is the only per-row state; rows themselves go to
 * the data sink. Once a key has been equality-deleted in this checkpoint it is remembered, so the key
 * is never equality-deleted twice in one commit. `append-only` (initial snapshot rows into keys that
 * cannot exist yet, docs/design.md §2.3): an insert writes no equality delete for an unseen key and
 * asks no key index (DV mode) about it.
 */
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { ChangeSinks, ModeWriter } from './change-sinks.js';
import type { KeyIndex, KeyIndexDelta } from '../keyindex/key-index.js';
import type { DataFileHandle, RowLocation } from './positional-data-writer.js';
import type { RowChange } from './row-change.js';
import type { KeyId, TableKey } from '../keyindex/table-key.js';
import { KeyLocations } from '../keyindex/key-locations.js';

const SUBSYSTEM = 'iceberg.writer';

/** What cascade-removals.ts asks of the keyed writer. */
export interface KeyIndexedWriter {
  lookUpCommitted(): void;
}

export class KeyedChangeWriter implements ModeWriter, KeyIndexedWriter {
  /**
   * Key → where its live row written in this checkpoint is: the index of its file in `rowFiles` and
   * its position (key-locations.ts, no object per row: it holds one entry per row written, and a
   * snapshot checkpoint writes hundreds of thousands — hot path, and what the checkpoint's memory
   * is mostly made of).
   */
  private keys: KeyLocations;
  /** The data files rows of this checkpoint went to. */
  private readonly rowFiles: DataFileHandle[] = [];
  /** Keys an equality delete of this checkpoint already covers. */
  private readonly eqDeleted = new Set<KeyId>();
  /**
   * DV mode: keys whose committed row this checkpoint deletes, each once: the sink's deletion
   * vectors say whether a committed row is deleted already (the index gives each live row its own
   * position), so no set of keys is kept beside them.
   */
  private readonly indexDeleted: KeyId[] = [];

  /** DV mode: the keys whose committed row is to be looked up (`lookUpCommitted`). */
  private readonly waiting: KeyId[] = [];
  /** Deletion-vector upserts: committed rows are found through a key index (given now or later). */
  private readonly dvMode: boolean;

  constructor(
    private readonly mode: 'upsert' | 'append-only',
    private readonly key: TableKey,
    private readonly sinks: ChangeSinks,
    /** DV mode: the index of the table's live rows as of the snapshot this checkpoint builds on. */
    private keyIndex: KeyIndex | undefined,
    /** DV mode with the index handed in later (`useIndex`); `keyIndex` is then undefined. */
    indexLater = false,
    /** Rows the checkpoint is expected to write: the key map is sized for them at once, not grown (rehashed) on the way. */
    expectedRows = 0,
  ) {
    this.keys = new KeyLocations(expectedRows);
    this.dvMode = keyIndex !== undefined || indexLater;
  }

  /** Whether the writer still waits for its key index (`useIndex`). */
  get awaitsIndex(): boolean {
    return this.dvMode && this.keyIndex === undefined;
  }

  /**
   * DV mode: the committed row of key `k` (a cascaded child, found through its FK index) is to be
   * removed — only the committed one: a row of `k` this checkpoint wrote was matched by position,
   * or does not reference the deleted parent (delete-matching.ts).
   */
  deleteCommittedKey(k: KeyId): void {
    if (!this.dvMode) throw new FloeError(SUBSYSTEM, 'internal', 'deleteCommittedKey: this writer has no key index');
    this.waiting.push(k);
  }

  /** DV mode: the index at last (see the header). */
  useIndex(index: KeyIndex): void {
    if (!this.awaitsIndex) throw new FloeError(SUBSYSTEM, 'internal', 'useIndex: this writer was given its key index already, or upserts without one');
    this.keyIndex = index;
  }

  /**
   * DV mode: makes the lookups of committed rows that wait (see the header) — numeric keys in
   * ascending order, each once — giving each committed row found a DV entry. Needs the index.
   */
  lookUpCommitted(): void {
    const index = this.keyIndex;
    const waiting = this.waiting;
    if (!this.dvMode || waiting.length === 0) return;
    if (!index) throw new FloeError(SUBSYSTEM, 'internal', 'the lookups of committed rows were asked for before the writer had its key index (useIndex)');
    let numbers = 0;
    for (let i = 0; i < waiting.length; i++) if (typeof waiting[i] === 'number') numbers++;
    const sorted = new Float64Array(numbers);
    let n = 0;
    for (let i = 0; i < waiting.length; i++) {
      const k = waiting[i]!;
      if (typeof k === 'number') sorted[n++] = k;
      else this.deleteCommitted(index, k);
    }
    sorted.sort();
    for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) this.deleteCommitted(index, sorted[i]!);
    waiting.length = 0;
  }

  step(change: Exclude<RowChange, { op: 'delete-matching' }>): Promise<void> | undefined {
    switch (change.op) {
      case 'insert': {
        const after = this.key.checkRow(change.after, 'insert: after');
        const k = this.key.keyOfRow(after, 'insert');
        // append-only: the key cannot be committed (see the header), so only a row of this
        // checkpoint can hold it — neither an equality delete nor the key index is consulted (a
        // snapshot row looks up nothing but this checkpoint's own keys)
        return this.replace(k, after, this.mode === 'upsert');
      }
      case 'update': {
        const after = this.key.checkRow(change.after, 'update: after');
        const newKey = this.key.keyOfRow(after, 'update');
        // The old key: of the before image (a binlog UPDATE; its values are taken only when the key
        // changed), else of the explicit key, else the after image's.
        const before = change.key === undefined && change.before !== undefined ? this.key.checkRow(change.before, 'update: before') : undefined;
        const given = before ? undefined : (this.oldKeyValues(change) ?? this.key.valuesOf(after));
        const oldKey = before ? this.key.keyOfRow(before, 'update: key') : this.key.encode(given!, 'update: key');
        if (oldKey !== newKey) {
          const deleted = this.deleteKey(oldKey, given ?? this.key.valuesOf(before!));
          if (deleted) return deleted.then(() => this.replace(newKey, after, true));
        }
        return this.replace(newKey, after, true);
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

  private oldKeyValues(change: RowChange): Value[] | undefined {
    if (change.key !== undefined) return this.key.explicitToSchemaOrder(change.key);
    if (change.before !== undefined) return this.key.valuesOf(this.key.checkRow(change.before, `${change.op}: before`));
    return undefined;
  }

  /**
   * The row of `k` is `row` now: `row` written, and the row it replaces removed — by position when
   * this checkpoint wrote it, else (`committedToo`) the committed one (deleteUnwritten). The row goes
   * to its file first and the key map is probed once for both (`swap`: where it is now, where it was):
   * a delete before the write made two probes of a key the map mostly lacks. The order changes no
   * outcome — the removal and the new row land in the same commit. Closures only on the (rare)
   * asynchronous paths.
   */
  private replace(k: KeyId, row: Row, committedToo: boolean): Promise<void> | undefined {
    // the key's values are for an equality delete: none with a key index (DV mode) or in append-only
    const values = committedToo && !this.dvMode ? this.key.valuesOf(row) : undefined;
    const loc = this.sinks.data.write(row);
    if (loc instanceof Promise) return loc.then((l) => this.placed(k, l, committedToo, values));
    return this.placed(k, loc, committedToo, values);
  }

  /** `k`'s row written at `loc`: the map says so, and the row it replaced is removed (see `replace`). */
  private placed(k: KeyId, loc: RowLocation, committedToo: boolean, values: Value[] | undefined): Promise<void> | undefined {
    // The file's index is kept on its handle: a partitioned table's consecutive rows go to different
    // files, and looking the file up in `rowFiles` would cost a scan per row.
    let i = loc.file.rowFileIndex;
    if (i < 0) i = loc.file.rowFileIndex = this.rowFiles.push(loc.file) - 1;
    const keys = this.keys;
    if (keys.swap(k, i, loc.pos)) {
      this.sinks.positions.deleteAt({ file: this.rowFiles[keys.foundSlot]!, pos: keys.foundPos });
      return undefined;
    }
    return committedToo ? this.deleteUnwritten(k, values) : undefined;
  }

  /** Removes by position the row of key `k` this checkpoint wrote, if any; whether there was one. */
  private deleteWritten(k: KeyId): boolean {
    const keys = this.keys;
    if (!keys.take(k)) return false;
    this.sinks.positions.deleteAt({ file: this.rowFiles[keys.foundSlot]!, pos: keys.foundPos });
    return true;
  }

  /**
   * Removes the live row of key `k`: by position when this checkpoint wrote it; otherwise by an
   * equality delete of `values` (schema order) unless one was already written for `k` in this
   * checkpoint. `values` undefined = no equality delete for an unseen key (append-only inserts).
   */
  private deleteKey(k: KeyId, values: Value[] | undefined): Promise<void> | undefined {
    if (this.deleteWritten(k)) return undefined;
    return this.deleteUnwritten(k, values);
  }

  /** `deleteKey` of a key this checkpoint holds no row of: the committed row (index, or equality delete). */
  private deleteUnwritten(k: KeyId, values: Value[] | undefined): Promise<void> | undefined {
    if (this.dvMode) {
      this.waiting.push(k);
      return undefined;
    }
    if (values === undefined || this.eqDeleted.has(k)) return undefined;
    this.sinks.stats.equalityDeletes++;
    const written = this.sinks.equality.addOne(values);
    if (written) {
      return written.then(() => {
        this.eqDeleted.add(k);
      });
    }
    this.eqDeleted.add(k);
    return undefined;
  }

  /** DV mode: the committed row of `k`, if the index knows one, gets a DV entry (once per checkpoint). */
  private deleteCommitted(index: KeyIndex, k: KeyId): void {
    // the index knows every live row, so a key it lacks has no row to delete
    const file = index.find(k);
    if (file && this.sinks.positions.deleteCommittedAt(file, index.foundPos)) this.indexDeleted.push(k);
  }

  /** DV mode, after the data files are finished: how the table's rows move once this commit lands. */
  indexDelta(): KeyIndexDelta {
    // the delta reads this checkpoint's key map itself (clear() gives the writer a new one)
    const keys = this.keys;
    const files = this.rowFiles.map((h) => h.dataFile!);
    const deadRows = this.sinks.positions.committedTargets().map((t) => ({ filePath: t.dataFilePath, positions: t.positions }));
    return { setCount: keys.size, forEachSet: (each) => keys.forEach((k, i, pos) => each(k, files[i]!, pos)), deleted: this.indexDeleted.slice(), deadRows };
  }

  clear(): void {
    this.waiting.length = 0;
    // a new map, not the old one emptied: the index delta of the checkpoint may still read it
    this.keys = new KeyLocations();
    this.rowFiles.length = 0;
    this.eqDeleted.clear();
    this.indexDeleted.length = 0;
  }
}

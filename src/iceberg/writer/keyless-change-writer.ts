/**
 * The writer of a keyless table's changes in one checkpoint (mode `append`: tables without a primary
 * key; docs/design.md §4). Every insert is appended; the row is its own identity. A delete (or the
 * old image of an update) removes ONE matching row written in this checkpoint by position if there
 * is one — MySQL deletes exactly one row per event, even among identical rows. Otherwise:
 *
 * - format v3 with a row index (value-index.ts, checkpoint/value-indexes.ts): ONE committed copy,
 *   found through the index, gets a deletion-vector entry — a copy this checkpoint already deleted
 *   is skipped (the DV sink holds each position once), so n deletes of a row remove n copies. The
 *   committed rows of a cascade child come the same way, at the commit (`deleteCommittedAt`), from
 *   its FK index;
 * - otherwise (format v2, or a table beyond the row index's bounds) an equality delete of the whole
 *   row over every non-float primitive column.
 *
 * Delivery note: that equality delete removes ALL identical older copies (and rows differing only in
 * float/double columns, which equality deletes cannot use): for keyless tables with duplicate rows
 * the lake may hold fewer copies than MySQL. The row index has no such gap. Replays of already-committed inserts duplicate rows
 * (at-least-once, as every keyless CDC sink: docs/seeds/seed-003.txt §4-3); resuming exactly from the
 * table's committed offset avoids them.
 */
import { FloeError } from '../../util/errors.js';
import type { Row } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import type { ChangeSinks, ModeWriter } from './change-sinks.js';
import type { RowLocation } from './positional-data-writer.js';
import type { RowChange } from './row-change.js';
import type { KeyId, TableKey } from '../keyindex/table-key.js';
import type { ValueIndex, ValueIndexDelta } from '../keyindex/value-index.js';

const SUBSYSTEM = 'iceberg.writer';

export class KeylessChangeWriter implements ModeWriter {
  /** Whole-row key → the live copies of the row written in this checkpoint. */
  private readonly rows = new Map<KeyId, RowLocation[]>();
  /** With a row index: the row of each committed copy this checkpoint deleted (once per copy). */
  private readonly committedDeletes: KeyId[] = [];

  constructor(
    /** `TableKey.wholeRow` of the schema. */
    private readonly key: TableKey,
    private readonly sinks: ChangeSinks,
    private readonly tableLocation: string,
    /** Format v3: the table's live rows as of the snapshot this checkpoint builds on (see the header). */
    private readonly rowIndex: ValueIndex | undefined,
  ) {}

  async step(change: Exclude<RowChange, { op: 'delete-matching' }>): Promise<void> {
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
    const loc = await this.sinks.data.write(row);
    const list = this.rows.get(k);
    if (list) list.push(loc);
    else this.rows.set(k, [loc]);
  }

  private async deleteRow(row: Row): Promise<void> {
    const k = this.key.keyOfRow(row);
    const list = this.rows.get(k);
    let loc = list?.pop();
    // a row a matching delete already removed is not a live copy
    while (loc && loc.file.deleted?.has(loc.pos)) loc = list!.pop();
    if (list && list.length === 0) this.rows.delete(k);
    if (loc) {
      this.sinks.positions.deleteAt(loc);
      return;
    }
    if (this.rowIndex) {
      // the index knows every live row: a row it lacks has no copy to delete
      this.rowIndex.rowsOf(k, (file, pos) => {
        if (!this.sinks.positions.deleteCommittedAt(file, pos)) return false; // a copy this checkpoint took already
        this.committedDeletes.push(k);
        return true;
      });
      return;
    }
    if (this.key.positions.length === 0) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `cannot delete a row of keyless table ${this.tableLocation}: it has no column an equality delete can use (all are float/double or nested); give the table a primary key`);
    }
    this.sinks.stats.equalityDeletes++;
    await this.sinks.equality.addOne(this.key.valuesOf(row));
  }

  /**
   * With a row index: the committed copy at `pos` of `file` (holding row `row`) goes — a cascade's
   * child found through the table's FK index. A copy this checkpoint deleted already is skipped.
   */
  deleteCommittedAt(file: DataFile, pos: number, row: KeyId): void {
    if (this.sinks.positions.deleteCommittedAt(file, pos)) this.committedDeletes.push(row);
  }

  /** With a row index, after the data files are finished: how the table's rows move once this commit lands. */
  rowIndexDelta(): ValueIndexDelta {
    const live: [KeyId, RowLocation][] = [];
    for (const [k, list] of this.rows) for (const loc of list) if (!loc.file.deleted?.has(loc.pos) && loc.file.dataFile) live.push([k, loc]);
    const deadRows = this.sinks.positions.committedTargets().map((t) => ({ filePath: t.dataFilePath, positions: t.positions }));
    return {
      setCount: live.length,
      forEachSet: (each) => {
        for (const [k, loc] of live) each(k, loc.file.dataFile!, loc.pos, undefined);
      },
      deadRows,
    };
  }

  /** With a row index: the rows whose committed copies this checkpoint deleted, a row once per copy (to locate them again). */
  deletedCommitted(): KeyId[] {
    return this.committedDeletes.slice();
  }

  clear(): void {
    this.committedDeletes.length = 0;
    this.rows.clear();
  }
}

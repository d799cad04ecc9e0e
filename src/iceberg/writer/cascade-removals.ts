/**
 * The rows a cascade child's matching deletes remove, named by the values other tables reference
 * them by (`CarriedColumns`: the columns their `ON DELETE CASCADE` references) as each delete is applied (table-change-writer.ts `reportCascadeRemovals`) — what the
 * pipeline needs to remove, in turn, the rows of those tables (pipeline/key-cascades.ts): the binlog
 * carries neither.
 *
 * A matching delete removes the rows holding its FK value that are live at its point of the
 * checkpoint: rows this checkpoint wrote (delete-matching.ts pushes their carried values to
 * `written`), and committed rows, found through the FK index of the snapshot the checkpoint builds on
 * — minus the committed rows an earlier change of the checkpoint replaced or deleted (a keyed
 * child's key lookups waiting are made first, a keyless child's deletes were placed as they came,
 * so the deletion vectors say so) or an earlier matching delete removed. A committed row's values
 * come from its primary key (the index's identity) when the carried columns are key columns, else
 * from its data file, read when they are taken.
 */
import type { KeyIndexedWriter } from './keyed-change-writer.js';
import type { PositionDeleteSink } from './position-delete-sink.js';
import type { ValueIndex } from '../keyindex/value-index.js';
import type { KeyId } from '../keyindex/table-key.js';
import { decodeKey } from '../keyindex/row-key.js';
import type { Row, Value } from '../../model/values.js';
import type { Schema } from '../spec/schema.js';
import type { DataFile } from '../spec/data-file.js';
import type { IcebergType } from '../spec/types.js';
import { readRowsAt, type RowsAtTable } from './rows-at.js';

/** Removed rows: the carried columns' names (schema order) and each row's values of them. */
export interface RemovedRows {
  readonly names: readonly string[];
  readonly rows: readonly Value[][];
}

/** The columns a removal reports, resolved against the writer's schema. */
export class CarriedColumns {
  readonly names: string[];
  readonly positions: number[];
  readonly fieldIds: number[];
  /** Positions of the carried columns among the primary key's (schema order); undefined when one is not a key column. */
  private readonly inKey: number[] | undefined;
  private readonly keyTypes: IcebergType[];

  /** Undefined when a name is not a top-level field of `schema` (dropped by a transform, say). */
  static resolve(schema: Schema, names: readonly string[]): CarriedColumns | undefined {
    const positions = names.map((n) => schema.fields.findIndex((f) => f.name === n || f.name.toLowerCase() === n.toLowerCase()));
    if (positions.some((p) => p < 0)) return undefined;
    return new CarriedColumns(schema, [...new Set(positions)].sort((a, b) => a - b));
  }

  private constructor(schema: Schema, positions: number[]) {
    this.positions = positions;
    this.names = positions.map((p) => schema.fields[p]!.name);
    this.fieldIds = positions.map((p) => schema.fields[p]!.id);
    const key = schema.fields.filter((f) => schema.identifierFieldIds.includes(f.id));
    this.keyTypes = key.map((f) => f.type);
    const inKey = this.fieldIds.map((id) => key.findIndex((f) => f.id === id));
    this.inKey = inKey.every((i) => i >= 0) ? inKey : undefined;
  }

  of(row: Row): Value[] {
    return this.positions.map((p) => row[p] ?? null);
  }

  /** The values of a row from its primary key alone, when the carried columns are key columns. */
  fromKey(owner: KeyId): Value[] | undefined {
    if (!this.inKey) return undefined;
    const key = decodeKey(this.keyTypes, owner, 'removed cascade child');
    return this.inKey.map((i) => key[i]!);
  }
}

export class CascadeRemovals {
  /** Carried values of removed rows not taken yet; delete-matching.ts adds those of this checkpoint's rows. */
  written: Value[][] = [];
  /** Removed committed rows whose values must be read from their files. */
  private unread: { file: DataFile; pos: number }[] = [];
  /** The committed rows (file and position) a matching delete of this checkpoint removed. */
  private readonly removedCommitted = new Set<string>();

  constructor(
    private readonly fkIndexes: ReadonlyMap<string, ValueIndex>,
    /** A keyed child's writer (its lookups of committed rows are made before each delete); undefined: keyless. */
    private readonly keyed: KeyIndexedWriter | undefined,
    private readonly positions: PositionDeleteSink,
    private readonly carried: CarriedColumns,
    private readonly table: RowsAtTable,
  ) {}

  /** The committed rows of FK column set `fields` holding the FK value `k` are removed now. */
  committed(fields: string, k: KeyId): void {
    this.keyed?.lookUpCommitted();
    this.fkIndexes.get(fields)!.rowsOf(k, (file, pos, owner) => {
      const at = `${pos}@${file.filePath}`;
      if (owner === undefined || this.positions.removedCommitted(file, pos) || this.removedCommitted.has(at)) return;
      this.removedCommitted.add(at);
      const values = this.keyed ? this.carried.fromKey(owner) : undefined;
      if (values) this.written.push(values);
      else this.unread.push({ file, pos });
    });
  }

  /** The rows removed since the last call. */
  async take(): Promise<RemovedRows> {
    const rows = this.written;
    this.written = [];
    const unread = this.unread;
    this.unread = [];
    if (unread.length > 0) rows.push(...(await readRowsAt(this.table, this.carried.fieldIds, unread)));
    return { names: this.carried.names, rows };
  }
}

/**
 * The rows a keyed cascade child's matching deletes remove, named by primary key as each delete is
 * applied (table-change-writer.ts `reportCascadeRemovals`) — what the pipeline needs to remove, in
 * turn, the rows of tables that reference the child by its primary key (pipeline/cascade.ts): the
 * binlog carries neither.
 *
 * A matching delete removes the rows holding its FK value that are live at its point of the
 * checkpoint: rows this checkpoint wrote (delete-matching.ts pushes their keys to `written`), and
 * committed rows, found through the FK index of the snapshot the checkpoint builds on — minus the
 * committed rows an earlier change of the checkpoint replaced or deleted (the key lookups waiting
 * are made first, so the deletion vectors say so) or an earlier matching delete removed.
 */
import type { KeyIndexedWriter } from './keyed-change-writer.js';
import type { PositionDeleteSink } from './position-delete-sink.js';
import type { ValueIndex } from '../keyindex/value-index.js';
import type { KeyId } from '../keyindex/table-key.js';
import { decodeKey } from '../keyindex/row-key.js';
import type { Value } from '../../model/values.js';
import type { Schema } from '../spec/schema.js';

/** Removed rows by primary key: the key's field names (schema order) and each row's values. */
export interface RemovedKeys {
  readonly names: readonly string[];
  readonly keys: readonly Value[][];
}

export class CascadeRemovals {
  /** Keys of removed rows not taken yet; delete-matching.ts adds those of this checkpoint's rows. */
  written: KeyId[] = [];
  /** Keys whose committed row a matching delete of this checkpoint removed. */
  private readonly removedCommitted = new Set<KeyId>();

  constructor(
    private readonly fkIndexes: ReadonlyMap<string, ValueIndex>,
    private readonly keyed: KeyIndexedWriter,
    private readonly positions: PositionDeleteSink,
    private readonly schema: Schema,
  ) {}

  /** The committed rows of FK column set `fields` holding the FK value `k` are removed now. */
  committed(fields: string, k: KeyId): void {
    this.keyed.lookUpCommitted();
    this.fkIndexes.get(fields)!.rowsOf(k, (file, pos, owner) => {
      if (owner === undefined || this.positions.removedCommitted(file, pos) || this.removedCommitted.has(owner)) return;
      this.removedCommitted.add(owner);
      this.written.push(owner);
    });
  }

  /** The keys of the rows removed since the last call, as values. */
  take(): RemovedKeys {
    const ids = this.written;
    this.written = [];
    const fields = this.schema.fields.filter((f) => this.schema.identifierFieldIds.includes(f.id));
    const types = fields.map((f) => f.type);
    return { names: fields.map((f) => f.name), keys: ids.map((id) => decodeKey(types, id, 'removed cascade child')) };
  }
}

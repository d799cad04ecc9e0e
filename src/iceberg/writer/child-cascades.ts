/**
 * The matching deletes of a cascade child in one checkpoint (delete-matching.ts): each removes the
 * child rows this checkpoint wrote by position at once. The committed ones are removed at the commit
 * through the child's FK index, by deletion vectors (`dv`: a v3 child with a key or row index), or
 * else by an equality delete on the FK columns. On request (`report`) each delete also names the
 * rows it removed (cascade-removals.ts).
 */
import type { Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import type { ValueIndex } from '../keyindex/value-index.js';
import type { KeyId } from '../keyindex/table-key.js';
import type { MatchingDelete, MatchingDeletes } from './delete-matching.js';
import type { KeyIndexedWriter } from './keyed-change-writer.js';
import type { PositionDeleteSink } from './position-delete-sink.js';
import type { RowLocation } from './positional-data-writer.js';
import type { WriterStats } from './writer-stats.js';
import { CascadeRemovals, type CarriedColumns, type RemovedRows } from './cascade-removals.js';
import type { RowsAtTable } from './rows-at.js';

export class ChildCascades {
  /** Matching deletes of committed rows to locate at the commit: [FK column set, FK value, values]. */
  private readonly deferred: [string, KeyId, readonly Value[]][] = [];
  private removals: CascadeRemovals | undefined;

  constructor(
    private readonly matching: MatchingDeletes,
    /** Committed rows are located through the FK index at the commit (deletion vectors). */
    readonly dv: boolean,
    private readonly stats: WriterStats,
    /** The columns removals report (undefined: they cannot). */
    private readonly carried: CarriedColumns | undefined,
  ) {}

  async apply(change: MatchingDelete, positions: PositionDeleteSink): Promise<void> {
    const deleteAt = (loc: RowLocation) => positions.deleteAt(loc);
    if (!this.dv) {
      await this.matching.apply(change, deleteAt);
      this.stats.equalityDeletes++;
      return;
    }
    const report = this.removals;
    const defer = (fields: string, k: KeyId, values: readonly Value[]) => {
      this.deferred.push([fields, k, values]);
      report?.committed(fields, k);
    };
    await this.matching.apply(change, deleteAt, defer, report?.written);
  }

  /** From now on each delete names the rows it removes (`take`); false without an FK index for every set. */
  report(fkIndexes: ReadonlyMap<string, ValueIndex> | undefined, keyed: KeyIndexedWriter | undefined, positions: PositionDeleteSink, table: RowsAtTable): boolean {
    if (!this.dv || !this.carried || !fkIndexes || this.matching.fieldSets.some((set) => !fkIndexes.has(set.join(',')))) return false;
    this.removals ??= new CascadeRemovals(fkIndexes, keyed, positions, this.carried, table);
    return true;
  }

  /** The rows removed since the last call (undefined: not reporting). */
  async take(): Promise<RemovedRows | undefined> {
    return this.removals?.take();
  }

  /** The FK column sets the commit must locate committed rows on (undefined: none). */
  get toLocate(): number[][] | undefined {
    return this.deferred.length > 0 ? this.matching.fieldSets : undefined;
  }

  /** The committed rows of each deferred delete, through `fkIndexes`, go to `remove`; without an index for a set, an equality delete. */
  async resolve(fkIndexes: ReadonlyMap<string, ValueIndex> | undefined, remove: (file: DataFile, pos: number, owner: KeyId | undefined) => void): Promise<void> {
    for (const [fields, k, values] of this.deferred) {
      const index = fkIndexes?.get(fields);
      if (index) {
        index.rowsOf(k, remove);
        continue;
      }
      await this.matching.addEquality(fields, values);
      this.stats.equalityDeletes++;
    }
    this.deferred.length = 0;
  }
}

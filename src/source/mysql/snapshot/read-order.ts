/**
 * The order a snapshot reads its chunks in when some tables must be read after others: a table
 * whose rows an `ON DELETE CASCADE` removes through the keys of its parent's removed rows
 * (foreign-keys.ts `KeyCascadeRule`) starts only when every chunk of that parent has been read.
 *
 * Why: the hand-over replays a parent delete against the lake, where floe finds the child rows it
 * removed, and through their keys the grandchild rows. A grandchild chunk read BEFORE that delete
 * holds rows it removed; they are found only if every child chunk was read before the delete too —
 * which holds when all child chunks were read before the first grandchild chunk began. (Chunks
 * read after the delete hold neither.)
 *
 * A cycle among such tables is cut where the depth-first order meets it (those tables read as if
 * unrelated; the cascade plan warns about nothing there, so this is a documented limit only).
 */
import { tableKey, type TableId } from '../schema/table-schema.js';

export class ReadOrder<T extends { readonly table: TableId }> {
  /** The chunks, every table's after the tables it must follow. */
  readonly items: T[];
  private readonly remaining = new Map<string, number>();
  private readonly waiters = new Map<string, (() => void)[]>();
  private readonly after = new Map<string, string[]>();
  private cancelled = false;

  constructor(items: readonly T[], readAfter: ((table: TableId) => readonly TableId[]) | undefined) {
    const byTable = new Map<string, T[]>();
    for (const item of items) {
      const k = tableKey(item.table);
      const list = byTable.get(k);
      if (list) list.push(item);
      else byTable.set(k, [item]);
    }
    const order: string[] = [];
    const state = new Map<string, 'visiting' | 'done'>();
    const visit = (k: string, table: TableId) => {
      if (state.has(k)) return;
      state.set(k, 'visiting');
      const before: string[] = [];
      for (const p of readAfter?.(table) ?? []) {
        const pk = tableKey(p);
        if (pk === k || !byTable.has(pk)) continue;
        visit(pk, p);
        if (state.get(pk) === 'done') before.push(pk); // 'visiting': a cycle, cut here
      }
      this.after.set(k, before);
      state.set(k, 'done');
      order.push(k);
    };
    for (const [k, list] of byTable) visit(k, list[0]!.table);
    this.items = order.flatMap((k) => byTable.get(k)!);
    for (const [k, list] of byTable) this.remaining.set(k, list.length);
  }

  /** Resolves when every table `item`'s table must follow has been read (or the read was cancelled). */
  async ready(item: T): Promise<void> {
    for (const k of this.after.get(tableKey(item.table)) ?? []) {
      while (!this.cancelled && (this.remaining.get(k) ?? 0) > 0) {
        await new Promise<void>((resolve) => {
          const list = this.waiters.get(k);
          if (list) list.push(resolve);
          else this.waiters.set(k, [resolve]);
        });
      }
    }
  }

  /** `item` has been read. */
  done(item: T): void {
    const k = tableKey(item.table);
    const left = (this.remaining.get(k) ?? 1) - 1;
    this.remaining.set(k, left);
    if (left === 0) this.wake(k);
  }

  cancel(): void {
    this.cancelled = true;
    for (const k of [...this.waiters.keys()]) this.wake(k);
  }

  private wake(k: string): void {
    const list = this.waiters.get(k) ?? [];
    this.waiters.delete(k);
    for (const w of list) w();
  }
}

/**
 * Reproducing ON DELETE CASCADE (foreign-keys.ts explains why the binlog lacks the child deletes):
 * every logged DELETE of a row of a trigger table is followed, in the same transaction and at the
 * same position, by one synthetic `delete-matching` change per cascade rule — "delete every row of
 * the child whose FK columns equal these values" (events.ts). Downstream this becomes an Iceberg
 * equality delete on the child's FK columns (src/iceberg/writer/delete-matching.ts).
 *
 * Where it applies: the binlog decoding (`decodeTransaction`) calls `expand` on every transaction
 * it hands out, so streaming, the hand-over and the snapshot backfill windows all see the same
 * synthetic changes. DBLog interplay:
 * - backfill: a chunk of a child table applies the window's changes in order, the synthetic deletes
 *   included (snapshot-reader.ts reads the trigger tables' events in its window too), so a chunk's
 *   rows at its high watermark no longer hold children whose parent was deleted inside the window;
 * - hand-over: a synthetic delete is dropped when it is not after the high watermark of ANY chunk
 *   of the child table (every chunk already reflects it) and passed otherwise (handover.ts).
 *   Remaining edge case (documented in handover.ts and docs/operations.md): when some child chunks were read
 *   before the parent delete and some after, the delete is applied to the whole child table — a
 *   child row inserted between the parent delete and the later chunks' high watermark with the SAME
 *   FK values (the parent key deleted and re-inserted, and a child attached to it, inside that
 *   window) is then deleted too. Such a row reappears only if it changes again.
 *
 * Values are taken from the trigger row's before image by column name, with the table mappings
 * current when the transaction is decoded (a DDL renaming an FK column is followed by a re-plan).
 * A trigger row with a NULL in any matched column deletes nothing (no child row can reference it).
 * A delete logged with foreign_key_checks=0 (RowChange.noForeignKeyChecks) cascaded nothing in the
 * server, so it gets no synthetic deletes either.
 */
import type { Row, Value } from '../../../model/values.js';
import type { CascadeDeleteChange, TransactionChange, TransactionEvent } from '../events.js';
import type { CascadeRule } from '../schema/foreign-keys.js';
import { tableKey } from '../schema/table-schema.js';
import type { MappedTable } from '../schema/type-mapping.js';

interface ResolvedRule {
  readonly rule: CascadeRule;
  /** Indexes of the trigger columns in the trigger table's rows (undefined: a column is gone). */
  readonly indexes: readonly number[] | undefined;
}

export class CascadeExpander {
  private readonly byTrigger = new Map<string, CascadeRule[]>();
  private resolved = new Map<string, ResolvedRule[]>();

  /**
   * `tables` gives the current mapping of a captured table (the source's decoding mappings), so that
   * column positions follow DDL.
   */
  constructor(
    readonly rules: readonly CascadeRule[],
    private readonly tables: (key: string) => MappedTable | undefined,
  ) {
    for (const r of rules) {
      const k = tableKey(r.trigger);
      const list = this.byTrigger.get(k) ?? [];
      list.push(r);
      this.byTrigger.set(k, list);
    }
  }

  /** Whether deletes of table `key` ("db.table") cascade to a captured table. */
  triggers(key: string): boolean {
    return this.byTrigger.has(key);
  }

  /** Forget resolved column positions (call after a table's mapping changed). */
  invalidate(): void {
    this.resolved = new Map();
  }

  get isEmpty(): boolean {
    return this.byTrigger.size === 0;
  }

  /** The transaction with a synthetic delete after every trigger-row delete; the same object when none. */
  expand(t: TransactionEvent): TransactionEvent {
    if (this.byTrigger.size === 0) return t;
    let out: TransactionChange[] | undefined;
    for (let i = 0; i < t.changes.length; i++) {
      const c = t.changes[i]!;
      if (c.op !== 'delete' || !c.before || c.noForeignKeyChecks) {
        out?.push(c);
        continue;
      }
      const rules = this.rulesFor(tableKey(c.table));
      if (rules.length === 0) {
        out?.push(c);
        continue;
      }
      out ??= t.changes.slice(0, i);
      out.push(c);
      for (const r of rules) {
        const values = matchValues(c.before, r);
        if (!values) continue;
        const synthetic: CascadeDeleteChange = {
          table: r.rule.child,
          op: 'delete-matching',
          columns: r.rule.childColumns,
          values,
          position: c.position,
          cause: { table: c.table, constraints: r.rule.via },
        };
        out.push(synthetic);
      }
    }
    return out ? { ...t, changes: out } : t;
  }

  private rulesFor(key: string): ResolvedRule[] {
    let r = this.resolved.get(key);
    if (!r) {
      const mapped = this.tables(key);
      r = (this.byTrigger.get(key) ?? []).map((rule) => ({ rule, indexes: mapped ? indexesOf(mapped, rule.triggerColumns) : undefined }));
      this.resolved.set(key, r);
    }
    return r;
  }
}

function indexesOf(table: MappedTable, names: readonly string[]): number[] | undefined {
  const out: number[] = [];
  for (const n of names) {
    const i = table.columns.findIndex((c) => c.column.name.toLowerCase() === n.toLowerCase());
    if (i < 0) return undefined;
    out.push(i);
  }
  return out;
}

function matchValues(row: Row, r: ResolvedRule): Value[] | undefined {
  if (!r.indexes) return undefined;
  const values: Value[] = [];
  for (const i of r.indexes) {
    const v = row[i];
    if (v === null || v === undefined) return undefined;
    values.push(v);
  }
  return values;
}

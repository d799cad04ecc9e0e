/**
 * Cascades the binlog cannot drive (foreign-keys.ts `KeyCascadeRule`): a grandchild that references
 * a cascade child by columns other than the ones the child was matched on (its primary key, a
 * unique key). MySQL removes the child rows of a deleted parent and, in turn, the grandchild rows
 * referencing them, logging neither; the source turns the parent delete into a matching delete of
 * the child (cascade.ts), and here the child rows it removed — named by the referenced values as the
 * child's writer applies it (iceberg/writer/cascade-removals.ts, through the child's FK index in the
 * lake) — become matching deletes of the grandchild, at the same position, before any later change.
 * A self-reference follows level by level.
 *
 * Crash safety rests on two orders:
 * - the checkpoint commits a grandchild before its parent child (checkpoint.ts `commitAfter`): a
 *   restart then never finds the child past a delete the grandchild still has to replay, because
 *   the grandchild's removals are found in the child's rows as they were at that position;
 * - a snapshot reads every chunk of the child before the grandchild's (snapshot/read-order.ts).
 *
 * Delivery note (warned once per table): a child in format v2, or without its key or row index or
 * FK indexes (beyond `iceberg.keyIndexMaxRows` or the memory bound), cannot name the rows it
 * removed, and a column transform on the referenced or the FK columns makes their values differ:
 * the grandchild then keeps orphaned rows in the lake.
 */
import type { MatchingDelete, RemovedRows } from '../iceberg/writer/index.js';
import type { Value } from '../model/values.js';
import { tableKey, type CascadePlan, type KeyCascadeRule } from '../source/mysql/index.js';
import type { PipelineTable } from './tables/pipeline-table.js';

export class KeyCascades {
  private readonly byParent = new Map<string, KeyCascadeRule[]>();

  constructor(readonly plan: CascadePlan) {
    for (const r of plan.keyRules) {
      const k = tableKey(r.parent);
      const list = this.byParent.get(k);
      if (list) list.push(r);
      else this.byParent.set(k, [r]);
    }
  }

  /** Whether rows of table `key` removed by a cascade cascade further (its removals must be followed). */
  isParent(key: string): boolean {
    return this.byParent.has(key);
  }

  rulesOf(key: string): readonly KeyCascadeRule[] {
    return this.byParent.get(key) ?? [];
  }

  /** Tables that must commit before table `key` (the children of its key cascades). */
  commitFirst(key: string): string[] {
    return this.rulesOf(key).map((r) => tableKey(r.child)).filter((k) => k !== key);
  }
}

/**
 * The matching deletes of `child` for the rows `removed` from `parent` under `rule` — or why they
 * cannot be made (a transform on one side, a key column gone): the caller warns.
 */
export function keyCascadeChanges(rule: KeyCascadeRule, removed: RemovedRows, parent: PipelineTable, child: PipelineTable): MatchingDelete[] | string {
  const at = rule.parentColumns.map((c) => removed.names.findIndex((n) => n.toLowerCase() === c.toLowerCase()));
  if (at.some((i) => i < 0)) return `${parent.key}'s writer does not report (${rule.parentColumns.join(', ')}) of the rows it removes`;
  const transformed = [...rule.parentColumns.map((c) => [parent, c] as const), ...rule.childColumns.map((c) => [child, c] as const)].find(([t, c]) =>
    t.prepared.mapping.columns.some((m) => m.name.toLowerCase() === c.toLowerCase() && m.transform !== undefined),
  );
  if (transformed) return `${transformed[0].key}.${transformed[1]} has a column transform, so the stored values of the key and of the foreign key differ`;
  const out: MatchingDelete[] = [];
  for (const row of removed.rows) {
    const values: Value[] = at.map((i) => row[i]!);
    if (values.some((v) => v === null)) continue; // a NULL references nothing
    out.push({ op: 'delete-matching', fields: rule.childColumns, values });
  }
  return out;
}

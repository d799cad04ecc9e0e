/**
 * ON DELETE CASCADE in the pipeline (source cascade.ts / foreign-keys.ts explain why the binlog
 * lacks the child deletes and how the source synthesizes them):
 *
 * - `matchFieldsFor`: from the source's cascade plan (`SourceStream.cascades`, read from the server
 *   before the first event), the FK columns each child table's writer indexes the rows it writes
 *   by, before the first synthetic delete can arrive; the plan's warnings are logged at start.
 * - `cascadeWriterChange`: a synthetic `delete-matching` source change → the writer's matching delete
 *   (src/iceberg/writer/delete-matching.ts): an equality delete on the child's FK fields plus position
 *   deletes for child rows written earlier in the same checkpoint. The values go through the table's
 *   projection, so hashed/masked FK columns are matched in their stored form; an FK column dropped by
 *   a transform cannot be matched (the writer refuses the delete, naming the column).
 *
 * - key-cascades.ts: grandchildren that reference a cascade child by other columns (and deeper
 *   levels of a self-reference), from the child rows a cascade removed (`carryFieldsFor`).
 *
 * What is NOT reproduced (warned, diverges in the lake): ON DELETE SET NULL / SET DEFAULT, ON UPDATE
 * CASCADE / SET NULL, cascades from uncaptured parents, and key cascades of a format-v2 child or
 * one without its indexes (key-cascades.ts).
 */
import type { MatchingDelete } from '../iceberg/writer/index.js';
import type { Row, Value } from '../model/values.js';
import type { CascadeDeleteChange } from '../source/mysql/index.js';
import type { CascadePlan } from '../source/mysql/index.js';
import { tableKey } from '../source/mysql/index.js';
import { FloeError } from '../util/errors.js';

/** The FK field sets a table's writer must index (it is the child of these cascades). */
export function matchFieldsFor(plan: CascadePlan, key: string): string[][] {
  const sets = new Map<string, string[]>();
  for (const r of [...plan.rules, ...plan.keyRules]) {
    if (tableKey(r.child) !== key) continue;
    const names = [...r.childColumns];
    sets.set(names.map((n) => n.toLowerCase()).sort().join('\u0000'), names);
  }
  return [...sets.values()];
}

/** The columns of table `key` other tables' key cascades reference: its removed rows report them (key-cascades.ts). */
export function carryFieldsFor(plan: CascadePlan, key: string): string[] {
  const names = new Map<string, string>();
  for (const r of plan.keyRules) if (tableKey(r.parent) === key) for (const c of r.parentColumns) names.set(c.toLowerCase(), c);
  return [...names.values()];
}

/**
 * The writer change for a synthetic cascade delete: a sparse source row holding the FK values, put
 * through the table's projection (column order, transforms), and the FK column names (Iceberg field
 * names are the MySQL column names).
 */
export function cascadeWriterChange(change: CascadeDeleteChange, project: (row: Row) => Row, sourceColumns: readonly string[]): MatchingDelete {
  const sparse: Value[] = new Array(sourceColumns.length).fill(null);
  change.columns.forEach((name, i) => {
    const at = sourceColumns.findIndex((c) => c.toLowerCase() === name.toLowerCase());
    if (at < 0) {
      throw new FloeError('pipeline.cascade', 'internal', `cascade ${change.cause.constraints.join(' > ')}: ${tableKey(change.table)} has no column ${name} (columns: ${sourceColumns.join(', ')})`);
    }
    sparse[at] = change.values[i]!;
  });
  return { op: 'delete-matching', fields: change.columns, row: project(sparse) };
}

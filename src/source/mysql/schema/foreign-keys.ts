/**
 * Foreign keys among the captured tables, read from `information_schema.REFERENTIAL_CONSTRAINTS`
 * joined with `KEY_COLUMN_USAGE` (same on MySQL 5.7/8.x and MariaDB), and what they mean for CDC.
 *
 * InnoDB executes `ON DELETE CASCADE`, `ON DELETE SET NULL` and `ON UPDATE CASCADE / SET NULL` inside
 * the storage engine: the server writes only the parent's row event to the binlog, never the child
 * rows it changed (MariaDB KB "Replication and Foreign Keys"; MySQL before 9.x alike; recorded by
 * test/source/mysql/binlog's foreign-key test). A CDC reader therefore never sees those child changes.
 *
 * floe reproduces what it can exactly (cascade.ts): ON DELETE CASCADE becomes a synthetic change
 * "delete every child row whose FK columns equal the deleted parent's key". `planCascades` decides,
 * for the captured tables, which constraints that covers and warns about the others — the tables
 * named in a warning will diverge from MySQL whenever such a constraint fires.
 */
import type { MysqlClient } from '../client.js';
import { quoteString } from '../client.js';
import { tableKey, type TableId } from './table-schema.js';
import type { MappedTable } from './type-mapping.js';

type ReferentialAction = 'CASCADE' | 'SET NULL' | 'SET DEFAULT' | 'RESTRICT' | 'NO ACTION';

export interface ForeignKey {
  /** Constraint name (unique per database). */
  readonly name: string;
  readonly child: TableId;
  /** Referencing columns of the child, in constraint order. */
  readonly childColumns: readonly string[];
  readonly parent: TableId;
  /** Referenced columns of the parent, aligned with `childColumns`. */
  readonly parentColumns: readonly string[];
  readonly onDelete: ReferentialAction;
  readonly onUpdate: ReferentialAction;
}

/** Reads every foreign key whose child lies in one of `databases`. */
export async function discoverForeignKeys(client: MysqlClient, databases: readonly string[]): Promise<ForeignKey[]> {
  if (databases.length === 0) return [];
  const inList = [...new Set(databases)].map(quoteString).join(', ');
  const rows = await client.query(
    `SELECT rc.CONSTRAINT_SCHEMA AS db, rc.CONSTRAINT_NAME AS name, rc.TABLE_NAME AS child, rc.UPDATE_RULE AS on_update, rc.DELETE_RULE AS on_delete,
            k.COLUMN_NAME AS col, k.REFERENCED_TABLE_SCHEMA AS parent_db, k.REFERENCED_TABLE_NAME AS parent, k.REFERENCED_COLUMN_NAME AS parent_col,
            k.ORDINAL_POSITION AS ord
       FROM information_schema.REFERENTIAL_CONSTRAINTS rc
       JOIN information_schema.KEY_COLUMN_USAGE k
         ON k.CONSTRAINT_SCHEMA = rc.CONSTRAINT_SCHEMA AND k.CONSTRAINT_NAME = rc.CONSTRAINT_NAME AND k.TABLE_NAME = rc.TABLE_NAME
      WHERE rc.CONSTRAINT_SCHEMA IN (${inList}) AND k.REFERENCED_TABLE_NAME IS NOT NULL
      ORDER BY rc.CONSTRAINT_SCHEMA, rc.TABLE_NAME, rc.CONSTRAINT_NAME, k.ORDINAL_POSITION`,
  );
  const byName = new Map<string, { fk: ForeignKey; childColumns: string[]; parentColumns: string[] }>();
  for (const r of rows) {
    const key = `${r.db}\u0000${r.child}\u0000${r.name}`;
    let entry = byName.get(key);
    if (!entry) {
      const childColumns: string[] = [];
      const parentColumns: string[] = [];
      entry = {
        fk: {
          name: String(r.name),
          child: { database: String(r.db), table: String(r.child) },
          childColumns,
          parent: { database: String(r.parent_db), table: String(r.parent) },
          parentColumns,
          onDelete: String(r.on_delete).toUpperCase() as ReferentialAction,
          onUpdate: String(r.on_update).toUpperCase() as ReferentialAction,
        },
        childColumns,
        parentColumns,
      };
      byName.set(key, entry);
    }
    entry.childColumns.push(String(r.col));
    entry.parentColumns.push(String(r.parent_col));
  }
  return [...byName.values()].map((e) => e.fk);
}

/**
 * A cascade floe reproduces: when a row of `parent` is deleted, every row of `child` whose
 * `childColumns` equal the parent row's `parentColumns` is deleted too. `via` is the chain of
 * constraints from the table whose delete starts it (one for a direct child; more for grandchildren
 * whose constraint includes the columns the upper level matched on, see `planCascades`).
 */
export interface CascadeRule {
  /** The table whose row DELETE (as logged) triggers the rule. */
  readonly trigger: TableId;
  /** Columns of the trigger table whose values the child rows must match (aligned with childColumns). */
  readonly triggerColumns: readonly string[];
  readonly child: TableId;
  readonly childColumns: readonly string[];
  /** Constraint names from the trigger table down to the child. */
  readonly via: readonly string[];
}

/**
 * A cascade the pipeline reproduces from the rows of the lake (pipeline/key-cascades.ts): when a row
 * of `parent` is removed BY A CASCADE (never logged), every row of `child` whose `childColumns`
 * equal that row's `parentColumns` goes too. floe finds the removed rows through the parent's FK
 * index (format v3).
 */
export interface KeyCascadeRule {
  readonly parent: TableId;
  /** Columns of `parent` (its primary key, or columns a rule aligned with it), aligned with childColumns. */
  readonly parentColumns: readonly string[];
  readonly child: TableId;
  readonly childColumns: readonly string[];
  /** Constraint names from the parent down to the child. */
  readonly via: readonly string[];
}

export interface CascadePlan {
  readonly rules: readonly CascadeRule[];
  /** Cascades from rows other cascades remove, by the removed rows' primary keys. */
  readonly keyRules: readonly KeyCascadeRule[];
  /** One line per constraint floe cannot reproduce among captured tables (pre-flight warnings). */
  readonly warnings: readonly string[];
}

/**
 * The tables whose logged deletes may remove rows of table `key` through key cascades, with the
 * constraints from each: the deletes that start a cascade whose removed rows reach `key`
 * (`KeyCascadeRule`). Which rows go is known only from the lake (floe verify cannot say it).
 */
export function keyCascadeTriggers(plan: CascadePlan, key: string): { readonly trigger: TableId; readonly via: readonly string[] }[] {
  const out = new Map<string, { trigger: TableId; via: readonly string[] }>();
  const seen = new Set<string>();
  const visit = (k: string) => {
    if (seen.has(k)) return;
    seen.add(k);
    for (const kr of plan.keyRules) {
      if (tableKey(kr.child) !== k) continue;
      const parent = tableKey(kr.parent);
      for (const r of plan.rules) if (tableKey(r.child) === parent && !out.has(tableKey(r.trigger))) out.set(tableKey(r.trigger), { trigger: r.trigger, via: [...r.via, ...kr.via] });
      visit(parent);
    }
  };
  visit(key);
  return [...out.values()];
}

function fkText(fk: ForeignKey): string {
  return `${tableKey(fk.child)}(${fk.childColumns.join(', ')}) REFERENCES ${tableKey(fk.parent)}(${fk.parentColumns.join(', ')}) [${fk.name}]`;
}

/**
 * Which foreign keys floe reproduces for the captured tables, and warnings for the others:
 *
 * - ON DELETE CASCADE, parent and child captured → a rule (exact for single-column keys and for
 *   composite keys whose FK columns are all non-null; a composite FK with some NULL columns is not
 *   enforced by MySQL (MATCH SIMPLE) but such a child row would match the synthetic delete if its
 *   non-null columns matched — floe only emits the delete when every matched column is non-null, and
 *   a child row with a NULL FK column never equals a non-null value, so the delete is exact).
 * - Multi-level: a grandchild constraint ON DELETE CASCADE referencing the child is reproduced from
 *   the binlog alone when its referenced columns include every column the child was matched on —
 *   then "grandchild rows whose corresponding columns equal the same values" are exactly the rows
 *   whose referenced child row was deleted (a `CascadeRule`). When it references other child
 *   columns, the binlog lacks the removed child rows, but the lake has them: a `KeyCascadeRule`,
 *   which the pipeline applies to the child rows its cascade removed (pipeline/key-cascades.ts) —
 *   also for a table referencing itself, level by level.
 * - ON DELETE SET NULL / SET DEFAULT and ON UPDATE CASCADE / SET NULL / SET DEFAULT: the child rows'
 *   new values are not in the binlog and cannot be derived without the rows: a warning.
 * - A cascading constraint whose child is captured but whose parent is not: the parent deletes are
 *   never seen: a warning.
 */
export function planCascades(foreignKeys: readonly ForeignKey[], captured: ReadonlyMap<string, MappedTable>): CascadePlan {
  const isCaptured = (t: TableId) => captured.has(tableKey(t));
  const warnings: string[] = [];
  const rules: CascadeRule[] = [];
  const cascading = foreignKeys.filter((fk) => fk.onDelete === 'CASCADE');

  for (const fk of foreignKeys) {
    if (!isCaptured(fk.child)) continue;
    const parentCaptured = isCaptured(fk.parent);
    if (fk.onDelete === 'CASCADE' && !parentCaptured) {
      warnings.push(`ON DELETE CASCADE ${fkText(fk)}: the parent table is not captured, so floe never sees the deletes that remove child rows; capture ${tableKey(fk.parent)} too or expect ${tableKey(fk.child)} to keep orphaned rows in the lake`);
    }
    if (fk.onDelete === 'SET NULL' || fk.onDelete === 'SET DEFAULT') {
      warnings.push(`ON DELETE ${fk.onDelete} ${fkText(fk)}: the server changes the child rows without binlog events and floe cannot derive them; ${tableKey(fk.child)} will diverge when a referenced row is deleted (re-snapshot it, or use ON DELETE CASCADE / RESTRICT)`);
    }
    if (fk.onUpdate === 'CASCADE' || fk.onUpdate === 'SET NULL' || fk.onUpdate === 'SET DEFAULT') {
      warnings.push(`ON UPDATE ${fk.onUpdate} ${fkText(fk)}: the server changes the child rows without binlog events and floe cannot derive them; ${tableKey(fk.child)} will diverge when a referenced key changes (avoid updating referenced keys, or re-snapshot the table after such updates)`);
    }
  }

  // A cascade from rows another cascade removed, by the values they held: floe finds those rows in
  // the parent's FK index (pipeline/key-cascades.ts).
  const fromRemoved = (fk: ForeignKey): KeyCascadeRule => ({ parent: fk.parent, parentColumns: fk.parentColumns, child: fk.child, childColumns: fk.childColumns, via: [fk.name] });
  const keyQueue: KeyCascadeRule[] = [];
  // The cascading constraints below `child` (its rows removed where `childColumns` match): each with
  // the grandchild columns aligned with them — a grandchild row references a removed child row iff
  // those carry the same values — or undefined when the constraint does not reference them all: then
  // the grandchild rows are found through the child rows removed (a self-reference too, level by level).
  const below = (child: TableId, childColumns: readonly string[], depth: number) =>
    cascading
      .filter((next) => tableKey(next.parent) === tableKey(child) && isCaptured(next.child))
      .map((next) => {
        const aligned = childColumns.map((c) => next.parentColumns.findIndex((p) => p.toLowerCase() === c.toLowerCase()));
        const exact = tableKey(next.child) !== tableKey(next.parent) && aligned.every((i) => i >= 0) && depth <= 16;
        return { next, aligned: exact ? aligned.map((i) => next.childColumns[i]!) : undefined };
      });

  // direct rules, then grandchildren reachable with the matched columns, breadth first
  const queue: CascadeRule[] = [];
  for (const fk of cascading) {
    if (!isCaptured(fk.child) || !isCaptured(fk.parent)) continue;
    queue.push({ trigger: fk.parent, triggerColumns: fk.parentColumns, child: fk.child, childColumns: fk.childColumns, via: [fk.name] });
  }
  const seen = new Set<string>();
  while (queue.length > 0) {
    const rule = queue.shift()!;
    const id = `${tableKey(rule.trigger)}|${tableKey(rule.child)}|${rule.via.join('>')}`;
    if (seen.has(id)) continue;
    seen.add(id);
    rules.push(rule);
    for (const { next, aligned } of below(rule.child, rule.childColumns, rule.via.length)) {
      if (aligned) queue.push({ trigger: rule.trigger, triggerColumns: rule.triggerColumns, child: next.child, childColumns: aligned, via: [...rule.via, next.name] });
      else keyQueue.push(fromRemoved(next));
    }
  }

  // cascades from removed rows, and their own grandchildren (aligned, or from removed rows again)
  const keyRules: KeyCascadeRule[] = [];
  const seenKeyRules = new Set<string>();
  while (keyQueue.length > 0) {
    const rule = keyQueue.shift()!;
    const id = `${tableKey(rule.parent)}|${rule.parentColumns.join(',')}|${tableKey(rule.child)}|${rule.childColumns.join(',')}`.toLowerCase();
    if (seenKeyRules.has(id)) continue;
    seenKeyRules.add(id);
    keyRules.push(rule);
    for (const { next, aligned } of below(rule.child, rule.childColumns, rule.via.length)) {
      if (aligned) keyQueue.push({ parent: rule.parent, parentColumns: rule.parentColumns, child: next.child, childColumns: aligned, via: [...rule.via, next.name] });
      else keyQueue.push(fromRemoved(next));
    }
  }
  return { rules, keyRules, warnings: [...new Set(warnings)] };
}

/**
 * The row-by-row comparison of one chunk, MySQL's rows (at the lake's offset, lake-shaped: projected
 * and transformed as floe writes them) against the lake's: rows only in MySQL, rows only in the lake,
 * and rows both hold that differ — in which compared columns. Rows pair by the identifier fields
 * (the primary key); a table without one compares as multisets of whole rows.
 *
 * Keys are reported (they say where to look); other values only with `showValues`, in Iceberg's JSON
 * single-value form (what `floe scan` prints). At most `limit` rows are listed per kind; the counts
 * are exact.
 */
import { toJsonSingleValue } from '../../iceberg/spec/single-value.js';
import type { JsonValue } from '../../util/json.js';
import { toHex, type Row, type Value } from '../../model/values.js';
import type { VerifyPlan } from './verify-plan.js';

type RowValues = Record<string, JsonValue>;

interface DifferingRow {
  readonly key: RowValues;
  readonly columns: readonly string[];
  readonly mysql?: RowValues;
  readonly lake?: RowValues;
}

export interface ChunkRowDiff {
  readonly onlyInMysql: number;
  readonly onlyInLake: number;
  readonly differing: number;
  /** Keys (or, with showValues, whole rows) of the first rows of each kind. */
  readonly samples: { readonly onlyInMysql: readonly RowValues[]; readonly onlyInLake: readonly RowValues[]; readonly differing: readonly DifferingRow[] };
}

export interface DiffOptions {
  readonly showValues: boolean;
  readonly limit: number;
}

/** Injective text of values (for Map keys). */
function valuesKey(values: readonly Value[]): string {
  let s = '';
  for (const v of values) {
    if (v === null) s += 'n;';
    else if (typeof v === 'string') s += `s${v.length}:${v};`;
    else if (typeof v === 'bigint') s += `l${v};`;
    else if (typeof v === 'number') s += `d${Object.is(v, -0) ? '-0' : v};`;
    else if (typeof v === 'boolean') s += v ? 't;' : 'f;';
    else s += `x${toHex(v)};`;
  }
  return s;
}

export function diffChunkRows(plan: VerifyPlan, mysqlRows: readonly Row[], lakeRows: readonly Row[], options: DiffOptions): ChunkRowDiff {
  const fields = plan.schema.fields;
  const jsonOf = (row: Row, indexes: readonly number[]): RowValues => {
    const out: RowValues = {};
    for (const i of indexes) out[fields[i]!.name] = toJsonSingleValue(fields[i]!.type, row[i] ?? null);
    return out;
  };
  const comparedIndexes = plan.compared.map((c) => c.fieldIndex);
  const keyIndexes = plan.identifierFields;
  const shown = (row: Row): RowValues => (options.showValues ? jsonOf(row, [...new Set([...keyIndexes, ...comparedIndexes])]) : jsonOf(row, keyIndexes));
  const onlyInMysql: RowValues[] = [];
  const onlyInLake: RowValues[] = [];
  const differing: DifferingRow[] = [];
  const counts = { onlyInMysql: 0, onlyInLake: 0, differing: 0 };
  const note = (list: RowValues[], row: Row) => {
    if (list.length < options.limit) list.push(shown(row));
  };

  if (keyIndexes.length === 0) {
    // multisets of whole rows
    const bag = new Map<string, { row: Row; n: number }>();
    for (const r of mysqlRows) {
      const k = plan.hasher.text(r);
      const e = bag.get(k);
      if (e) e.n++;
      else bag.set(k, { row: r, n: 1 });
    }
    for (const r of lakeRows) {
      const k = plan.hasher.text(r);
      const e = bag.get(k);
      if (e && e.n > 0) e.n--;
      else {
        counts.onlyInLake++;
        note(onlyInLake, r);
      }
    }
    for (const e of bag.values()) {
      for (let i = 0; i < e.n; i++) {
        counts.onlyInMysql++;
        note(onlyInMysql, e.row);
      }
    }
    return { ...counts, samples: { onlyInMysql, onlyInLake, differing } };
  }

  const lakeByKey = new Map<string, Row>();
  for (const r of lakeRows) lakeByKey.set(valuesKey(keyIndexes.map((i) => r[i] ?? null)), r);
  for (const m of mysqlRows) {
    const k = valuesKey(keyIndexes.map((i) => m[i] ?? null));
    const l = lakeByKey.get(k);
    if (!l) {
      counts.onlyInMysql++;
      note(onlyInMysql, m);
      continue;
    }
    lakeByKey.delete(k);
    const a = plan.hasher.partsOf(m);
    const b = plan.hasher.partsOf(l);
    const columns = plan.compared.filter((_, i) => a[i] !== b[i]);
    if (columns.length === 0) continue;
    counts.differing++;
    if (differing.length < options.limit) {
      const indexes = columns.map((c) => c.fieldIndex);
      differing.push({
        key: jsonOf(m, keyIndexes),
        columns: columns.map((c) => c.name),
        ...(options.showValues ? { mysql: jsonOf(m, indexes), lake: jsonOf(l, indexes) } : {}),
      });
    }
  }
  for (const l of lakeByKey.values()) {
    counts.onlyInLake++;
    note(onlyInLake, l);
  }
  return { ...counts, samples: { onlyInMysql, onlyInLake, differing } };
}

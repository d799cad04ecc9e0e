/**
 * The key comparator tests' column and their oracle: the server's own comparison of every pair of
 * values in a column's collation, all pairs in one SELECT.
 */
import type { MysqlClient } from '../../../../src/source/mysql/client.js';
import type { Value } from '../../../../src/model/values.js';
import type { ColumnSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapColumn, type MappedColumn } from '../../../../src/source/mysql/schema/type-mapping.js';
import { keyLiteral } from '../../../../src/source/mysql/snapshot/key-sql.js';

/** Key column `k`: a `varchar(40)` in utf8mb4_general_ci unless `overrides` says otherwise. */
export function keyColumn(overrides: Partial<ColumnSchema>): MappedColumn {
  const base: ColumnSchema = {
    name: 'k', ordinal: 1, dataType: 'varchar', columnType: 'varchar(40)', unsigned: false, precision: null, scale: null,
    datetimePrecision: null, maxLength: 40, charset: 'utf8mb4', collation: 'utf8mb4_general_ci', nullable: false, generated: null,
    generationExpression: null, comment: '', default: { kind: 'none' }, labels: null, json: false, invisible: false, autoIncrement: false,
  };
  return mapColumn({ database: 'd', table: 't' }, { ...base, ...overrides });
}

/** The server's sign of a vs b (`[i][j]` for values[i] vs values[j]), each literal wrapped in `cast`. */
export async function serverSigns(client: MysqlClient, col: MappedColumn, values: readonly Value[], cast: (lit: string) => string): Promise<number[][]> {
  const exprs: string[] = [];
  for (const a of values) for (const b of values) {
    const x = cast(keyLiteral(col, a));
    const y = cast(keyLiteral(col, b));
    exprs.push(`CASE WHEN ${x} < ${y} THEN -1 WHEN ${x} = ${y} THEN 0 ELSE 1 END`);
  }
  const { rows } = await client.queryArrays(`SELECT ${exprs.join(', ')}`);
  const flat = rows[0]!.map(Number);
  return values.map((_, i) => flat.slice(i * values.length, (i + 1) * values.length));
}

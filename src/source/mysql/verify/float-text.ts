/**
 * How the server prints doubles: `CAST(x * 1e0 AS CHAR)` — the canonical text of FLOAT and DOUBLE
 * columns in verification checksums (canonical-sql.ts) — for given values, so that the lake side's
 * reproduction of that text (pipeline/verify/server-float-text.ts) can be checked against the server
 * it verifies before it is trusted. One statement.
 */
import type { MysqlClient } from '../client.js';
import { doubleLiteral } from '../snapshot/key-sql.js';

export async function serverFloatTexts(client: MysqlClient, values: readonly number[]): Promise<string[]> {
  if (values.length === 0) return [];
  const { rows } = await client.queryArrays(`SELECT ${values.map((v) => `CAST(${doubleLiteral(v)} * 1e0 AS CHAR)`).join(', ')}`);
  return (rows[0] ?? []).map((t) => String(t));
}

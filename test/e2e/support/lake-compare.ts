/**
 * End-to-end comparisons: a MySQL table and its Iceberg table, row for row, in one canonical text form.
 *
 * The MySQL side is read fresh with the source engine's snapshot value conversion (the path the source's
 * round-trip tests prove equal to the binlog path), then arranged by column NAME into the Iceberg
 * table's field order; dropped columns are left out and transformed columns computed here, with the
 * test's own SHA-256 / masking — not the pipeline's code. The Iceberg side is read with floe's scan
 * reader (deletes applied). Rows compare as a multiset (keyless tables may repeat rows).
 */
import { createHash } from 'node:crypto';
import type { Catalog, TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { toHex, type Row, type Value } from '../../../src/model/values.js';
import { connectMysql, type MysqlConnectionConfig } from '../../../src/source/mysql/client.js';
import { chunkSql } from '../../../src/source/mysql/snapshot/chunk.js';
import { detectDialect } from '../../../src/source/mysql/dialect.js';
import { createSnapshotRowConverter } from '../../../src/source/mysql/snapshot/snapshot-values.js';
import { captureTableSchema } from '../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type TypeMappingOptions } from '../../../src/source/mysql/schema/type-mapping.js';

/** A value as text that differs whenever the values differ (type tags keep 1, 1n and "1" apart). */
export function canonicalValue(v: Value): string {
  if (v === null) return 'null';
  if (typeof v === 'bigint') return `L${v}`;
  if (typeof v === 'number') return `N${Object.is(v, -0) ? '-0' : String(v)}`;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (typeof v === 'string') return JSON.stringify(v);
  return `X${toHex(v)}`;
}

export function canonicalRow(row: Row): string {
  return row.map(canonicalValue).join('|');
}

/** How the test expects a column to arrive in the lake (mirrors the config under test). */
export type ExpectedTransform = { kind: 'hash'; salt: string; text: (v: Value) => string } | { kind: 'mask'; keepLast: number; text: (v: Value) => string } | { kind: 'drop' };

export interface TableRows {
  columns: string[];
  rows: string[];
}

/** Every row of a MySQL table, as the lake should hold it in the given field order. */
export async function mysqlTableRows(
  connection: MysqlConnectionConfig,
  database: string,
  table: string,
  fieldOrder: readonly string[],
  options: { typeMapping?: TypeMappingOptions; transforms?: Record<string, ExpectedTransform> } = {},
): Promise<string[]> {
  const client = await connectMysql(connection);
  try {
    const dialect = await detectDialect(client);
    const mapped = mapTable(await captureTableSchema(client, { database, table }, dialect.flavor), options.typeMapping);
    const convert = createSnapshotRowConverter(mapped);
    const index = new Map(mapped.columns.map((c, i) => [c.column.name, i]));
    const out: string[] = [];
    for await (const raw of client.stream(chunkSql(mapped, { table: { database, table }, index: 0, keyColumns: [] }, dialect.flavor))) {
      const row = convert(raw);
      const projected = fieldOrder.map((name) => {
        const i = index.get(name);
        if (i === undefined) throw new Error(`lake column ${name} is not a column of ${database}.${table}`);
        const v = row[i];
        const t = options.transforms?.[name];
        if (!t || v === null) return v;
        if (t.kind === 'hash') return createHash('sha256').update(t.salt + t.text(v), 'utf8').digest('hex');
        if (t.kind === 'mask') {
          const chars = Array.from(t.text(v));
          const hidden = Math.max(0, chars.length - t.keepLast);
          return '*'.repeat(hidden) + chars.slice(hidden).join('');
        }
        throw new Error(`dropped column ${name} should not be in the lake`);
      });
      out.push(canonicalRow(projected));
    }
    return out.sort();
  } finally {
    await client.close();
  }
}

/** Every live row of an Iceberg table, with its current schema's field names. */
export async function lakeTableRows(catalog: Catalog, identifier: TableIdentifier): Promise<TableRows> {
  const table = await loadCatalogTable(catalog, identifier);
  const schema = table.metadata.schemas.find((s) => s.schemaId === table.metadata.currentSchemaId)!;
  const rows = await readTableRows(table);
  return { columns: schema.fields.map((f) => f.name), rows: rows.map(canonicalRow).sort() };
}

/** First few differences between two sorted multisets, for assertion messages. */
export function multisetDifference(expected: readonly string[], actual: readonly string[], limit = 5): { missing: string[]; unexpected: string[] } {
  const count = new Map<string, number>();
  for (const r of expected) count.set(r, (count.get(r) ?? 0) + 1);
  const unexpected: string[] = [];
  for (const r of actual) {
    const n = count.get(r) ?? 0;
    if (n > 0) count.set(r, n - 1);
    else if (unexpected.length < limit) unexpected.push(r);
  }
  const missing: string[] = [];
  for (const [r, n] of count) for (let i = 0; i < n && missing.length < limit; i++) missing.push(r);
  return { missing, unexpected };
}

/**
 * The MySQL definition a lake table was last brought in line with, kept in the table's own
 * properties (`floe.source-schema`) — the schema half of "the tables are the only state".
 *
 * Why: after a restart the binlog is read again from each table's committed offset, and the rows
 * logged there have the layout the table had THEN, not the one information_schema shows now (a
 * migration may have run while floe was stopped). The offset says where to resume; this says how
 * to decode what comes from there. Rows are decoded with it until the binlog reaches the DDL, which
 * the schema-change policy applies as it does while floe runs (and which records the new definition
 * in the same commit as the Iceberg schema update).
 *
 * Invariant that makes one definition per table enough (not a history): the definition is written in
 * the same commit as the table's offset through the DDL that made it (checkpoint.ts
 * `commitSchemaChange`, after every row of the table logged before the DDL is committed), so the
 * recorded definition is always the one in force at the table's committed offset, whatever order
 * kills and restarts come in.
 *
 * Written when floe creates the table and with every schema change it applies. A table written by a
 * floe that did not record it has none: its definition at the offset is derived from its Iceberg
 * schema then (derived-source-schema.ts), when MySQL's no longer maps onto it.
 */
import type { TableMetadata } from '../../iceberg/spec/table-metadata.js';
import type { TableId, TableSchema } from '../../source/mysql/index.js';
import { FloeError } from '../../util/errors.js';

export const SOURCE_SCHEMA_PROPERTY = 'floe.source-schema';

/** The property value recording `schema` (JSON; byte literals of BIT/BINARY defaults as base64). */
export function sourceSchemaProperty(schema: TableSchema): Record<string, string> {
  const { id: _id, ...rest } = schema;
  return { [SOURCE_SCHEMA_PROPERTY]: JSON.stringify({ version: 1, ...rest }, (_k, v: unknown) => (v instanceof Uint8Array ? { $bytes: Buffer.from(v).toString('base64') } : v)) };
}

/** The definition recorded in the table's metadata (for the MySQL table `id`), or undefined. */
export function recordedSourceSchema(metadata: TableMetadata, id: TableId): TableSchema | undefined {
  const text = metadata.properties[SOURCE_SCHEMA_PROPERTY];
  if (text === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text, (_k, v: unknown) => (isBytes(v) ? new Uint8Array(Buffer.from(v.$bytes, 'base64')) : v));
  } catch (e) {
    throw invalid(id, `is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof parsed !== 'object' || parsed === null || (parsed as { version?: unknown }).version !== 1 || !Array.isArray((parsed as { columns?: unknown }).columns)) {
    throw invalid(id, 'is not a version 1 table definition with columns');
  }
  const { version: _v, ...rest } = parsed as { version: number } & Omit<TableSchema, 'id'>;
  return { ...rest, id: { ...id } };
}

/** Whether two definitions decode rows alike (same columns, types, defaults and key). */
export function sameSourceSchema(a: TableSchema, b: TableSchema): boolean {
  return sourceSchemaProperty(a)[SOURCE_SCHEMA_PROPERTY] === sourceSchemaProperty(b)[SOURCE_SCHEMA_PROPERTY];
}

function isBytes(v: unknown): v is { $bytes: string } {
  return typeof v === 'object' && v !== null && typeof (v as { $bytes?: unknown }).$bytes === 'string' && Object.keys(v).length === 1;
}

function invalid(id: TableId, what: string): FloeError {
  return new FloeError(
    'pipeline.source-schema',
    'invalid-data',
    `the Iceberg table of ${id.database}.${id.table}: property ${SOURCE_SCHEMA_PROPERTY} ${what}; expected the MySQL definition floe recorded. Remove the property (floe then uses the server's current definition) or re-snapshot the table`,
  );
}

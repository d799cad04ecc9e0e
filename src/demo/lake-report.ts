/**
 * What the demo prints at the end: per table, the rows MySQL holds and the rows the Iceberg table
 * holds — read back through floe's scan reader with every delete applied — whether they are the same
 * rows, and a few of them.
 *
 * "The same" is exact: both sides become Iceberg JSON single values (rowToJson: exact integers,
 * decimals with their scale, timestamps with microseconds) and are compared as multisets, so a
 * duplicate, a lost delete, a rounded decimal or a shifted time zone shows up as a difference.
 */
import type { Catalog, TableIdentifier } from '../iceberg/metadata/catalog.js';
import { identifierToString } from '../iceberg/metadata/catalog.js';
import { readTableRows } from '../iceberg/scan/index.js';
import { valueToJson } from '../iceberg/scan/row-json.js';
import type { Schema } from '../iceberg/spec/schema.js';
import type { Row } from '../model/values.js';
import { icebergIdentifier, type MappingConfig } from '../pipeline/table-mapping.js';
import type { MysqlClient } from '../source/mysql/index.js';
import type { ServerFlavor } from '../source/mysql/index.js';
import { createSnapshotRowConverter, snapshotSelectList } from '../source/mysql/index.js';
import { captureTableSchema, qualifiedTable } from '../source/mysql/index.js';
import { mapTable } from '../source/mysql/index.js';
import { stringifyJson, type JsonValue } from '../util/json.js';
import { SHOP_DATABASE, SHOP_TABLES, type ShopTable } from './sample-shop.js';

export interface TableComparison {
  table: ShopTable;
  identifier: TableIdentifier;
  sourceRows: number;
  lakeRows: number;
  /** Rows (as JSON text) in MySQL but not in the lake, and the reverse (at most 5 of each). */
  missing: string[];
  extra: string[];
  identical: boolean;
  /** A few lake rows, keyed by column name. */
  sample: Record<string, JsonValue>[];
  /** The lake rows, keyed by column name (for the tests and the facts below). */
  rows: Record<string, JsonValue>[];
}

export async function compareShop(
  catalog: Catalog,
  client: MysqlClient,
  flavor: ServerFlavor,
  config: MappingConfig & { source?: { tinyint1AsBoolean: boolean; timeAs: 'time' | 'micros'; timeAsMicros: string[] } },
  sampleSize = 3,
): Promise<TableComparison[]> {
  const out: TableComparison[] = [];
  for (const table of SHOP_TABLES) {
    const source = { database: SHOP_DATABASE, table };
    const identifier = icebergIdentifier(source, config);
    const loaded = await catalog.loadTable(identifier);
    const lake = await readTableRows(loaded);
    const schema = loaded.metadata.schemas.find((s) => s.schemaId === loaded.metadata.currentSchemaId)!;
    const lakeObjects = lake.map((row) => rowObject(schema, row));

    const mapped = mapTable(await captureTableSchema(client, source, flavor), {
      tinyInt1AsBoolean: config.source?.tinyint1AsBoolean ?? true,
      timeAs: config.source?.timeAs ?? 'time',
      timeAsMicros: config.source?.timeAsMicros ?? [],
    });
    const convert = createSnapshotRowConverter(mapped);
    const { rows: raw } = await client.queryArrays(`SELECT ${snapshotSelectList(mapped, flavor)} FROM ${qualifiedTable(source)}`);
    const names = mapped.columns.map((c) => c.column.name);
    const sourceObjects = raw.map((r) => {
      const values = convert(r);
      const o: Record<string, JsonValue> = {};
      names.forEach((name, i) => {
        const field = schema.fields.find((f) => f.name === name);
        o[name] = field ? valueToJson(field.type, values[i]) : null;
      });
      return o;
    });

    const lakeTexts = lakeObjects.map((o) => stringifyJson(o));
    const sourceTexts = sourceObjects.map((o) => stringifyJson(o));
    const { onlyLeft: missing, onlyRight: extra } = multisetDifference(sourceTexts, lakeTexts);
    out.push({
      table,
      identifier,
      sourceRows: raw.length,
      lakeRows: lake.length,
      missing: missing.slice(0, 5),
      extra: extra.slice(0, 5),
      identical: missing.length === 0 && extra.length === 0,
      sample: lakeObjects.slice(0, sampleSize),
      rows: lakeObjects,
    });
  }
  return out;
}

function rowObject(schema: Schema, row: Row): Record<string, JsonValue> {
  const o: Record<string, JsonValue> = {};
  schema.fields.forEach((f, i) => {
    o[f.name] = valueToJson(f.type, row[i]);
  });
  return o;
}

function multisetDifference(left: string[], right: string[]): { onlyLeft: string[]; onlyRight: string[] } {
  const counts = new Map<string, number>();
  for (const t of left) counts.set(t, (counts.get(t) ?? 0) + 1);
  const onlyRight: string[] = [];
  for (const t of right) {
    const n = counts.get(t) ?? 0;
    if (n > 0) counts.set(t, n - 1);
    else onlyRight.push(t);
  }
  const onlyLeft: string[] = [];
  for (const [t, n] of counts) for (let i = 0; i < n; i++) onlyLeft.push(t);
  return { onlyLeft, onlyRight };
}

/** The report text: one block per table. */
export function formatComparisons(comparisons: readonly TableComparison[], color: boolean): string {
  const ok = color ? '\x1b[32m✓\x1b[0m' : '✓';
  const bad = color ? '\x1b[31m✗\x1b[0m' : '✗';
  const width = Math.max(...comparisons.map((c) => identifierToString(c.identifier).length));
  const lines: string[] = [];
  for (const c of comparisons) {
    const name = identifierToString(c.identifier).padEnd(width);
    const verdict = c.identical ? `${ok} same rows as MySQL` : `${bad} differs from MySQL (${c.missing.length} missing, ${c.extra.length} unexpected)`;
    lines.push(`${name}  ${String(c.lakeRows).padStart(5)} rows   ${verdict}`);
    for (const row of c.sample) lines.push(`    ${truncate(stringifyJson(row), 150)}`);
    for (const m of c.missing) lines.push(`    missing:    ${truncate(m, 140)}`);
    for (const x of c.extra) lines.push(`    unexpected: ${truncate(x, 140)}`);
  }
  return lines.join('\n') + '\n';
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

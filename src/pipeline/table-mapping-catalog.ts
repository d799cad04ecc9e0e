/**
 * Making a mapped table real in the catalog: create it (and its namespace) when it is missing, reuse
 * it when it exists — after checking that its schema still matches the MySQL table — and give the
 * runner the function that turns a source row into a row of the Iceberg table's schema.
 *
 * Partitioned tables get an unpartitioned spec next to their default one at once
 * (`ensureUnpartitionedSpec`): the upsert writer writes its equality deletes under it, so that a delete
 * reaches a row in any partition (spec "Scan Planning": global equality deletes) — an UPDATE that moves
 * a row to another partition still removes the old row.
 *
 * An existing table must have exactly the mapped columns (by name), with the same types, no required
 * field the source can leave null, and the primary key as its identifier fields. Anything else means the
 * table drifted from MySQL while floe was not applying DDL (or was created by someone else): floe stops
 * with a message naming each difference rather than write rows the table cannot hold.
 */
import type { Catalog } from '../iceberg/metadata/catalog.js';
import { identifierToString } from '../iceberg/metadata/catalog.js';
import { isUnpartitioned, transformToString, type PartitionSpec } from '../iceberg/spec/partition.js';
import type { Schema } from '../iceberg/spec/schema.js';
import { createTable, ensureUnpartitionedSpec, loadCatalogTable, replaceTableDefinition, type CatalogTable } from '../iceberg/table/index.js';
import type { TableMetadata } from '../iceberg/spec/table-metadata.js';
import { isPrimitive, typesEqual, typeToString } from '../iceberg/spec/types.js';
import type { Row, Value } from '../model/values.js';
import { FloeError, isFloeError } from '../util/errors.js';
import type { Logger } from './observe/logger.js';
import type { TableMapping } from './table-mapping.js';

const SUBSYSTEM = 'pipeline.table-mapping';

export interface ReadyTable {
  readonly table: CatalogTable;
  readonly created: boolean;
  /** Source row (MySQL column order) → row of the table's current schema (transforms applied). */
  readonly project: (row: Row) => Row;
}

export interface EnsureOptions {
  /**
   * Whether the MySQL definition may be AHEAD of the Iceberg schema: true for a table this job
   * already streams into, where the binlog between its committed offset and now may hold DDL not
   * applied yet (floe stopped before it, or crashed) — the schema-change policy deals with it when
   * the statement comes. Then only differences that make rows unwritable are refused (a required
   * Iceberg field MySQL no longer has, other identifier fields); rows carry the Iceberg table's
   * columns by name until then. Default false: every difference is refused.
   */
  readonly pendingDdlPossible?: (table: CatalogTable) => boolean;
  /** Properties a table floe creates gets besides the mapping's (the recorded MySQL definition). */
  readonly createProperties?: Readonly<Record<string, string>>;
  /**
   * For an existing table: the mapping to check it against and project rows with instead of
   * `mapping` — the mapping of the MySQL definition the lake recorded, when the binlog from the
   * table's committed offset still holds rows of that definition (source-schema-record.ts).
   */
  readonly resumeMapping?: (table: CatalogTable) => TableMapping | undefined;
  /**
   * Whether an existing table has no past a restart must replay: no rows, and no progress of this
   * job or a snapshot that has copied nothing yet. Such a table that differs from the mapping takes
   * the mapping's definition (and `createProperties`) now, as if floe created it today; nothing of
   * its old definition is checked or replayed (docs/design.md §3).
   */
  readonly withoutPast?: (metadata: TableMetadata) => boolean;
}

/** Creates or loads the table of `mapping`, checks it, and returns it with its row projection. */
export async function ensureIcebergTable(catalog: Catalog, configured: TableMapping, logger: Logger, options: EnsureOptions = {}): Promise<ReadyTable> {
  let mapping = configured;
  let table: CatalogTable;
  let created = false;
  if (await catalog.tableExists(mapping.identifier)) {
    table = await loadCatalogTable(catalog, mapping.identifier);
  } else {
    await ensureNamespace(catalog, mapping.identifier.namespace);
    try {
      table = await createTable(catalog, mapping.identifier, {
        schema: mapping.schema,
        partitionSpec: mapping.partitionSpec,
        properties: { ...mapping.properties, ...options.createProperties },
        formatVersion: mapping.formatVersion,
      });
      created = true;
      logger.info('created Iceberg table', { table: mapping.sourceKey, iceberg: identifierToString(mapping.identifier), formatVersion: mapping.formatVersion });
    } catch (e) {
      // Another process of the job created it first: use that one (it is checked below).
      if (!isFloeError(e, 'already-exists')) throw e;
      table = await loadCatalogTable(catalog, mapping.identifier);
    }
  }
  if (!created && options.withoutPast?.(table.metadata) && schemaProblems(mapping, currentSchema(table)).length > 0) {
    const differences = schemaProblems(mapping, currentSchema(table)).join('; ');
    table = await replaceTableDefinition(table, { schema: mapping.schema, spec: mapping.partitionSpec, properties: { ...options.createProperties } }, options.withoutPast);
    logger.warn('the MySQL table changed before any of its rows was committed: its Iceberg table takes the definition MySQL has now', { table: mapping.sourceKey, differences });
  } else if (!created) mapping = options.resumeMapping?.(table) ?? mapping;
  const schema = currentSchema(table);
  let problems = schemaProblems(mapping, schema);
  if (problems.length > 0 && !created && options.pendingDdlPossible?.(table)) {
    const blocking = blockingProblems(mapping, schema);
    if (blocking.length === 0) {
      logger.warn('the MySQL table differs from its Iceberg table; expecting the DDL that made the difference further on in the binlog (the schema-change policy applies it there)', {
        table: mapping.sourceKey,
        differences: problems.join('; '),
      });
    }
    problems = blocking;
  }
  if (problems.length > 0) {
    throw new FloeError(
      SUBSYSTEM,
      'unsupported',
      `the Iceberg table ${identifierToString(mapping.identifier)} does not match the MySQL table ${mapping.sourceKey}: ${problems.join('; ')}. ` +
        'The table changed outside floe (or while floe was not applying DDL); alter the Iceberg table to match, or drop it so that floe creates and snapshots it again',
    );
  }
  if (!created) warnOnSpecDifference(table, mapping, logger);
  if (!isUnpartitioned(defaultSpec(table))) table = (await ensureUnpartitionedSpec(table)).table;
  return { table, created, project: rowProjection(mapping, schema) };
}

async function ensureNamespace(catalog: Catalog, namespace: readonly string[]): Promise<void> {
  for (let depth = 1; depth <= namespace.length; depth++) {
    const level = namespace.slice(0, depth);
    if (await catalog.namespaceExists(level)) continue;
    try {
      await catalog.createNamespace(level);
    } catch (e) {
      if (!isFloeError(e, 'already-exists')) throw e;
    }
  }
}

function currentSchema(table: CatalogTable): Schema {
  const m = table.metadata;
  const s = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
  if (!s) throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${identifierToString(table.identifier)}: current schema ${m.currentSchemaId} is missing from its metadata`);
  return s;
}

function defaultSpec(table: CatalogTable): PartitionSpec {
  const m = table.metadata;
  const s = m.partitionSpecs.find((x) => x.specId === m.defaultSpecId);
  if (!s) throw new FloeError(SUBSYSTEM, 'invalid-data', `table ${identifierToString(table.identifier)}: default spec ${m.defaultSpecId} is missing from its metadata`);
  return s;
}

/** Every way the table's schema cannot take the mapped rows (empty = compatible). */
function schemaProblems(mapping: TableMapping, schema: Schema): string[] {
  const problems: string[] = [];
  const byName = new Map(mapping.columns.map((c) => [c.name, c]));
  for (const f of schema.fields) {
    const c = byName.get(f.name);
    if (!c) {
      problems.push(`column ${f.name} is in the Iceberg table but not in MySQL`);
      continue;
    }
    if (!isPrimitive(f.type) || !typesEqual(f.type, c.type)) problems.push(`column ${f.name} is ${typeToString(f.type)} in Iceberg, expected ${typeToString(c.type)}`);
    if (f.required && !c.required) problems.push(`column ${f.name} is required in Iceberg but nullable in MySQL`);
  }
  const inTable = new Set(schema.fields.map((f) => f.name));
  for (const c of mapping.columns) if (!inTable.has(c.name)) problems.push(`column ${c.name} is in MySQL but not in the Iceberg table`);
  const keyOf = (s: Schema) => s.identifierFieldIds.map((id) => s.findField(id)?.name ?? `#${id}`).join(', ');
  const expectedKey = keyOf(mapping.schema);
  const foundKey = keyOf(schema);
  if (expectedKey !== foundKey) problems.push(`identifier fields are [${foundKey}] in Iceberg, expected the primary key [${expectedKey}]`);
  return problems;
}

/** Differences no pending DDL can make writable: a required field MySQL lacks, other key fields. */
function blockingProblems(mapping: TableMapping, schema: Schema): string[] {
  const names = new Set(mapping.columns.map((c) => c.name));
  const problems = schema.fields.filter((f) => f.required && !names.has(f.name)).map((f) => `required column ${f.name} is in the Iceberg table but not in MySQL`);
  const key = (s: Schema) => s.identifierFieldIds.map((id) => s.findField(id)?.name ?? `#${id}`).join(', ');
  if (key(mapping.schema) !== key(schema)) problems.push(`identifier fields are [${key(schema)}] in Iceberg, expected the primary key [${key(mapping.schema)}]`);
  return problems;
}

function warnOnSpecDifference(table: CatalogTable, mapping: TableMapping, logger: Logger): void {
  const text = (spec: PartitionSpec, schema: Schema) =>
    spec.fields.map((f) => `${transformToString(f.transform)}(${schema.findField(f.sourceId)?.name ?? f.sourceId})`).join(', ');
  const have = text(defaultSpec(table), currentSchema(table));
  const want = text(mapping.partitionSpec, mapping.schema);
  if (have !== want) {
    logger.warn('existing Iceberg table keeps its partitioning; the configured partitionBy applies to new tables only', {
      table: mapping.sourceKey,
      partitioning: have || '(unpartitioned)',
      configured: want || '(unpartitioned)',
    });
  }
}

/**
 * Source row → row in the order of `schema`'s top-level fields, transforms applied. A field the
 * mapping lacks (only while a DDL is pending, see `EnsureOptions`) is null; a source column the
 * table lacks is not written.
 */
export function rowProjection(mapping: TableMapping, schema: Schema): (row: Row) => Row {
  const byName = new Map(mapping.columns.map((c) => [c.name, c]));
  const plan = schema.fields.map((f) => byName.get(f.name));
  const identity = plan.length === mapping.sourceColumnCount && plan.every((c, i) => c !== undefined && c.sourceIndex === i && !c.transform);
  if (identity) return (row) => row;
  return (row) => {
    const out: Value[] = new Array(plan.length);
    for (let i = 0; i < plan.length; i++) {
      const c = plan[i];
      if (!c) {
        out[i] = null;
        continue;
      }
      const v = row[c.sourceIndex]!;
      out[i] = c.transform ? c.transform(v) : v;
    }
    return out;
  };
}

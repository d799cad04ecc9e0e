/**
 * Table mapping: what Iceberg table a captured MySQL table becomes (docs/design.md §5, §6).
 *
 * - Identifier: namespace and name from the `tables.namespace` / `tables.name` templates (`{database}`,
 *   `{table}`), or the per-table override; a dotted namespace (`lake.sales`) is a multi-level one.
 * - Schema: one top-level field per kept column, in column order, with field ids 1..n; `required` when
 *   the column is NOT NULL (date/datetime/timestamp columns stay optional: zero dates read as null,
 *   except in the primary key, which must be required to be an identifier field); types from the
 *   source's type mapping, or `string` for hashed/masked columns; identifier fields = the primary key
 *   (none for a keyless table, which the writer then runs in `append` mode).
 * - Defaults (format v3): a literal MySQL default becomes the field's `write-default` (transformed like
 *   the column's values). Expressions (`CURRENT_TIMESTAMP`, `uuid()`) are not literals and are skipped;
 *   format v2 cannot carry defaults at all. Both produce a note for the log.
 * - Partition spec from `tables.overrides["db.table"].partitionBy`; properties = the target file size
 *   and metadata-file retention (the last 20 versions kept, older ones deleted at commit), then
 *   `iceberg.properties`, then the override's properties; the format version from the override, else
 *   `iceberg.formatVersion`.
 *
 * The mapping is pure (no I/O); `table-mapping-catalog.ts` creates or checks the table in the catalog.
 */
import type { TableIdentifier } from '../iceberg/metadata/catalog.js';
import { checkTableIdentifier } from '../catalog/identifiers.js';
import type { FloeConfig } from '../config/schema.js';
import { parsePartitionSpec } from '../iceberg/spec/partition-spec-text.js';
import { UNPARTITIONED, type PartitionSpec } from '../iceberg/spec/partition.js';
import { Schema } from '../iceberg/spec/schema.js';
import { METADATA_DELETE_AFTER_COMMIT, METADATA_PREVIOUS_VERSIONS_MAX } from '../iceberg/spec/table-metadata-constants.js';
import { TARGET_FILE_SIZE_PROPERTY } from '../iceberg/writer/table-locations.js';
import { parquetCodecsOf } from '../iceberg/writer/parquet-codec.js';
import { parsePrimitive, type NestedField, type PrimitiveType } from '../iceberg/spec/types.js';
import type { Value } from '../model/values.js';
import { literalDefaultValue } from '../source/mysql/index.js';
import { isRequired } from '../source/mysql/index.js';
import { tableKey, type TableId } from '../source/mysql/index.js';
import type { MappedTable } from '../source/mysql/index.js';
import { errorMessage, FloeError } from '../util/errors.js';
import { transformedType, valueTransformer, type TransformLookup } from './transforms.js';

const SUBSYSTEM = 'pipeline.table-mapping';

/** Metadata files kept besides the current one on the tables floe creates. */
const FLOE_PREVIOUS_METADATA_VERSIONS = 20;

/** One kept column: where its value comes from in a source row and what the Iceberg field is. */
export interface ColumnMapping {
  /** Index of the column in the source's rows (the MySQL column order). */
  readonly sourceIndex: number;
  readonly name: string;
  readonly fieldId: number;
  readonly type: PrimitiveType;
  readonly required: boolean;
  /** hash / mask of the value; undefined = the value as the source gives it. */
  readonly transform?: (value: Value) => Value;
}

export interface TableMapping {
  readonly source: TableId;
  /** 'db.table' */
  readonly sourceKey: string;
  readonly identifier: TableIdentifier;
  /** The schema a new table is created with (ids 1..n). */
  readonly schema: Schema;
  readonly partitionSpec: PartitionSpec;
  readonly properties: Record<string, string>;
  readonly formatVersion: 2 | 3;
  /** No primary key: rows are their own identity (writer `append` mode). */
  readonly keyless: boolean;
  /** Kept columns in field order. */
  readonly columns: readonly ColumnMapping[];
  /** Columns in the source's rows (kept and dropped). */
  readonly sourceColumnCount: number;
  /** Things an operator should know (skipped defaults); logged once per table. */
  readonly notes: readonly string[];
}

export type MappingConfig = Pick<FloeConfig, 'tables' | 'iceberg'>;

/** The Iceberg identifier of a source table (templates + overrides). */
export function icebergIdentifier(source: TableId, config: MappingConfig): TableIdentifier {
  const override = config.tables.overrides[tableKey(source)];
  const fill = (template: string) => template.replaceAll('{database}', source.database).replaceAll('{table}', source.table);
  const namespace = fill(override?.namespace ?? config.tables.namespace)
    .split('.')
    .map((s) => s.trim());
  const name = fill(override?.name ?? config.tables.name);
  if (namespace.some((level) => level === '') || name === '') {
    throw new FloeError(SUBSYSTEM, 'config', `table ${tableKey(source)}: the namespace ${JSON.stringify(namespace.join('.'))} / name ${JSON.stringify(name)} made from tables.namespace/tables.name has an empty part; fix the template or the override`);
  }
  const identifier = { namespace, name };
  try {
    checkTableIdentifier(identifier);
  } catch (e) {
    // MySQL allows nearly any name ('../x', 'a/b', names starting with '.': it encodes them in its
    // own file names); a catalog directory or key cannot hold them. Said before anything is created,
    // with the two ways out, instead of failing later inside the catalog without naming the table.
    throw new FloeError(
      SUBSYSTEM,
      'config',
      `table ${tableKey(source)}: its Iceberg identifier ${JSON.stringify([...namespace, name].join('.'))} is not a valid catalog name (${errorMessage(e).replace(/^catalog: /, '')}); give it another with tables.overrides[${JSON.stringify(tableKey(source))}].name (or .namespace), or leave it out with source.exclude`,
      { cause: e },
    );
  }
  return identifier;
}

export function planTableMapping(mapped: MappedTable, config: MappingConfig, transforms: TransformLookup): TableMapping {
  const source = mapped.schema.id;
  const sourceKey = tableKey(source);
  const formatVersion = config.tables.overrides[sourceKey]?.formatVersion ?? config.iceberg.formatVersion;
  const primaryKey = new Set(mapped.schema.primaryKey);
  const notes: string[] = [];
  const columns: ColumnMapping[] = [];
  const fields: NestedField[] = [];
  let skippedDefaultsV2 = 0;

  mapped.columns.forEach((column, sourceIndex) => {
    const name = column.column.name;
    const transform = transforms(source.database, source.table, name);
    const isKey = primaryKey.has(name);
    if (transform && isKey && transform.kind !== 'hash') {
      throw new FloeError(SUBSYSTEM, 'config', `transforms: column ${sourceKey}.${name} is part of the primary key and cannot be ${transform.kind === 'drop' ? 'dropped' : 'masked'} (rows would lose their identity); use a hash transform for key columns`);
    }
    if (transform?.kind === 'drop') return;
    let sourceType: PrimitiveType;
    try {
      sourceType = parsePrimitive(column.icebergType);
    } catch (e) {
      throw new FloeError(SUBSYSTEM, 'internal', `column ${column.qualifiedName}: the type mapping gave ${column.icebergType}, which is not an Iceberg primitive type: ${errorMessage(e)}`);
    }
    const type = transform ? transformedType(transform, sourceType) : sourceType;
    const apply = transform ? valueTransformer(transform, sourceType) : undefined;
    const fieldId = fields.length + 1;
    const field: NestedField = { id: fieldId, name, required: isKey || isRequired(column), type };
    const dflt = literalDefaultValue(column);
    if (dflt.literal) {
      const value = apply ? apply(dflt.value) : dflt.value;
      if (value !== null) {
        if (formatVersion >= 3) field.writeDefault = value;
        else skippedDefaultsV2++;
      }
    } else if (column.column.default.kind === 'expression' || column.column.default.kind === 'literal') {
      notes.push(`column ${name}: default not carried to Iceberg (${dflt.reason})`);
    }
    if (column.column.comment) field.doc = column.column.comment;
    fields.push(field);
    columns.push({ sourceIndex, name, fieldId, type, required: field.required, transform: apply });
  });
  if (skippedDefaultsV2 > 0) notes.push(`${skippedDefaultsV2} literal column default(s) not carried: format v2 tables cannot hold column defaults (iceberg.formatVersion: 3 can)`);

  const identifierFieldIds = mapped.schema.primaryKey.map((k) => columns.find((c) => c.name === k)!.fieldId);
  let schema: Schema;
  try {
    schema = new Schema(0, fields, identifierFieldIds);
  } catch (e) {
    throw new FloeError(SUBSYSTEM, 'unsupported', `table ${sourceKey}: its primary key (${mapped.schema.primaryKey.join(', ')}) cannot be the Iceberg identifier: ${errorMessage(e)}`, { cause: e });
  }

  const override = config.tables.overrides[sourceKey];
  let partitionSpec: PartitionSpec = UNPARTITIONED;
  if (override?.partitionBy && override.partitionBy.length > 0) {
    try {
      partitionSpec = parsePartitionSpec(override.partitionBy, schema);
    } catch (e) {
      throw new FloeError(SUBSYSTEM, 'config', `tables.overrides["${sourceKey}"].partitionBy: ${errorMessage(e)}`, { cause: e });
    }
  }
  const properties: Record<string, string> = {
    [TARGET_FILE_SIZE_PROPERTY]: String(config.iceberg.targetFileSizeBytes),
    // floe commits every few seconds: keep the last versions for time travel through the
    // metadata-log and delete the older ones, or they pile up (thousands a day; Java's default keeps
    // every file). Overridable by iceberg.properties and per-table properties.
    [METADATA_DELETE_AFTER_COMMIT]: 'true',
    [METADATA_PREVIOUS_VERSIONS_MAX]: String(FLOE_PREVIOUS_METADATA_VERSIONS),
    ...config.iceberg.properties,
    ...(override?.properties ?? {}),
  };
  // refused here, before the table is created with a codec floe would then refuse to write
  parquetCodecsOf(properties, `table ${sourceKey} (iceberg.properties and tables.overrides["${sourceKey}"].properties)`);

  return {
    source,
    sourceKey,
    identifier: icebergIdentifier(source, config),
    schema,
    partitionSpec,
    properties,
    formatVersion,
    keyless: identifierFieldIds.length === 0,
    columns,
    sourceColumnCount: mapped.columns.length,
    notes,
  };
}

/**
 * Metadata of a fresh table (Java `TableMetadata.newTableMetadata`), as every catalog's createTable
 * writes it: schema id 0 with last-column-id its highest field id, partition spec 0 with field ids from
 * 1000 (last-partition-id 999 when unpartitioned), the unsorted order `[{order-id:0, fields:[]}]` unless
 * a sort order is given (then order id 1), v3's next-row-id 0, no snapshots.
 *
 * Deviation from Java, on purpose: field ids of the given schema are kept rather than reassigned from 1,
 * because floe's writers already built data files and identifier fields against them (the Catalog
 * interface promises local catalogs keep ids). Partition field ids given as -1 are assigned from 1000.
 */
import { FloeError } from '../../util/errors.js';
import { PARTITION_FIELD_ID_START, UNPARTITIONED, UNPARTITIONED_LAST_ASSIGNED_ID, type PartitionSpec } from '../spec/partition.js';
import { Schema } from '../spec/schema.js';
import { validateSchemaForFormatVersion } from '../spec/schema-json.js';
import { newUuid } from '../spec/snapshot-ids.js';
import { checkSortOrderCompatibility, checkSpecCompatibility } from '../spec/spec-compatibility.js';
import { RESERVED_PROPERTIES } from '../spec/table-metadata-constants.js';
import { stripTrailingSlash } from '../spec/table-metadata-json.js';
import { validateTableMetadata } from '../spec/table-metadata-validate.js';
import type { FormatVersion, SortOrder, TableMetadata } from '../spec/table-metadata.js';

export interface NewTableOptions {
  schema: Schema;
  spec?: PartitionSpec;
  sortOrder?: SortOrder;
  /** Table base location, a URI with a scheme (trailing slash removed). */
  location: string;
  properties?: Record<string, string>;
  /** 2 (default) or 3. */
  formatVersion?: FormatVersion;
  uuid?: string;
  nowMs?: bigint;
}

/** Java persists this default for new tables (TableProperties.PARQUET_COMPRESSION_DEFAULT_SINCE_1_4_0). */
const NEW_TABLE_DEFAULT_PROPERTIES: Record<string, string> = { 'write.parquet.compression-codec': 'zstd' };

function invalid(message: string): FloeError {
  return new FloeError('iceberg.metadata-builder', 'invalid-argument', message);
}

export function newTableMetadata(options: NewTableOptions): TableMetadata {
  const formatVersion = options.formatVersion ?? 2;
  if (formatVersion !== 2 && formatVersion !== 3) {
    throw invalid(`new tables are written in format v2 or v3, found v${formatVersion}`);
  }
  const location = stripTrailingSlash(options.location);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(location)) {
    throw invalid(`table location ${JSON.stringify(options.location)} must be a fully qualified URI with a scheme (file:/…, s3://…), spec "Table Metadata Fields"`);
  }
  const reserved = Object.keys(options.properties ?? {}).filter((k) => RESERVED_PROPERTIES.has(k));
  if (reserved.length > 0) {
    throw invalid(`table properties must not contain reserved properties, found ${reserved.join(', ')}; pass formatVersion / uuid as options`);
  }

  const schema = options.schema.schemaId === 0 ? options.schema : new Schema(0, options.schema.fields, options.schema.identifierFieldIds);
  validateSchemaForFormatVersion(schema, formatVersion);

  const given = options.spec ?? UNPARTITIONED;
  let nextFieldId = PARTITION_FIELD_ID_START;
  const spec: PartitionSpec = {
    specId: 0,
    fields: given.fields.map((f) => {
      const fieldId = f.fieldId >= 0 ? f.fieldId : nextFieldId;
      nextFieldId = Math.max(nextFieldId, fieldId) + 1;
      return { ...f, fieldId };
    }),
  };
  checkSpecCompatibility(spec, schema);
  const lastPartitionId = spec.fields.reduce((max, f) => Math.max(max, f.fieldId), UNPARTITIONED_LAST_ASSIGNED_ID);

  const givenOrder = options.sortOrder;
  const sortOrder: SortOrder = givenOrder && givenOrder.fields.length > 0 ? { orderId: 1, fields: givenOrder.fields } : { orderId: 0, fields: [] };
  checkSortOrderCompatibility(sortOrder, schema);

  const metadata: TableMetadata = {
    formatVersion,
    tableUuid: options.uuid ?? newUuid(),
    location,
    lastSequenceNumber: 0n,
    lastUpdatedMs: options.nowMs ?? BigInt(Date.now()),
    lastColumnId: schema.highestFieldId(),
    schemas: [schema],
    currentSchemaId: 0,
    partitionSpecs: [spec],
    defaultSpecId: 0,
    lastPartitionId,
    properties: { ...NEW_TABLE_DEFAULT_PROPERTIES, ...(options.properties ?? {}) },
    snapshots: [],
    snapshotLog: [],
    metadataLog: [],
    sortOrders: [sortOrder],
    defaultSortOrderId: sortOrder.orderId,
    refs: {},
    statistics: [],
    partitionStatistics: [],
  };
  if (formatVersion >= 3) metadata.nextRowId = 0n;
  validateTableMetadata(metadata, { forWrite: true });
  return metadata;
}

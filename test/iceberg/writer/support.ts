/** Helpers for the upsert-writer tests: temporary filesystem warehouses, test schemas, local paths. */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parquetMetadata, parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import type { TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import type { PartitionSpec } from '../../../src/iceberg/spec/partition.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import type { Row } from '../../../src/model/values.js';
import type { FormatVersion } from '../../../src/iceberg/spec/table-metadata.js';
import { createTable, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { prng } from '../../../src/util/prng.js';
import { madeBeforeAll } from '../../support/before-all.js';
import { chunkCodecs } from '../../support/parquet-footer.js';
export { prng };

export interface Warehouse {
  catalog: FileSystemCatalog;
  dir: string;
  remove: () => void;
}

export async function tempWarehouse(prefix = 'floe-writer-'): Promise<Warehouse> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const catalog = new FileSystemCatalog({ warehouse: path.join(dir, 'warehouse'), warn: () => {} });
  await catalog.createNamespace(['db']);
  return { catalog, dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A `tempWarehouse` for the tests of the calling file (or describe block): made before the first,
 * removed after the last.
 */
export function useTempWarehouse(prefix?: string): Warehouse {
  const w = madeBeforeAll('the temporary warehouse', () => tempWarehouse(prefix), (made) => made.remove());
  return {
    get catalog() {
      return w().catalog;
    },
    get dir() {
      return w().dir;
    },
    remove: () => w().remove(),
  };
}

/** id long (key), grp int (partition source), name string, amount decimal(10,2), tag binary. */
export function keyedSchema(): Schema {
  return new Schema(
    0,
    [
      { id: 1, name: 'id', required: true, type: Types.long },
      { id: 2, name: 'grp', required: true, type: Types.int },
      { id: 3, name: 'name', required: false, type: Types.string },
      { id: 4, name: 'amount', required: false, type: Types.decimal(10, 2) },
      { id: 5, name: 'tag', required: false, type: Types.binary },
    ],
    [1],
  );
}

/** A row of `keyedSchema`: amount 1.00 and the name's UTF-8 bytes as its tag. */
export function keyedRow(id: bigint, grp: number, name: string): Row {
  return [id, grp, name, '1.00', new TextEncoder().encode(name)];
}

/** Partitioned by identity(grp), which is NOT part of the key: updates can move rows between partitions. */
export const BY_GROUP: PartitionSpec = { specId: 0, fields: [{ sourceId: 2, fieldId: 1000, name: 'grp', transform: { kind: 'identity' } }] };

let tables = 0;
export async function newTable(
  w: Warehouse,
  options: { formatVersion: FormatVersion; schema?: Schema; spec?: PartitionSpec; properties?: Record<string, string>; name?: string },
): Promise<CatalogTable> {
  const identifier: TableIdentifier = { namespace: ['db'], name: options.name ?? `t${++tables}` };
  return createTable(w.catalog, identifier, {
    schema: options.schema ?? keyedSchema(),
    partitionSpec: options.spec,
    formatVersion: options.formatVersion,
    properties: options.properties,
  });
}

export function localPath(uri: string): string {
  return uri.startsWith('file:') ? fileURLToPath(uri) : uri;
}

export function readLocal(uri: string): Uint8Array {
  return new Uint8Array(fs.readFileSync(localPath(uri)));
}

export function parquetKeyValues(uri: string): Record<string, string> {
  const md = parquetMetadata(toArrayBuffer(readLocal(uri)));
  return Object.fromEntries((md.key_value_metadata ?? []).map((kv) => [kv.key, kv.value ?? '']));
}

/** Rows of a Parquet file as hyparquet decodes them (independent of floe's reader). */
export async function parquetRows(uri: string): Promise<Record<string, unknown>[]> {
  return (await parquetReadObjects({ file: toArrayBuffer(readLocal(uri)), compressors })) as Record<string, unknown>[];
}

/** The codecs of a local Parquet file's column chunks (`chunkCodecs`). */
export function parquetCodecsOf(uri: string): string[] {
  return chunkCodecs(readLocal(uri));
}

export function parquetColumnNames(uri: string): string[] {
  const md = parquetMetadata(toArrayBuffer(readLocal(uri)));
  return md.schema.slice(1).map((e) => e.name);
}

function toArrayBuffer(b: Uint8Array): ArrayBuffer {
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;
}


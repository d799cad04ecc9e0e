/**
 * Test helpers: a filesystem catalog in a temporary warehouse, and writers of real data files,
 * equality-delete files, v2 position-delete files and v3 deletion vectors for a table (through the
 * project's Parquet and Puffin writers, so everything a scan reads back went through real bytes).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import type { DataFile } from '../../../src/iceberg/spec/data-file.js';
import { partitionType } from '../../../src/iceberg/spec/partition.js';
import {
  equalityDeleteKeyValue,
  equalityDeleteSchema,
  POSITION_DELETE_KEY_VALUE,
  POSITION_DELETE_SCHEMA,
  positionDeleteMetricsConfig,
  positionDeleteRows,
  type PositionDelete,
} from '../../../src/iceberg/parquet/delete-schemas.js';
import { defaultLocationProvider, RollingParquetWriter } from '../../../src/iceberg/parquet/rolling-writer.js';
import { deletionVectorFile, writeDeletionVectorPuffin } from '../../../src/iceberg/puffin/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { toJsonSingleValue } from '../../../src/iceberg/spec/single-value.js';
import type { CatalogTable, CommitResult } from '../../../src/iceberg/table/index.js';
import type { Row, Value } from '../../../src/model/values.js';
import { madeBeforeAll } from '../../support/before-all.js';

export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** id long (the key) and name string: the table the commit tests write. */
export function idNameSchema(): Schema {
  return new Schema(
    0,
    [
      { id: 1, name: 'id', required: true, type: Types.long },
      { id: 2, name: 'name', required: false, type: Types.string },
    ],
    [1],
  );
}

async function tempCatalog(prefix = 'floe-table-'): Promise<{ catalog: FileSystemCatalog; dir: string; remove: () => void }> {
  const t = tempDir(prefix);
  const catalog = new FileSystemCatalog({ warehouse: path.join(t.dir, 'warehouse') });
  await catalog.createNamespace(['db']);
  return { catalog, ...t };
}

/** A `tempCatalog` for the tests of the calling file: made before the first, removed after the last. */
export function useTempCatalog(prefix?: string): { readonly catalog: FileSystemCatalog } {
  const env = madeBeforeAll('the temporary catalog', () => tempCatalog(prefix), (t) => t.remove());
  return {
    get catalog(): FileSystemCatalog {
      return env().catalog;
    },
  };
}

/** `r` narrowed to a committed result; throws when the commit was skipped. */
export function committed<T extends { status: string }>(r: T): Extract<T, { status: 'committed' }> {
  if (r.status !== 'committed') throw new Error(`expected a committed result, got ${r.status}`);
  return r as Extract<T, { status: 'committed' }>;
}

/** The table a committed result made; throws when the commit was skipped. */
export function committedTable(r: CommitResult): CatalogTable {
  return committed(r).table;
}

function schemaOf(table: CatalogTable): Schema {
  return table.metadata.schemas.find((s) => s.schemaId === table.metadata.currentSchemaId)!;
}

/** `name=value/…` (Java `PartitionSpec.partitionToPath`, close enough for tests). */
function partitionPath(table: CatalogTable, specId: number, partition: readonly Value[]): string {
  const spec = table.metadata.partitionSpecs.find((s) => s.specId === specId)!;
  const type = partitionType(spec, schemaOf(table));
  return spec.fields
    .map((f, i) => {
      const v = partition[i] ?? null;
      const text = v === null ? 'null' : String(toJsonSingleValue(type.fields[i].type, v));
      return `${f.name}=${encodeURIComponent(text)}`;
    })
    .join('/');
}

let counter = 0;
function prefix(): string {
  counter++;
  return `${String(counter).padStart(5, '0')}-${process.pid}-${Math.random().toString(36).slice(2, 10)}`;
}

export interface FileOptions {
  specId?: number;
  partition?: Value[];
  /** Write with this schema instead of the table's current one. */
  schema?: Schema;
}

export async function writeDataFile(table: CatalogTable, rows: Row[], o: FileOptions = {}): Promise<DataFile> {
  const specId = o.specId ?? table.metadata.defaultSpecId;
  const partition = o.partition ?? [];
  const writer = new RollingParquetWriter(o.schema ?? schemaOf(table), {
    io: table.io,
    locations: defaultLocationProvider(table.metadata.location),
    specId,
    partition,
    partitionPath: partitionPath(table, specId, partition),
    sortOrderId: 0,
    fileNamePrefix: prefix(),
  });
  await writer.write(rows);
  const files = await writer.close();
  if (files.length !== 1) throw new Error(`expected one data file, wrote ${files.length}`);
  return files[0];
}

/** An equality-delete file of `keys` (rows in the order of the equality fields in the schema). */
export async function writeEqualityDeletes(table: CatalogTable, equalityIds: number[], keys: Row[], o: FileOptions = {}): Promise<DataFile> {
  const specId = o.specId ?? table.metadata.defaultSpecId;
  const partition = o.partition ?? [];
  const deleteSchema = equalityDeleteSchema(o.schema ?? schemaOf(table), equalityIds);
  const writer = new RollingParquetWriter(deleteSchema, {
    io: table.io,
    locations: defaultLocationProvider(table.metadata.location),
    content: 'equality-deletes',
    equalityIds,
    specId,
    partition,
    partitionPath: partitionPath(table, specId, partition),
    keyValueMetadata: equalityDeleteKeyValue(equalityIds),
    fileNamePrefix: `delete-${prefix()}`,
  });
  await writer.write(keys);
  const [file] = await writer.close();
  return file;
}

export async function writePositionDeletes(table: CatalogTable, deletes: PositionDelete[], o: FileOptions = {}): Promise<DataFile> {
  const specId = o.specId ?? table.metadata.defaultSpecId;
  const partition = o.partition ?? [];
  const writer = new RollingParquetWriter(POSITION_DELETE_SCHEMA, {
    io: table.io,
    locations: defaultLocationProvider(table.metadata.location),
    content: 'position-deletes',
    specId,
    partition,
    partitionPath: partitionPath(table, specId, partition),
    metrics: positionDeleteMetricsConfig(),
    keyValueMetadata: POSITION_DELETE_KEY_VALUE,
    fileNamePrefix: `delete-${prefix()}`,
  });
  await writer.write(positionDeleteRows(deletes));
  const [file] = await writer.close();
  return file;
}

/** One Puffin file with a DV per data file given. */
export async function writeDeletionVectors(table: CatalogTable, vectors: { dataFile: DataFile; positions: number[] }[]): Promise<DataFile[]> {
  const puffin = writeDeletionVectorPuffin(vectors.map((v) => ({ referencedDataFile: v.dataFile.filePath, positions: v.positions })));
  const puffinPath = `${table.metadata.location}/data/dv-${prefix()}.puffin`;
  await table.io.write(puffinPath, puffin.bytes);
  return puffin.vectors.map((vector, i) =>
    deletionVectorFile({ puffinPath, fileSizeInBytes: puffin.fileSizeInBytes, vector, specId: vectors[i].dataFile.specId, partition: [...vectors[i].dataFile.partition] }),
  );
}

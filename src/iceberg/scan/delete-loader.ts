/**
 * Loads the deletes a scan applies, each delete file once per scan (cached): equality-delete key sets,
 * v2 position-delete files (positions per referenced data file) and v3 deletion vectors (read by
 * range out of their Puffin file, checked against the manifest's cardinality).
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import { equalityDeleteSchema, POSITION_DELETE_SCHEMA } from '../parquet/delete-schemas.js';
import { readParquetBatches } from '../parquet/reader.js';
import { PositionBitmap, readDeletionVector } from '../puffin/index.js';
import type { Schema } from '../spec/schema.js';
import type { IcebergType } from '../spec/types.js';
import type { DeleteFileRef } from './delete-index.js';
import { ReadProjection, schemaWithFields } from './read-projection.js';
import { tupleKey } from './value-keys.js';

export interface EqualityDeleteSet {
  equalityIds: number[];
  types: IcebergType[];
  keys: Set<string>;
}

function requireParquet(ref: DeleteFileRef, what: string): void {
  if (ref.file.fileFormat !== 'PARQUET') {
    throw new FloeError('iceberg.scan', 'unsupported', `${what} ${ref.file.filePath} is ${ref.file.fileFormat}; floe reads Parquet delete files (and Puffin deletion vectors) only`);
  }
}

export class DeleteLoader {
  private readonly equality = new Map<string, Promise<EqualityDeleteSet>>();
  private readonly positions = new Map<string, Promise<Map<string, PositionBitmap>>>();

  constructor(
    private readonly io: FileIO,
    private readonly schema: Schema,
    private readonly schemas: readonly Schema[],
  ) {}

  /** The key set of an equality-delete file; keys are `tupleKey(types, values of equalityIds)`. */
  equalitySet(ref: DeleteFileRef): Promise<EqualityDeleteSet> {
    let p = this.equality.get(ref.file.filePath);
    if (!p) {
      p = this.loadEquality(ref);
      this.equality.set(ref.file.filePath, p);
    }
    return p;
  }

  private async loadEquality(ref: DeleteFileRef): Promise<EqualityDeleteSet> {
    requireParquet(ref, 'equality-delete file');
    const ids = ref.file.equalityIds ?? [];
    if (ids.length === 0) throw new FloeError('iceberg.scan', 'invalid-data', `equality-delete file ${ref.file.filePath} has no equality_ids`);
    const source = schemaWithFields(this.schema, this.schemas, ids);
    const projection = new ReadProjection(equalityDeleteSchema(source, ids).fields, this.schemas, source);
    const accessors = ids.map((id) => projection.accessor(id));
    const types = ids.map((id) => projection.typeOf(id));
    const keys = new Set<string>();
    for await (const batch of readParquetBatches({ io: this.io, path: ref.file.filePath }, { projection: projection.fields })) {
      for (const row of batch.rows) keys.add(tupleKey(types, accessors.map((a) => a(row))));
    }
    return { equalityIds: ids, types, keys };
  }

  /** Deleted positions of `dataFilePath` in a v2 position-delete file (undefined: none). */
  async positionsFor(ref: DeleteFileRef, dataFilePath: string): Promise<PositionBitmap | undefined> {
    let p = this.positions.get(ref.file.filePath);
    if (!p) {
      p = this.loadPositions(ref);
      this.positions.set(ref.file.filePath, p);
    }
    return (await p).get(dataFilePath);
  }

  private async loadPositions(ref: DeleteFileRef): Promise<Map<string, PositionBitmap>> {
    requireParquet(ref, 'position-delete file');
    const byPath = new Map<string, PositionBitmap>();
    for await (const batch of readParquetBatches({ io: this.io, path: ref.file.filePath }, { projection: POSITION_DELETE_SCHEMA })) {
      for (const [path, pos] of batch.rows as [string, bigint][]) {
        let bitmap = byPath.get(path);
        if (!bitmap) {
          bitmap = new PositionBitmap();
          byPath.set(path, bitmap);
        }
        bitmap.add(pos);
      }
    }
    return byPath;
  }

  /** A deletion vector (not cached: each applies to one data file, read once per scan). */
  async deletionVector(ref: DeleteFileRef): Promise<PositionBitmap> {
    const f = ref.file;
    if (f.contentOffset === undefined || f.contentSizeInBytes === undefined) {
      throw new FloeError('iceberg.scan', 'invalid-data', `deletion vector in ${f.filePath} has no content_offset/content_size_in_bytes`);
    }
    const start = Number(f.contentOffset);
    const length = Number(f.contentSizeInBytes);
    const bytes = await this.io.readRange(f.filePath, start, start + length);
    return readDeletionVector(bytes, 0, length, { expectedCardinality: f.recordCount, what: `deletion vector for ${f.referencedDataFile} in ${f.filePath}` });
  }
}

/**
 * The parsed metadata of the metadata file a catalog last wrote or read, one per table. A commit
 * reads the table's current metadata file before it writes the next one, and under `floe run` that
 * file is nearly always the one the same catalog wrote at the commit before: at a 200 ms interval,
 * a table keeping a few hundred snapshots has ~0.5 MB of metadata JSON, which would be parsed again
 * five times a second.
 *
 * A file is served from the cache only when its location and every one of its bytes equal the
 * cached file's, so another writer's commit, a dropped and re-created table or a file rewritten in
 * place is parsed as before. The metadata object is shared between callers: TableMetadata is never
 * changed once built (metadata-builder.ts `applyUpdates` copies what it changes).
 */
import type { FileIO } from '../io/file-io.js';
import type { TableMetadata } from '../iceberg/spec/table-metadata.js';
import { parseTableMetadataFile } from './filesystem/filesystem-versions.js';

interface CachedFile {
  readonly location: string;
  readonly bytes: Uint8Array;
  readonly metadata: TableMetadata;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

export class MetadataFileCache {
  /** By table (any key naming one table in this catalog): at most one file each. */
  private readonly files = new Map<string, CachedFile>();

  /** The metadata of the file at `location`, current for `table`: read, and parsed unless cached. */
  async read(io: FileIO, table: string, location: string): Promise<TableMetadata> {
    const bytes = await io.read(location);
    const cached = this.files.get(table);
    if (cached !== undefined && cached.location === location && sameBytes(cached.bytes, bytes)) return cached.metadata;
    const metadata = parseTableMetadataFile(bytes, location);
    this.files.set(table, { location, bytes, metadata });
    return metadata;
  }

  /** `table`'s metadata file at `location` was written with `bytes`, holding `metadata`. */
  wrote(table: string, location: string, bytes: Uint8Array, metadata: TableMetadata): void {
    this.files.set(table, { location, bytes, metadata });
  }

  forget(table: string): void {
    this.files.delete(table);
  }
}

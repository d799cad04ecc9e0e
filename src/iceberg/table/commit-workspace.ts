/**
 * The files one commit writes besides the caller's data and delete files: manifests (new, filtered,
 * merged) and one manifest list per attempt. It names them (Java's `<commit uuid>-m<N>.avro`), keeps
 * the entries of the manifests it wrote in memory (merging re-reads them, and DELETED entries written
 * by this commit must keep their snapshot id), and remembers every path so that a failed or skipped
 * commit can remove them — never after an unknown outcome, when a catalog may still point at them.
 */
import { randomUUID } from 'node:crypto';
import type { FileIO } from '../../io/file-io.js';
import { errorMessage, FloeError } from '../../util/errors.js';
import type { ManifestEntry } from '../spec/data-file.js';
import type { ManifestContent, ManifestFile } from '../manifest/manifest-file.js';
import type { ManifestFormatVersion } from '../manifest/manifest-schemas.js';
import type { PartitionSpec } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import { manifestListPath, manifestPath, writeManifestFile } from './manifest-io.js';
import type { ManifestReads } from './manifest-reads.js';
import { metadataDirectory } from './table-properties.js';

const SUBSYSTEM = 'iceberg.commit';

export function manifestFormatVersion(metadata: TableMetadata): ManifestFormatVersion {
  if (metadata.formatVersion !== 2 && metadata.formatVersion !== 3) {
    throw new FloeError(SUBSYSTEM, 'unsupported', `floe commits to format v2 and v3 tables, this table is v${metadata.formatVersion}; upgrade it (upgrade-format-version) first`);
  }
  return metadata.formatVersion;
}

function schemaOf(metadata: TableMetadata): Schema {
  const schema = metadata.schemas.find((s) => s.schemaId === metadata.currentSchemaId);
  if (!schema) throw new FloeError(SUBSYSTEM, 'invalid-data', `table has no current schema ${metadata.currentSchemaId}`);
  return schema;
}

export function specOf(metadata: TableMetadata, specId: number): PartitionSpec {
  const spec = metadata.partitionSpecs.find((s) => s.specId === specId);
  if (!spec) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `partition spec ${specId} is not in the table (specs: ${metadata.partitionSpecs.map((s) => s.specId).join(', ')}); add it before committing files written with it`);
  }
  return spec;
}

export class CommitWorkspace {
  readonly commitId = randomUUID();
  /** Every file this commit wrote, in order. */
  readonly written: string[] = [];
  private counter = 0;
  private readonly entries = new Map<string, ManifestEntry[]>();
  private readonly metadataDir: string;

  readonly io: FileIO;

  constructor(
    /** The commit's reads of committed manifests (manifest-reads.ts). */
    private readonly reads: ManifestReads,
    metadata: TableMetadata,
    readonly snapshotId: bigint,
  ) {
    this.io = reads.io;
    this.metadataDir = metadataDirectory(metadata);
  }

  /** Writes a manifest of `entries` (one spec, one content) with the table's current schema. */
  async writeManifest(metadata: TableMetadata, specId: number, content: ManifestContent, entries: ManifestEntry[]): Promise<ManifestFile> {
    const path = manifestPath(this.metadataDir, this.commitId, this.counter++);
    this.written.push(path);
    const manifest = await writeManifestFile(this.io, {
      formatVersion: manifestFormatVersion(metadata),
      schema: schemaOf(metadata),
      spec: specOf(metadata, specId),
      content,
      entries,
      snapshotId: this.snapshotId,
      path,
    });
    this.entries.set(path, entries);
    return manifest;
  }

  /** Entries of a manifest: from memory for this commit's own, else as the commit read them (with inheritance). */
  async entriesOf(manifest: ManifestFile): Promise<ManifestEntry[]> {
    const local = this.entries.get(manifest.path);
    if (local) return local;
    return this.reads.entriesOf(manifest);
  }

  isOwn(manifest: ManifestFile): boolean {
    return this.entries.has(manifest.path);
  }

  async writeManifestList(attempt: number, bytes: Uint8Array): Promise<string> {
    const path = manifestListPath(this.metadataDir, this.snapshotId, attempt, this.commitId);
    this.written.push(path);
    await this.io.write(path, bytes);
    return path;
  }

  /** Deletes written files except `keep`, best effort (orphans are invisible to readers). */
  async cleanUp(keep: ReadonlySet<string>, warn: (message: string) => void): Promise<void> {
    for (const path of this.written) {
      if (keep.has(path)) continue;
      try {
        await this.io.delete(path);
      } catch (e) {
        warn(`${SUBSYSTEM}: could not delete uncommitted file ${path}: ${errorMessage(e)}`);
      }
    }
  }
}

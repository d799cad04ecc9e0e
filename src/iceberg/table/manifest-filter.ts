/**
 * Removing files from a table (Java `ManifestFilterManager`): every carried-over manifest that holds a
 * file to remove is rewritten — the removed files as DELETED entries (this snapshot's id, their
 * sequence numbers kept), every other live file as EXISTING with explicit sequence numbers, DELETED
 * entries of earlier snapshots dropped. Manifests without such a file are carried over untouched. A
 * file to remove that is not live in the parent snapshot is an error: a concurrent commit removed it
 * first (Java "Missing required files to delete"), and retrying would not help.
 *
 * Files are identified by path, plus the blob offset for deletion vectors (several DVs share one
 * Puffin file; Java `DeleteFileSet`).
 */
import { FloeError } from '../../util/errors.js';
import type { DataFile, ManifestEntry } from '../spec/data-file.js';
import type { ManifestFile } from '../manifest/manifest-file.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import type { CommitWorkspace } from './commit-workspace.js';
import { mapConcurrently } from '../../util/concurrent.js';

/** Manifests read or rewritten at once. */
const MANIFESTS_AT_ONCE = 8;

export function contentFileKey(file: DataFile): string {
  return file.contentOffset === undefined ? file.filePath : `${file.filePath}#${file.contentOffset}`;
}

export interface FilterResult {
  manifests: ManifestFile[];
  /** The removed files as the parent's manifests record them (for the summary). */
  removed: DataFile[];
}

export class ManifestFilter {
  /** Rewritten manifests by the path of the manifest they replace (the same parent manifest on every attempt). */
  private readonly cache = new Map<string, { manifest: ManifestFile; removed: DataFile[] }>();
  private readonly toRemove: Map<string, DataFile>;

  constructor(
    private readonly workspace: CommitWorkspace,
    removedFiles: readonly DataFile[],
  ) {
    this.toRemove = new Map(removedFiles.map((f) => [contentFileKey(f), f]));
  }

  get isEmpty(): boolean {
    return this.toRemove.size === 0;
  }

  async filter(metadata: TableMetadata, parentManifests: readonly ManifestFile[]): Promise<FilterResult> {
    if (this.toRemove.size === 0) return { manifests: [...parentManifests], removed: [] };
    const specs = new Set([...this.toRemove.values()].map((f) => `${f.content === 'data' ? 'data' : 'deletes'}:${f.specId}`));
    // the manifests are read and rewritten concurrently (most are not touched); kept in their order
    const filtered = await mapConcurrently(parentManifests, MANIFESTS_AT_ONCE, async (manifest) => {
      if (!specs.has(`${manifest.content}:${manifest.specId}`)) return { manifest, removed: [] };
      const cached = this.cache.get(manifest.path);
      if (cached) return cached;
      const entries = await this.workspace.entriesOf(manifest);
      const live = entries.filter((e) => e.status !== 'deleted');
      const hits = live.filter((e) => this.toRemove.has(contentFileKey(e.dataFile)));
      if (hits.length === 0) return { manifest, removed: [] };
      const rewritten: ManifestEntry[] = live.map((e) => {
        const status = this.toRemove.has(contentFileKey(e.dataFile)) ? 'deleted' : 'existing';
        return { status, snapshotId: e.snapshotId, sequenceNumber: e.sequenceNumber, fileSequenceNumber: e.fileSequenceNumber, dataFile: e.dataFile };
      });
      const written = await this.workspace.writeManifest(metadata, manifest.specId, manifest.content, rewritten);
      // DELETED entries carry this snapshot's id (the writer sets it); keep the in-memory copy in step.
      for (const e of rewritten) if (e.status === 'deleted') e.snapshotId = this.workspace.snapshotId;
      const result = { manifest: written, removed: hits.map((e) => e.dataFile) };
      this.cache.set(manifest.path, result);
      return result;
    });
    const found = new Map<string, DataFile>();
    for (const r of filtered) for (const f of r.removed) found.set(contentFileKey(f), f);
    const manifests = filtered.map((r) => r.manifest);
    const missing = [...this.toRemove.keys()].filter((k) => !found.has(k));
    if (missing.length > 0) {
      throw new FloeError('iceberg.commit', 'commit-conflict', `cannot remove ${missing.length} file(s) that are not live in the table's current snapshot (first: ${missing[0]}); a concurrent commit removed them or they were never committed — reload the table and plan the change again`, { retryable: false });
    }
    return { manifests, removed: [...found.values()] };
  }
}

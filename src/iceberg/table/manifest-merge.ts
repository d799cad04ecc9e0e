/**
 * Manifest merging (Java `ManifestMergeManager`, used by `MergingSnapshotProducer`): floe commits every
 * few seconds, and without merging every commit would add a manifest to the list forever, so planning
 * a scan would read ever more files. Per partition spec (highest spec id first), manifests are packed
 * into bins of `commit.manifest.target-size-bytes` from the end of the list with a lookback of 1 (so
 * the order is kept and the under-filled bin is the newest one, merged again next time); a bin of more
 * than one manifest is rewritten as one manifest — except the bin holding this commit's first manifest
 * while it has fewer than `commit.manifest.min-count-to-merge` manifests.
 *
 * In a merged manifest, files added by this commit stay ADDED (sequence numbers left to inheritance, so
 * the manifest survives a retry), every other live file becomes EXISTING with its snapshot id and both
 * sequence numbers explicit, and DELETED entries of older snapshots are dropped (only deletions made by
 * this commit are kept). Data and delete manifests are merged separately. Merged manifests are cached
 * by their input list, so a retry that sees the same inputs reuses the file.
 */
import type { ManifestEntry } from '../spec/data-file.js';
import type { ManifestContent, ManifestFile } from '../manifest/manifest-file.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import type { CommitWorkspace } from './commit-workspace.js';
import {
  booleanProperty,
  intProperty,
  MANIFEST_MERGE_ENABLED,
  MANIFEST_MERGE_ENABLED_DEFAULT,
  MANIFEST_MIN_MERGE_COUNT,
  MANIFEST_MIN_MERGE_COUNT_DEFAULT,
  MANIFEST_TARGET_SIZE_BYTES,
  MANIFEST_TARGET_SIZE_BYTES_DEFAULT,
} from './table-properties.js';

interface MergePolicy {
  enabled: boolean;
  minCountToMerge: number;
  targetSizeBytes: number;
}

function mergePolicy(metadata: TableMetadata): MergePolicy {
  return {
    enabled: booleanProperty(metadata, MANIFEST_MERGE_ENABLED, MANIFEST_MERGE_ENABLED_DEFAULT),
    minCountToMerge: intProperty(metadata, MANIFEST_MIN_MERGE_COUNT, MANIFEST_MIN_MERGE_COUNT_DEFAULT),
    targetSizeBytes: intProperty(metadata, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT),
  };
}

/**
 * Java `BinPacking.ListPacker.packEnd` with lookback 1: bins of consecutive items whose weights sum to
 * at most `target` (a single heavier item gets its own bin), filled from the end of the list.
 */
export function packEnd<T>(items: readonly T[], weight: (item: T) => number, target: number): T[][] {
  const bins: T[][] = [];
  let current: T[] = [];
  let currentWeight = 0;
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    const w = weight(item);
    if (current.length > 0 && currentWeight + w > target) {
      bins.push(current);
      current = [];
      currentWeight = 0;
    }
    current.push(item);
    currentWeight += w;
  }
  if (current.length > 0) bins.push(current);
  return bins.reverse().map((bin) => bin.reverse());
}

export class ManifestMerger {
  private readonly cache = new Map<string, ManifestFile>();

  constructor(
    private readonly workspace: CommitWorkspace,
    private readonly content: ManifestContent,
  ) {}

  /**
   * Merges `manifests` (this commit's new manifests first, then the carried-over ones) under the
   * table's policy; returns the manifests for the new list, in order.
   */
  async merge(metadata: TableMetadata, manifests: readonly ManifestFile[]): Promise<ManifestFile[]> {
    const policy = mergePolicy(metadata);
    if (!policy.enabled || manifests.length === 0) return [...manifests];
    const first = manifests[0]!;
    const groups = new Map<number, ManifestFile[]>();
    for (const m of manifests) {
      const g = groups.get(m.specId);
      if (g) g.push(m);
      else groups.set(m.specId, [m]);
    }
    const out: ManifestFile[] = [];
    for (const specId of [...groups.keys()].sort((a, b) => b - a)) {
      const bins = packEnd(groups.get(specId)!, (m) => Number(m.length), policy.targetSizeBytes);
      for (const bin of bins) {
        if (bin.length === 1 || (bin.includes(first) && bin.length < policy.minCountToMerge)) {
          out.push(...bin);
        } else {
          out.push(await this.mergeBin(metadata, specId, bin));
        }
      }
    }
    return out;
  }

  private async mergeBin(metadata: TableMetadata, specId: number, bin: readonly ManifestFile[]): Promise<ManifestFile> {
    const key = bin.map((m) => m.path).join('\n');
    const cached = this.cache.get(key);
    if (cached) return cached;
    const snapshotId = this.workspace.snapshotId;
    const entries: ManifestEntry[] = [];
    for (const manifest of bin) {
      for (const e of await this.workspace.entriesOf(manifest)) {
        if (e.status === 'deleted') {
          // Suppress deletes of earlier snapshots; only this commit's deletions belong in it.
          if (e.snapshotId === snapshotId) entries.push({ ...e });
        } else if (e.status === 'added' && (e.snapshotId === undefined || e.snapshotId === snapshotId) && this.workspace.isOwn(manifest)) {
          entries.push({ ...e });
        } else {
          entries.push({ status: 'existing', snapshotId: e.snapshotId, sequenceNumber: e.sequenceNumber, fileSequenceNumber: e.fileSequenceNumber, dataFile: e.dataFile });
        }
      }
    }
    const merged = await this.workspace.writeManifest(metadata, specId, this.content, entries);
    this.cache.set(key, merged);
    return merged;
  }
}

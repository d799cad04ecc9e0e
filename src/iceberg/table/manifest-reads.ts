/**
 * The manifests one commit reads, each read once (pyiceberg `_SnapshotProducer` reads the parent's
 * manifests once and derives the new list from them; Java's validations walk the ancestors once).
 * A commit attempt needs the head's manifest list and delete manifests in three places — the
 * deletes a new deletion vector merges (checkpoint/existing-deletes.ts), the carried-over manifests
 * of the new list (snapshot-producer.ts) and the entries of those that lose files
 * (manifest-filter.ts) — and on a retry, the changes of every snapshot committed since it was
 * planned (concurrent-dv-check.ts, checkpoint/committed-dv-targets.ts). One `ManifestReads` per
 * commit serves them all.
 *
 * Sound because what is cached never changes: a manifest list and a manifest are immutable once
 * written (spec "Overview": files are never modified in place), and each is keyed by its path. The
 * cache lives as long as one commit (its attempts and re-plans), never across commits.
 */
import type { FileIO } from '../../io/file-io.js';
import type { DataFile, ManifestEntry } from '../spec/data-file.js';
import type { ManifestFile } from '../manifest/manifest-file.js';
import { ancestorsOf } from '../spec/snapshot-ids.js';
import { MAIN_BRANCH } from '../spec/table-metadata-constants.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';
import { readManifestEntries, readSnapshotManifests } from './manifest-io.js';

/** What one snapshot itself changed: the entries of the manifests it added (carried-over ones excluded). */
export interface SnapshotChanges {
  readonly addedDataFiles: readonly DataFile[];
  readonly removedDataFiles: readonly DataFile[];
  readonly addedDeleteFiles: readonly DataFile[];
  readonly removedDeleteFiles: readonly DataFile[];
}

export class ManifestReads {
  private readonly lists = new Map<string, Promise<ManifestFile[]>>();
  private readonly entries = new Map<string, Promise<ManifestEntry[]>>();
  private readonly changes = new Map<bigint, Promise<SnapshotChanges>>();

  constructor(readonly io: FileIO) {}

  /** The manifests of `snapshot`, in list order. */
  manifestsOf(snapshot: Snapshot): Promise<ManifestFile[]> {
    return memo(this.lists, snapshot.manifestList, () => readSnapshotManifests(this.io, snapshot));
  }

  /** The entries of a committed manifest (DELETED ones included), inheritance applied. */
  entriesOf(manifest: ManifestFile): Promise<ManifestEntry[]> {
    return memo(this.entries, manifest.path, () => readManifestEntries(this.io, manifest));
  }

  /** What `snapshot` added and removed itself. */
  changesOf(snapshot: Snapshot): Promise<SnapshotChanges> {
    return memo(this.changes, snapshot.snapshotId, async () => {
      const out = { addedDataFiles: [] as DataFile[], removedDataFiles: [] as DataFile[], addedDeleteFiles: [] as DataFile[], removedDeleteFiles: [] as DataFile[] };
      for (const manifest of await this.manifestsOf(snapshot)) {
        if (manifest.addedSnapshotId !== snapshot.snapshotId) continue; // carried over: not this snapshot's change
        for (const e of await this.entriesOf(manifest)) {
          if (e.status === 'existing') continue;
          const added = e.status === 'added';
          if (manifest.content === 'data') (added ? out.addedDataFiles : out.removedDataFiles).push(e.dataFile);
          else (added ? out.addedDeleteFiles : out.removedDeleteFiles).push(e.dataFile);
        }
      }
      return out;
    });
  }

  /**
   * The snapshots of main committed after `since`, newest first (none when `since` is the head), and
   * whether `since` was reached: false when it is not in main's history any more (expired, or the
   * branch was rolled back), or undefined was asked for on a table that has snapshots.
   */
  snapshotsSince(metadata: TableMetadata, since: bigint | undefined): { snapshots: Snapshot[]; reached: boolean } {
    const head = metadata.refs[MAIN_BRANCH]?.snapshotId ?? metadata.currentSnapshotId;
    const snapshots: Snapshot[] = [];
    for (const s of ancestorsOf(metadata, head)) {
      if (s.snapshotId === since) return { snapshots, reached: true };
      snapshots.push(s);
    }
    return { snapshots, reached: since === undefined };
  }
}

function memo<K, V>(cache: Map<K, Promise<V>>, key: K, read: () => Promise<V>): Promise<V> {
  let p = cache.get(key);
  if (!p) {
    p = read();
    cache.set(key, p);
    // a failed read is not remembered: the next ask reads again
    p.catch(() => cache.delete(key));
  }
  return p;
}

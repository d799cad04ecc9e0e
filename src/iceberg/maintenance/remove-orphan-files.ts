/**
 * Orphan-file removal (Java `DeleteOrphanFiles`): files under the table's location that nothing the
 * table's metadata reaches refers to, and that are older than a safety window — leftovers of
 * commits that never landed (a process killed between writing its files and committing them), of
 * expiries that stopped midway, and floe's own snapshot state objects no commit refers to any more.
 *
 * Reachable (kept): the current metadata file and those in its metadata-log, `version-hint.text`,
 * statistics files, every snapshot's manifest list, its manifests and every file they name (any
 * entry status — conservative: a file a reader of some retained snapshot may open stays), and what
 * the caller's `referencedObjects` names: the objects a writer's state beside the table references,
 * which the table's metadata cannot show (floe's snapshot state objects, named by its checkpoint
 * stamps: pipeline/state-references.ts). The format of those references is the writer's, not this
 * module's.
 *
 * The window (`olderThanMs`, Java's default 3 days) is what protects files of commits in flight —
 * another writer's, or this process's next checkpoint: never set it below the longest time a writer
 * may hold written files before committing them. A file whose age the store cannot tell is kept.
 * Unlike Java's action, hidden paths (`.floe/`) are included: floe owns what is there.
 *
 * Crash safety (docs/design.md §4b): nothing is committed; each deletion removes a file nothing
 * reaches, so a crash among them (failpoint `orphans-mid-delete`, hit after each deleted file) leaves
 * the rest for the next run, which lists again and finishes the job.
 */
import type { FileIO } from '../../io/file-io.js';
import { errorMessage } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import type { TableMetadata } from '../spec/table-metadata.js';
import type { CatalogTable } from '../table/catalog-table.js';
import { readManifestEntries, readSnapshotManifests } from '../table/manifest-io.js';

const SUBSYSTEM = 'iceberg.maintenance';

export interface OrphanOptions {
  olderThanMs: number;
  nowMs?: number;
  dryRun?: boolean;
  warn?: (message: string) => void;
  /**
   * The objects under the table's location its writers' state references beyond the metadata
   * (floe's pipeline passes its snapshot state objects: pipeline/state-references.ts). Without it
   * only what the metadata reaches is kept.
   */
  referencedObjects?: (table: CatalogTable) => Promise<Iterable<string>>;
}

export interface OrphanResult {
  /** Orphans deleted (or, in a dry run, that would be). */
  orphans: string[];
  /** Unreferenced files kept because they are younger than the window (or of unknown age). */
  tooYoung: number;
  listed: number;
}

export async function removeOrphanFiles(table: CatalogTable, options: OrphanOptions): Promise<OrphanResult> {
  const io = table.io;
  const m = table.metadata;
  const reachable = await reachableFiles(io, m, table.metadataLocation);
  for (const p of (await options.referencedObjects?.(table)) ?? []) reachable.add(normalize(p));
  const root = `${m.location.replace(/\/+$/, '')}/`;
  const listed = io.listWithTimes ? await io.listWithTimes(root) : (await io.list(root)).map((location) => ({ location, modifiedMs: Number.NaN }));
  const cutoff = (options.nowMs ?? Date.now()) - options.olderThanMs;
  const orphans: string[] = [];
  let tooYoung = 0;
  for (const f of listed) {
    if (reachable.has(normalize(f.location))) continue;
    if (!(f.modifiedMs < cutoff)) {
      tooYoung++;
      continue;
    }
    orphans.push(f.location);
  }
  if (!options.dryRun) {
    for (const f of orphans) {
      try {
        await io.delete(f);
      } catch (e) {
        options.warn?.(`${SUBSYSTEM}: could not delete the orphan file ${f}: ${errorMessage(e)}`);
      }
      await failpoint('orphans-mid-delete');
    }
  }
  return { orphans, tooYoung, listed: listed.length };
}

/** Locations compared without the spelling differences engines use (`file:/x`, `file:///x`, `/x`; s3a/s3n). */
function normalize(location: string): string {
  if (location.startsWith('file:')) return location.replace(/^file:\/*/, '/');
  if (location.startsWith('/')) return location;
  return location.replace(/^s3[an]:\/\//, 's3://');
}

async function reachableFiles(io: FileIO, m: TableMetadata, metadataLocation: string): Promise<Set<string>> {
  const out = new Set<string>();
  const add = (p: string | undefined) => {
    if (p) out.add(normalize(p));
  };
  add(metadataLocation);
  for (const e of m.metadataLog) add(e.metadataFile);
  add(`${metadataLocation.slice(0, metadataLocation.lastIndexOf('/'))}/version-hint.text`);
  for (const s of [...(m.statistics ?? []), ...(m.partitionStatistics ?? [])]) {
    const path = (s as Record<string, unknown>)['statistics-path'] ?? (s as Record<string, unknown>).statisticsPath;
    if (typeof path === 'string') add(path);
  }
  const seenManifests = new Set<string>();
  for (const s of m.snapshots) {
    add(s.manifestList);
    for (const mf of await readSnapshotManifests(io, s)) {
      if (seenManifests.has(mf.path)) continue; // carried over from the parent: read once
      seenManifests.add(mf.path);
      add(mf.path);
      for (const e of await readManifestEntries(io, mf)) add(e.dataFile.filePath);
    }
  }
  return out;
}

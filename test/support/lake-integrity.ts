/**
 * The invariant every maintenance step must keep, whatever moment it is killed at (docs/design.md
 * §4b: "deleting only files no retained snapshot reaches"): every file the current metadata reaches
 * exists — the metadata file itself, every retained snapshot's manifest list, its manifests, the data
 * and delete files live in them (Puffin deletion vectors included: a DV entry's path is its Puffin
 * file), the statistics files, and the floe state objects the checkpoint stamps name (a resume needs
 * them). Read with the table's own FileIO, so it checks what a reader would open, not a local listing.
 *
 * `unreachableFiles` is the other half, for "the job completed": files under the table's location
 * that nothing the metadata reaches refers to (what orphan removal exists to take).
 *
 * `addedDeleteFiles` counts the delete files every snapshot of a table ever added, by kind — what a
 * format-v3 test reads to show that floe never wrote an equality delete.
 */
import type { FileIO } from '../../src/io/file-io.js';
import { readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../src/iceberg/table/index.js';
import { ManifestReads } from '../../src/iceberg/table/manifest-reads.js';
import { errorMessage } from '../../src/util/errors.js';

const decoder = new TextDecoder();

export interface ReachableSet {
  /** Every file the metadata reaches, normalized (no `file:` scheme). */
  files: Set<string>;
  /** Also the files only DELETED entries of those manifests name (orphan removal keeps them too). */
  named: Set<string>;
  /** Live content files checked, by kind ('data', 'equality-deletes', 'position-deletes', 'deletion-vectors'). */
  checked: Record<string, number>;
  /**
   * Files reached but absent (or unreadable, for manifest lists and manifests), or whose object is
   * not the size the manifest records (a partial upload), with what reached them.
   */
  missing: string[];
}

function normalize(location: string): string {
  return location.startsWith('file:') ? location.replace(/^file:\/*/, '/') : location;
}

/** Walks everything the table's current metadata reaches and notes what is missing. */
export async function reachableFiles(table: CatalogTable): Promise<ReachableSet> {
  const io = table.io;
  const m = table.metadata;
  const files = new Set<string>();
  const named = new Set<string>();
  const checked: Record<string, number> = {};
  const missing: string[] = [];
  const check = async (path: string, what: string, recordedSize?: bigint | number): Promise<boolean> => {
    files.add(normalize(path));
    const size = await io.size(path);
    if (size === undefined) {
      missing.push(`${what}: ${path}`);
      return false;
    }
    if (recordedSize !== undefined && BigInt(size) !== BigInt(recordedSize)) {
      missing.push(`${what}: ${path} has ${size} bytes, its manifest records ${recordedSize}`);
      return false;
    }
    return true;
  };
  await check(table.metadataLocation, 'current metadata file');
  for (const s of [...(m.statistics ?? []), ...(m.partitionStatistics ?? [])]) {
    const p = (s as Record<string, unknown>)['statistics-path'] ?? (s as Record<string, unknown>).statisticsPath;
    if (typeof p === 'string') await check(p, 'statistics file');
  }
  const seenManifests = new Set<string>();
  const seenContent = new Set<string>();
  const offsets: string[] = [];
  for (const s of m.snapshots) {
    const offset = s.summary['floe.source-offset'];
    if (offset && s.snapshotId === m.currentSnapshotId) offsets.push(offset);
    if (!s.manifestList || !(await check(s.manifestList, `manifest list of snapshot ${s.snapshotId}`))) continue;
    let manifests;
    try {
      manifests = await readSnapshotManifests(io, s);
    } catch (e) {
      missing.push(`unreadable manifest list of snapshot ${s.snapshotId}: ${s.manifestList} (${errorMessage(e)})`);
      continue;
    }
    for (const mf of manifests) {
      if (seenManifests.has(mf.path)) continue;
      seenManifests.add(mf.path);
      if (!(await check(mf.path, `manifest of snapshot ${s.snapshotId}`, mf.length))) continue;
      let entries;
      try {
        entries = await readManifestEntries(io, mf);
      } catch (e) {
        missing.push(`unreadable manifest ${mf.path} of snapshot ${s.snapshotId} (${errorMessage(e)})`);
        continue;
      }
      for (const e of entries) {
        named.add(normalize(e.dataFile.filePath));
        // a DELETED entry records a removal: the file is not part of this snapshot any more
        if (e.status === 'deleted' || seenContent.has(e.dataFile.filePath)) continue;
        seenContent.add(e.dataFile.filePath);
        const kind = e.dataFile.fileFormat === 'PUFFIN' ? 'deletion-vectors' : e.dataFile.content;
        checked[kind] = (checked[kind] ?? 0) + 1;
        await check(e.dataFile.filePath, `${e.dataFile.content} file live in snapshot ${s.snapshotId}`, e.dataFile.fileSizeInBytes);
      }
    }
  }
  for (const [key, value] of Object.entries(m.properties)) if (/^floe\.job\..+\.last-checkpoint$/.test(key)) offsets.push(stampOffset(value));
  for (const text of offsets) for (const p of await stateObjects(io, text)) await check(p, 'floe state object named by a checkpoint stamp');
  return { files, named, checked, missing };
}

function stampOffset(value: string): string {
  try {
    const o = (JSON.parse(value) as { 'source-offset'?: unknown })['source-offset'];
    return typeof o === 'string' ? o : '';
  } catch {
    return '';
  }
}

async function stateObjects(io: FileIO, sourceOffset: string): Promise<string[]> {
  let state: unknown;
  try {
    state = (JSON.parse(sourceOffset) as { snapshot?: { state?: unknown } }).snapshot?.state;
  } catch {
    return [];
  }
  if (typeof state !== 'string') return [];
  if (!(await io.exists(state))) return [state];
  const plan = (JSON.parse(decoder.decode(await io.read(state))) as { plan?: unknown }).plan;
  return typeof plan === 'string' ? [state, plan] : [state];
}

/**
 * Files under the table's location that nothing its metadata names (version-hint.text aside; a file
 * only a DELETED manifest entry names counts as named, as orphan removal counts it).
 */
export async function unreachableFiles(table: CatalogTable, reachable?: ReachableSet): Promise<string[]> {
  const r = reachable ?? (await reachableFiles(table));
  const logged = new Set(table.metadata.metadataLog.map((e) => normalize(e.metadataFile)));
  const root = `${table.metadata.location.replace(/\/+$/, '')}/`;
  return (await table.io.list(root)).filter((p) => {
    const n = normalize(p);
    return !r.files.has(n) && !r.named.has(n) && !logged.has(n) && !n.endsWith('/version-hint.text');
  });
}

/** The delete files every snapshot of `table` added (read from each snapshot's manifests), by kind. */
export async function addedDeleteFiles(table: CatalogTable): Promise<{ equality: number; dvs: number }> {
  const reads = new ManifestReads(table.io);
  const out = { equality: 0, dvs: 0 };
  for (const snap of table.metadata.snapshots) {
    for (const f of (await reads.changesOf(snap)).addedDeleteFiles) {
      if (f.content === 'equality-deletes') out.equality++;
      else out.dvs++;
    }
  }
  return out;
}

/**
 * Manifest rewriting (Java `RewriteManifests` / `BaseRewriteManifests`, Spark's `rewrite_manifests`):
 * when the current snapshot has many small manifests, their live entries are written again into
 * fewer manifests of about `commit.manifest.target-size-bytes` (8 MiB by default), and a `replace`
 * snapshot swaps them in. Scan planning reads every manifest of the snapshot, so the count matters
 * more than the bytes.
 *
 * Why floe needs it although its commits merge manifests (table/manifest-merge.ts, Java's
 * `ManifestMergeManager`): that merge only packs once `commit.manifest.min-count-to-merge` (100)
 * manifests of one content and spec pile up, so a table floe streams into swings between 1 and 100
 * data manifests plus as many delete manifests (measured: docs/performance.md "Manifests"); a table whose
 * `commit.manifest-merge.enabled` is false, or that other engines append to without merging, grows
 * one manifest per commit for ever; compaction (rewrite-data-files.ts) only replaces the manifests
 * of the files it rewrites.
 *
 * The rules (format/spec.md "Manifests", "Manifest Entry Fields", "Sequence Numbers", "First Row ID
 * Inheritance"):
 * - data and delete manifests are rewritten separately, per partition spec; a manifest at or above
 *   the target size is kept as it is, and so is a group's only small manifest;
 * - every live entry (ADDED or EXISTING) becomes EXISTING with its snapshot id, data sequence number
 *   and file sequence number explicit — a rewrite must not change which deletes apply to which file
 *   (docs/iceberg-writer-checklist.md §3.4: DuckDB and icebird refuse EXISTING entries without them);
 *   DELETED entries are dropped (they only say what an older snapshot removed);
 * - the data file record is copied whole: deletion vectors keep `referenced_data_file`,
 *   `content_offset` and `content_size_in_bytes`; v3 data files keep their `first_row_id` (entries are
 *   read with inheritance applied, so it is explicit in the rewritten manifest). The new data
 *   manifests get a fresh `first_row_id` range from the manifest-list writer, as Java's
 *   `ManifestListWriter` gives every data manifest without one (docs/iceberg-writer-checklist.md §3.2)
 *   — next-row-id advances, row ids do not change;
 * - the commit is validated like Java's: every replaced manifest must still be in the head it lands
 *   on (a concurrent commit that only added manifests is fine; one that rewrote or filtered a
 *   replaced manifest makes the rewrite give up until next time).
 */
import type { FileIO } from '../../io/file-io.js';
import { isFloeError } from '../../util/errors.js';
import type { ManifestEntry } from '../spec/data-file.js';
import type { ManifestContent, ManifestFile } from '../manifest/manifest-file.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable } from '../table/catalog-table.js';
import { readManifestEntries, readSnapshotManifests } from '../table/manifest-io.js';
import { commitSnapshot } from '../table/snapshot-producer.js';
import { intProperty, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT } from '../table/table-properties.js';

/** Default of `maintenance.manifests.minCount`: rewrite when more small manifests than this are live. */
const REWRITE_MANIFESTS_MIN_COUNT_DEFAULT = 100;

export interface RewriteManifestsOptions {
  /** Rewrite only when the snapshot has more than this many small manifests (default 100). */
  minManifests?: number;
  /** Size of a rewritten manifest; default the table's `commit.manifest.target-size-bytes` (8 MiB). */
  targetSizeBytes?: number;
  dryRun?: boolean;
  warn?: (message: string) => void;
}

export interface RewriteManifestsResult {
  table: CatalogTable;
  /** Manifests of the snapshot the rewrite planned on. */
  manifestsBefore: number;
  /** Manifests of the snapshot after the rewrite (as planned, for a dry run or a skip: unchanged). */
  manifestsAfter: number;
  replacedManifests: number;
  createdManifests: number;
  /** Why nothing was committed (few small manifests, a concurrent change, a dry run). */
  skipped?: string;
}

interface Group {
  specId: number;
  content: ManifestContent;
  manifests: ManifestFile[];
}

export async function rewriteManifests(table: CatalogTable, options: RewriteManifestsOptions = {}): Promise<RewriteManifestsResult> {
  const m = table.metadata;
  const minManifests = options.minManifests ?? REWRITE_MANIFESTS_MIN_COUNT_DEFAULT;
  const target = options.targetSizeBytes ?? intProperty(m, MANIFEST_TARGET_SIZE_BYTES, MANIFEST_TARGET_SIZE_BYTES_DEFAULT);
  const snapshot = currentSnapshot(m);
  const none = (n: number, skipped: string): RewriteManifestsResult => ({ table, manifestsBefore: n, manifestsAfter: n, replacedManifests: 0, createdManifests: 0, skipped });
  if (!snapshot) return none(0, 'the table has no snapshot');
  const manifests = await readSnapshotManifests(table.io, snapshot);
  const small = manifests.filter((mf) => Number(mf.length) < target);
  if (small.length <= minManifests) return none(manifests.length, `${small.length} small manifest(s), not more than maintenance.manifests.minCount (${minManifests})`);

  const groups = new Map<string, Group>();
  for (const mf of small) {
    const k = `${mf.content}:${mf.specId}`;
    const g = groups.get(k) ?? { specId: mf.specId, content: mf.content, manifests: [] };
    g.manifests.push(mf);
    groups.set(k, g);
  }
  const replaced: ManifestFile[] = [];
  const written: { specId: number; content: ManifestContent; entries: ManifestEntry[] }[] = [];
  for (const g of groups.values()) {
    if (g.manifests.length < 2) continue; // rewriting one manifest into one gains nothing
    const entries = await liveEntriesAsExisting(table.io, g.manifests);
    replaced.push(...g.manifests);
    // As many manifests as the group's bytes need at the target size (Java's RollingManifestWriter
    // rolls at the target; the input's bytes per entry estimate the output's).
    const bytes = g.manifests.reduce((n, mf) => n + Number(mf.length), 0);
    const parts = Math.max(1, Math.ceil(bytes / target));
    const per = Math.ceil(entries.length / parts);
    for (let i = 0; i < entries.length; i += per) written.push({ specId: g.specId, content: g.content, entries: entries.slice(i, i + per) });
  }
  if (replaced.length === 0) return none(manifests.length, 'no partition spec and content has two small manifests to merge');
  const after = manifests.length - replaced.length + written.length;
  const planned = { manifestsBefore: manifests.length, manifestsAfter: after, replacedManifests: replaced.length, createdManifests: written.length };
  if (options.dryRun) return { table, ...planned, skipped: 'dry run' };

  try {
    const result = await commitSnapshot(
      table,
      { operation: 'replace', manifestRewrite: { replaced, groups: written } },
      { summary: { 'floe.maintenance': 'rewrite-manifests' }, ...(options.warn ? { warn: options.warn } : {}) },
    );
    return { table: result.table, ...planned };
  } catch (e) {
    // the replaced manifests changed under the rewrite (Java "Manifest is missing"): plan again later
    if (isFloeError(e, 'commit-conflict') && !e.retryable) return { ...none(manifests.length, `another writer changed the manifests meanwhile (${e.message}); try again`) };
    throw e;
  }
}

/** The manifests' live entries as EXISTING, with snapshot id and both sequence numbers explicit. */
async function liveEntriesAsExisting(io: FileIO, manifests: readonly ManifestFile[]): Promise<ManifestEntry[]> {
  const out: ManifestEntry[] = [];
  for (const mf of manifests) {
    for (const e of await readManifestEntries(io, mf)) {
      if (e.status === 'deleted') continue;
      // readManifestEntries applied inheritance: these are the values the entry had in the table
      out.push({ status: 'existing', snapshotId: e.snapshotId, sequenceNumber: e.sequenceNumber, fileSequenceNumber: e.fileSequenceNumber, dataFile: e.dataFile });
    }
  }
  return out;
}

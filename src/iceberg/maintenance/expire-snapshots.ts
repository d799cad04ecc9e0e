/**
 * Snapshot expiry (Java `RemoveSnapshots` + `ReachableFileCleanup`): which snapshots go is
 * retention.ts's plan; this module commits their removal and then deletes the files only they
 * reached.
 *
 * 1. plan on the current metadata; commit `remove-snapshot-ref` (aged-out refs) + `remove-snapshots`
 *    guarded by `assert-table-uuid` through the shared commit loop (table/commit-engine.ts); on a
 *    conflict (another writer committed meanwhile) reload and plan again — new snapshots are never
 *    expired by a plan made before them; an unknown outcome counts as landed only once the reloaded
 *    table shows none of the expired snapshots;
 * 2. once the commit landed, delete (a) the manifest lists of the expired snapshots, (b) the
 *    manifests that only expired snapshots listed, and (c) the data and delete files live in those
 *    manifests that no retained snapshot's manifest holds live. Deletion is by path, so a Puffin file
 *    holding several deletion vectors stays while any of them is live.
 *
 * Crash safety (docs/design.md §4b): files are deleted only after the commit that stops referencing
 * them landed (failpoint `expire-after-commit`: committed, nothing deleted yet); a crash between the
 * commit and the deletions, or among them (`expire-mid-delete`, hit after each deleted file), leaves
 * orphans — harmless, and the job is finished by orphan removal (remove-orphan-files.ts), since the
 * expired snapshots are no longer in the metadata for a re-run to find. The commit asserts main's head
 * (`assert-ref-snapshot-id`), so a plan never lands on metadata it was not made from: another writer's
 * commit in between is a conflict, and the plan is made again on the reloaded table. A retained
 * snapshot whose manifest list cannot be read fails the expiry: what it reaches cannot be told, so
 * nothing may be deleted on the guess that it reaches nothing.
 * Dry run: the plan and the files, nothing committed or deleted.
 *
 * Beside a writer (`floe run`): the plan, the slow part (every retained snapshot's manifests are
 * read), can be made beforehand on the table at a head H (`planExpiry`) and committed later on a head
 * that H leads to, and the files deleted after the caller's own fashion (`deleteLater`). The plan
 * still holds there: the snapshots committed after H are retained, and they reach only files live at
 * H or added since — never one that only H's expired snapshots reached.
 */
import type { FileIO } from '../../io/file-io.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import type { ManifestFile } from '../manifest/manifest-file.js';
import type { MetadataUpdate, TableRequirement } from '../metadata/metadata-updates.js';
import { MAIN_BRANCH } from '../spec/table-metadata-constants.js';
import { ancestorsOf } from '../spec/snapshot-ids.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';
import type { CatalogTable } from '../table/catalog-table.js';
import { commitWithRetry } from '../table/commit-engine.js';
import { readManifestEntries, readSnapshotManifests } from '../table/manifest-io.js';
import { planRetention, type RetentionPlan, type RetentionPolicy } from './retention.js';

const SUBSYSTEM = 'iceberg.maintenance';

export interface ExpireOptions extends Omit<RetentionPolicy, 'nowMs'> {
  nowMs?: bigint;
  /** Plan and list the files, commit and delete nothing. */
  dryRun?: boolean;
  /** Best-effort failures (a file that could not be deleted). */
  warn?: (message: string) => void;
  /** A table property set to the expiry time (epoch ms) in the same commit, when one is made. */
  stampProperty?: string;
  /** A plan made earlier (`planExpiry`), committed when the table's head descends from its own. */
  planned?: PlannedExpiry;
  /** Given the deletion of the files the expiry unreferenced, once its commit landed, instead of deleting them before returning. */
  deleteLater?: (deletion: () => Promise<void>) => void;
}

/** An expiry planned on the table at one head, for `expireSnapshots` to commit later. */
export interface PlannedExpiry {
  readonly head: bigint | undefined;
  /** The time the plan's cutoff counts back from (the expiry stamp says it). */
  readonly nowMs: bigint;
  readonly plan: RetentionPlan;
  readonly expired: bigint[];
  readonly files: ExpireResult['deletedFiles'];
}

/** The expiry of `table` as it is now (`expired` and the plan's `removedRefs` empty: nothing to expire). */
export async function planExpiry(table: CatalogTable, options: Omit<ExpireOptions, 'planned' | 'deleteLater' | 'dryRun'> = {}): Promise<PlannedExpiry> {
  const nowMs = options.nowMs ?? BigInt(Date.now());
  const plan = planRetention(table.metadata, { ...options, nowMs });
  const expired = plan.expired.map((s) => s.snapshotId);
  if (expired.length === 0 && plan.removedRefs.length === 0) return { head: table.metadata.refs[MAIN_BRANCH]?.snapshotId, nowMs, plan, expired, files: { manifestLists: [], manifests: [], contentFiles: [] } };
  return { head: table.metadata.refs[MAIN_BRANCH]?.snapshotId, nowMs, plan, expired, files: await unreachableFiles(table.io, table.metadata, plan) };
}

export interface ExpireResult {
  table: CatalogTable;
  plan: RetentionPlan;
  expiredSnapshots: bigint[];
  /** Files deleted (or, in a dry run, that would be): manifest lists, manifests, data and delete files. */
  deletedFiles: { manifestLists: string[]; manifests: string[]; contentFiles: string[] };
}

export async function expireSnapshots(start: CatalogTable, options: ExpireOptions = {}): Promise<ExpireResult> {
  const nowMs = options.nowMs ?? BigInt(Date.now());
  const planOn = async (table: CatalogTable): Promise<PlannedExpiry | undefined> => {
    const { planned } = options;
    const p = planned && leadsFrom(table.metadata, planned.head) ? planned : await planExpiry(table, { ...options, nowMs });
    return p.expired.length === 0 && p.plan.removedRefs.length === 0 ? undefined : p;
  };
  const nothing = (table: CatalogTable, plan: RetentionPlan): ExpireResult => ({ table, plan, expiredSnapshots: [], deletedFiles: { manifestLists: [], manifests: [], contentFiles: [] } });
  if (options.dryRun) {
    const planned = await planOn(start);
    if (!planned) return nothing(start, planRetention(start.metadata, { ...options, nowMs }));
    return { table: start, plan: planned.plan, expiredSnapshots: planned.expired, deletedFiles: planned.files };
  }
  // The plan of the attempt that committed (each attempt plans on the table as it is then: a snapshot
  // committed meanwhile is never expired by a plan made before it).
  let last: Awaited<ReturnType<typeof planOn>>;
  let lastTable = start;
  let result;
  try {
    result = await commitWithRetry(start, {
      subject: `the expiry of snapshots of ${start.identifier.name}`,
      plan: async (current) => {
        lastTable = current;
        last = await planOn(current);
        if (!last) return 'skip';
        const base = current.metadata;
        const updates: MetadataUpdate[] = last.plan.removedRefs.map((refName) => ({ action: 'remove-snapshot-ref', refName }) as MetadataUpdate);
        if (last.expired.length > 0) updates.push({ action: 'remove-snapshots', snapshotIds: last.expired });
        if (options.stampProperty) updates.push({ action: 'set-properties', updates: { [options.stampProperty]: String(last.nowMs) } });
        const requirements: TableRequirement[] = [
          { type: 'assert-table-uuid', uuid: base.tableUuid },
          { type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, snapshotId: base.refs[MAIN_BRANCH]?.snapshotId ?? null },
        ];
        return { requirements, updates };
      },
      // an unknown outcome landed when none of the snapshots it expires is in the table any more:
      // only then may their files go — nothing is deleted on a guess
      landed: (m) => last !== undefined && !last.expired.some((id) => m.snapshots.some((s) => s.snapshotId === id)),
      gaveUp: (failure, attempts, _policy, unknown) =>
        new FloeError(SUBSYSTEM, unknown ? 'commit-state-unknown' : failure.kind, `expiring snapshots of ${start.identifier.name}: gave up after ${attempts} attempt(s): ${errorMessage(failure)}`, { cause: failure, retryable: false }),
    });
  } catch (e) {
    // an unknown outcome as the loop raised it; the loop's giving up is in this module's words already
    if (isFloeError(e, 'commit-state-unknown') || (isFloeError(e) && e.subsystem === SUBSYSTEM)) throw e;
    throw new FloeError(SUBSYSTEM, isFloeError(e) ? e.kind : 'internal', `expiring snapshots of ${start.identifier.name}: ${errorMessage(e)}`, { cause: e, retryable: false });
  }
  if (result.status === 'skipped' || !last) return nothing(result.table, planRetention(lastTable.metadata, { ...options, nowMs }));
  await failpoint('expire-after-commit');
  const { plan, expired, files } = last;
  const deletion = () => deleteAll(result.table.io, [...files.contentFiles, ...files.manifests, ...files.manifestLists], options.warn);
  if (options.deleteLater) options.deleteLater(deletion);
  else await deletion();
  return { table: result.table, plan, expiredSnapshots: expired, deletedFiles: files };
}

/** Whether main's head is `head` or descends from it (a plan made at `head` holds there). */
function leadsFrom(m: TableMetadata, head: bigint | undefined): boolean {
  if (head === undefined) return false;
  for (const s of ancestorsOf(m, m.refs[MAIN_BRANCH]?.snapshotId ?? m.currentSnapshotId)) if (s.snapshotId === head) return true;
  return false;
}

/** What the expired snapshots reach and the retained ones do not. */
async function unreachableFiles(io: FileIO, m: TableMetadata, plan: RetentionPlan): Promise<ExpireResult['deletedFiles']> {
  const retained = m.snapshots.filter((s) => plan.retained.has(s.snapshotId));
  const retainedManifests = new Map<string, ManifestFile>();
  // strict: a retained snapshot's unreadable list is an error, never "reaches nothing"
  for (const s of retained) for (const mf of await retainedManifestsOf(io, m, s)) retainedManifests.set(mf.path, mf);
  const candidates = new Map<string, ManifestFile>();
  for (const s of plan.expired) for (const mf of await expiredManifestsOf(io, s)) if (!retainedManifests.has(mf.path)) candidates.set(mf.path, mf);
  const contentFiles = new Set<string>();
  for (const mf of candidates.values()) for (const e of await readManifestEntries(io, mf)) if (e.status !== 'deleted') contentFiles.add(e.dataFile.filePath);
  if (contentFiles.size > 0) {
    for (const mf of retainedManifests.values()) for (const e of await readManifestEntries(io, mf)) if (e.status !== 'deleted') contentFiles.delete(e.dataFile.filePath);
  }
  const retainedLists = new Set(retained.map((s) => s.manifestList));
  return {
    manifestLists: plan.expired.map((s) => s.manifestList).filter((p): p is string => p !== undefined && !retainedLists.has(p)),
    manifests: [...candidates.keys()],
    contentFiles: [...contentFiles],
  };
}

async function retainedManifestsOf(io: FileIO, m: TableMetadata, s: Snapshot): Promise<ManifestFile[]> {
  if (!s.manifestList) return [];
  try {
    return await readSnapshotManifests(io, s);
  } catch (e) {
    throw new FloeError(
      SUBSYSTEM,
      isFloeError(e) ? e.kind : 'internal',
      `expiring snapshots of the table at ${m.location}: the manifest list ${s.manifestList} of retained snapshot ${s.snapshotId} could not be read (${errorMessage(e)}); expected every retained snapshot to be readable, so nothing was expired or deleted — restore the file or remove the snapshot before expiring again`,
      { cause: e, retryable: false },
    );
  }
}

async function expiredManifestsOf(io: FileIO, s: Snapshot): Promise<ManifestFile[]> {
  if (!s.manifestList) return [];
  try {
    return await readSnapshotManifests(io, s);
  } catch (e) {
    // A manifest list that is already gone (an earlier cleanup) reaches nothing any more.
    if (isFloeError(e, 'not-found') || !(await io.exists(s.manifestList))) return [];
    throw e;
  }
}

async function deleteAll(io: FileIO, paths: readonly string[], warn: ((message: string) => void) | undefined): Promise<void> {
  for (const p of paths) {
    try {
      await io.delete(p);
    } catch (e) {
      warn?.(`${SUBSYSTEM}: could not delete ${p} after expiring the snapshots that referenced it: ${errorMessage(e)}`);
    }
    await failpoint('expire-mid-delete');
  }
}

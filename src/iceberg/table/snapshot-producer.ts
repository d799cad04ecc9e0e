/**
 * Committing one snapshot (Java `SnapshotProducer` + `MergingSnapshotProducer`; spec "Optimistic
 * Concurrency", "Sequence Numbers"; docs/iceberg-writer-checklist.md §6.1):
 *
 * 1. the caller has written its data and delete files (failpoint `after-data-files`);
 * 2. write one manifest per content (data / deletes) per partition spec, ADDED entries with null
 *    snapshot id and sequence numbers, so the same manifests serve every attempt (`after-manifests`);
 * 3. per attempt: on top of the current main branch, carry the parent's manifests over (rewriting those
 *    that hold removed files, merging small ones), write a new manifest list with the attempt's
 *    sequence number (last-sequence-number + 1) and, in v3, first-row-id = next-row-id
 *    (`after-manifest-list`), and commit `add-snapshot` + `set-snapshot-ref main` guarded by
 *    `assert-table-uuid` + `assert-ref-snapshot-id` (the catalogs then hit `after-metadata-file` and
 *    `after-catalog-swap`);
 * 4. on 'commit-conflict': back off, reload, ask the caller's `validate` again (the idempotent writer
 *    skips a checkpoint that is already in the table), re-sequence and retry — the snapshot id stays the
 *    same on every attempt;
 * 5. on 'commit-state-unknown' (or any error of the swap that is not a definite answer: storage or
 *    network failures): never delete a written file; reload and look for the snapshot id — if it is
 *    there the commit landed, else retry as after a conflict.
 *
 * Steps 3-5 are the shared commit loop (commit-engine.ts `commitWithRetry`); this module plans each
 * attempt's snapshot and owns the manifests it writes (commit-workspace.ts).
 *
 * Files written for attempts that did not land are deleted after the commit succeeds, fails for good,
 * or is skipped — except once an outcome was unknown: then everything stays (orphans are harmless;
 * a file a landed commit refers to is not).
 */
import { errorMessage, FloeError } from '../../util/errors.js';
import { failpoint } from '../../util/failpoints.js';
import type { DataFile, ManifestEntry } from '../spec/data-file.js';
import type { ManifestContent, ManifestFile } from '../manifest/manifest-file.js';
import { writeManifestList } from '../manifest/manifest-list.js';
import type { MetadataUpdate, TableRequirement } from '../metadata/metadata-updates.js';
import { evolveSchema, type SchemaChange } from '../spec/schema-update.js';
import { newSnapshotId, snapshotById } from '../spec/snapshot-ids.js';
import { sameSchema } from '../spec/spec-compatibility.js';
import { MAIN_BRANCH } from '../spec/table-metadata-constants.js';
import type { Snapshot, TableMetadata } from '../spec/table-metadata.js';
import type { CatalogTable } from './catalog-table.js';
import { commitWithRetry, type CommitPlan } from './commit-engine.js';
import type { RetryPolicy } from './commit-retry.js';
import { CommitWorkspace, manifestFormatVersion, specOf } from './commit-workspace.js';
import { ConcurrentDVCheck } from './concurrent-dv-check.js';
import { ManifestFilter } from './manifest-filter.js';
import { ManifestMerger } from './manifest-merge.js';
import { ManifestReads } from './manifest-reads.js';
import { addSpecChange, withSpec } from './added-spec.js';
import type { PartitionSpec } from '../spec/partition.js';
import { COMPUTED_SUMMARY_KEYS, snapshotSummary, SnapshotSummaryBuilder } from './snapshot-summary.js';
import { mapConcurrently } from '../../util/concurrent.js';

const SUBSYSTEM = 'iceberg.commit';

export type SnapshotOperation = 'append' | 'replace' | 'overwrite' | 'delete';

/** What a snapshot changes. Added files must not be in the table yet; removed files must be live in it. */
export interface SnapshotChanges {
  operation: SnapshotOperation;
  addedDataFiles?: readonly DataFile[];
  /** Equality deletes, v2 position deletes, v3 deletion vectors. */
  addedDeleteFiles?: readonly DataFile[];
  /** Data or delete files to mark DELETED (as the table's manifests describe them: path, content, spec). */
  removedFiles?: readonly DataFile[];
  /**
   * A manifest rewrite (Java `BaseRewriteManifests`; maintenance/rewrite-manifests.ts): the parent's
   * manifests `replaced` give way to manifests of `groups` (written by this commit, one per group,
   * entries as given — EXISTING with explicit snapshot ids and sequence numbers). No file is added or
   * removed and nothing is merged. Every attempt checks that each replaced manifest is still in the
   * head it commits on; if another writer rewrote or dropped one, the commit fails with
   * 'commit-conflict' (not retryable: Java's "Manifest is missing"), as planning must start again.
   */
  manifestRewrite?: {
    replaced: readonly ManifestFile[];
    groups: readonly { specId: number; content: ManifestContent; entries: ManifestEntry[] }[];
  };
}

type CommitDecision = 'proceed' | 'skip';

export interface CommitOptions {
  /** Extra summary properties (e.g. `floe.checkpoint-id`); must not collide with the computed ones. */
  summary?: Record<string, string>;
  /** Table properties set in the same commit, given the snapshot's id (the same on every attempt). */
  properties?: (snapshotId: bigint) => Record<string, string>;
  /**
   * A schema evolution committed with the snapshot, in the same metadata change (`add-schema` +
   * `set-current-schema` before `add-snapshot`; the snapshot's `schema-id` is the new schema), planned
   * again on the table as each attempt finds it — a schema that already shows the changes commits none.
   */
  schemaChanges?: readonly SchemaChange[];
  /**
   * Asked with the table's metadata before the first attempt and after every reload: 'skip' abandons
   * the commit (nothing is committed, the commit's own manifests are removed; the caller's data and
   * delete files are left to the caller).
   */
  validate?: (current: TableMetadata) => CommitDecision | Promise<CommitDecision>;
  /** Overrides of the table's `commit.retry.*` properties. */
  retry?: Partial<RetryPolicy>;
  /** Where best-effort failures (cleanup) are reported. Default: process warnings. */
  warn?: (message: string) => void;
  /** Clock for the snapshot timestamp (tests). */
  nowMs?: () => bigint;
  /**
   * Also hit failpoints named `<scope>-after-manifests`, `<scope>-after-manifest-list`,
   * `<scope>-before-catalog-swap` and `<scope>-after-catalog-swap` (e.g. 'compaction'), so that a crash
   * test can kill a maintenance commit without also killing the checkpoint commits around it.
   */
  failpointScope?: string;
  /**
   * The manifests this commit reads, shared with what the caller read of the same table for it
   * (manifest-reads.ts: the head's manifest list and delete manifests read once per attempt, the
   * snapshots committed meanwhile once across retries). Default: the commit's own.
   */
  reads?: ManifestReads;
  /**
   * A partition spec the commit's files were written with that the table may not hold yet (the
   * unpartitioned spec of global equality deletes, `unpartitionedSpecFor`): added in the same commit
   * as the snapshot (added-spec.ts).
   */
  addSpec?: PartitionSpec;
}

interface CommittedSnapshot {
  status: 'committed';
  snapshot: Snapshot;

  /** The table right after the commit. */
  table: CatalogTable;
  attempts: number;
}

interface SkippedCommit {
  status: 'skipped';
  /** The table as last reloaded (on which `validate` said 'skip'). */
  table: CatalogTable;
  attempts: number;
}

export type CommitResult = CommittedSnapshot | SkippedCommit;

function defaultWarn(message: string): void {
  process.emitWarning(message, { code: 'FLOE_COMMIT' });
}

function checkFiles(changes: SnapshotChanges, metadata: TableMetadata): void {
  for (const f of changes.addedDataFiles ?? []) {
    if (f.content !== 'data') throw new FloeError(SUBSYSTEM, 'invalid-argument', `${f.filePath}: a ${f.content} file was passed as a data file`);
    specOf(metadata, f.specId);
  }
  for (const f of changes.addedDeleteFiles ?? []) {
    if (f.content === 'data') throw new FloeError(SUBSYSTEM, 'invalid-argument', `${f.filePath}: a data file was passed as a delete file`);
    specOf(metadata, f.specId);
  }
  const seen = new Set<string>();
  for (const f of [...(changes.addedDataFiles ?? []), ...(changes.addedDeleteFiles ?? [])]) {
    const key = f.contentOffset === undefined ? f.filePath : `${f.filePath}#${f.contentOffset}`;
    if (seen.has(key)) throw new FloeError(SUBSYSTEM, 'invalid-argument', `${f.filePath} is added twice in one commit; a file may be live at most once in a snapshot`);
    seen.add(key);
  }
}

function checkExtraSummary(summary: Record<string, string> | undefined): void {
  for (const [k, v] of Object.entries(summary ?? {})) {
    if (COMPUTED_SUMMARY_KEYS.has(k)) throw new FloeError(SUBSYSTEM, 'invalid-argument', `summary property ${k} is computed by the commit; choose another key for the caller's value`);
    if (typeof v !== 'string') throw new FloeError(SUBSYSTEM, 'invalid-argument', `summary property ${k} must be a string, found ${typeof v}`);
  }
}

/** Writes this commit's new manifests: one per partition spec, in order of first appearance. */
async function writeNewManifests(ws: CommitWorkspace, metadata: TableMetadata, content: ManifestContent, files: readonly DataFile[]): Promise<ManifestFile[]> {
  const bySpec = new Map<number, ManifestEntry[]>();
  for (const f of files) {
    const entries = bySpec.get(f.specId) ?? [];
    entries.push({ status: 'added', dataFile: f });
    bySpec.set(f.specId, entries);
  }
  const out: ManifestFile[] = [];
  for (const [specId, entries] of bySpec) out.push(await ws.writeManifest(metadata, specId, content, entries));
  return out;
}

export async function commitSnapshot(table: CatalogTable, changes: SnapshotChanges, options: CommitOptions = {}): Promise<CommitResult> {
  await failpoint('after-data-files');
  const scoped = async (step: string): Promise<void> => {
    if (options.failpointScope) await failpoint(`${options.failpointScope}-${step}`);
  };
  checkExtraSummary(options.summary);
  const warn = options.warn ?? defaultWarn;
  const decide = async (m: TableMetadata): Promise<CommitDecision> => (options.validate ? await options.validate(m) : 'proceed');

  if ((await decide(table.metadata)) === 'skip') return { status: 'skipped', table, attempts: 0 };
  const formatVersion = manifestFormatVersion(table.metadata);
  checkFiles(changes, withSpec(table.metadata, options.addSpec));
  const snapshotId = newSnapshotId();
  const reads = options.reads ?? new ManifestReads(table.io);
  const ws = new CommitWorkspace(reads, table.metadata, snapshotId);
  const subject = `snapshot ${snapshotId}`;

  let plan: SnapshotPlanner;
  try {
    plan = await snapshotPlanner(table, changes, options, ws, reads, snapshotId, formatVersion, scoped);
  } catch (e) {
    await ws.cleanUp(new Set(), warn);
    throw e;
  }
  const result = await commitWithRetry(table, {
    subject,
    retry: options.retry,
    // the snapshot id stays the same on every attempt: after an unknown outcome, look for it
    landed: (m) => snapshotById(m, snapshotId) !== undefined,
    plan: async (current, attempt) => (attempt > 1 && (await decide(current.metadata)) === 'skip' ? 'skip' : plan(current, attempt)),
    beforeSwap: () => scoped('before-catalog-swap'),
    afterSwap: () => scoped('after-catalog-swap'),
    discard: () => ws.cleanUp(new Set(), warn),
    gaveUp: (failure, attempts, policy, unknown) =>
      unknown
        ? new FloeError(SUBSYSTEM, 'commit-state-unknown', `snapshot ${snapshotId} of ${table.identifier.name}: an attempt's outcome was unknown and the last attempt failed (${errorMessage(failure)}); the snapshot is not in the table now, but the unknown attempt may still land — its files were kept; reload and look for snapshot ${snapshotId} or the checkpoint before retrying`, { cause: failure, retryable: false })
        : new FloeError(SUBSYSTEM, 'commit-conflict', `gave up committing snapshot ${snapshotId} after ${attempts} attempt(s) (commit.retry.num-retries = ${policy.numRetries}): ${errorMessage(failure)}`, { cause: failure, retryable: true }),
  });
  switch (result.status) {
    case 'skipped':
      return { status: 'skipped', table: result.table, attempts: result.attempts };
    case 'found':
      return { status: 'committed', snapshot: snapshotById(result.table.metadata, snapshotId)!, table: result.table, attempts: result.attempts };
    case 'committed': {
      const { snapshot, keep } = result.plan;
      if (!result.uncertain) await ws.cleanUp(keep, warn);
      return { status: 'committed', snapshot: snapshotById(result.table.metadata, snapshotId) ?? snapshot, table: result.table, attempts: result.attempts };
    }
  }
}

interface SnapshotAttempt extends CommitPlan {
  snapshot: Snapshot;
  /** The files of this attempt that the snapshot refers to (the others of the workspace can go). */
  keep: Set<string>;
}

type SnapshotPlanner = (current: CatalogTable, attempt: number) => Promise<SnapshotAttempt>;

/**
 * Writes what every attempt shares (the new manifests: steps 1-2 of the module header) and returns
 * the planner of one attempt on top of the table as it is then (step 3).
 */
async function snapshotPlanner(
  table: CatalogTable,
  changes: SnapshotChanges,
  options: CommitOptions,
  ws: CommitWorkspace,
  reads: ManifestReads,
  snapshotId: bigint,
  formatVersion: ReturnType<typeof manifestFormatVersion>,
  scoped: (step: string) => Promise<void>,
): Promise<SnapshotPlanner> {
  const added = [...(changes.addedDataFiles ?? []), ...(changes.addedDeleteFiles ?? [])];
  const planning = withSpec(table.metadata, options.addSpec);
  const [newData = [], newDeletes = []] = await mapConcurrently(['data', 'deletes'] as const, 2, (content) => writeNewManifests(ws, planning, content, (content === 'data' ? changes.addedDataFiles : changes.addedDeleteFiles) ?? []));
  const rewrite = changes.manifestRewrite;
  if (rewrite && (added.length > 0 || (changes.removedFiles?.length ?? 0) > 0)) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', 'a manifest rewrite adds and removes no file; commit file changes in a snapshot of their own');
  }
  const rewritten: ManifestFile[] = [];
  for (const g of rewrite?.groups ?? []) rewritten.push(await ws.writeManifest(table.metadata, g.specId, g.content, g.entries));
  const replacedPaths = new Set((rewrite?.replaced ?? []).map((m) => m.path));
  await failpoint('after-manifests');
  await scoped('after-manifests');
  const filter = new ManifestFilter(ws, changes.removedFiles ?? []);
  const dataMerger = new ManifestMerger(ws, 'data');
  const deleteMerger = new ManifestMerger(ws, 'deletes');
  const dvCheck = new ConcurrentDVCheck(reads, changes.addedDeleteFiles ?? [], table.metadata.refs[MAIN_BRANCH]?.snapshotId);

  return async (current, attempt) => {
    const specChange = options.addSpec ? addSpecChange(current.metadata, options.addSpec) : undefined;
    const base = withSpec(current.metadata, options.addSpec);
    if (base.formatVersion !== formatVersion) {
      throw new FloeError(SUBSYSTEM, 'commit-conflict', `the table was upgraded from format v${formatVersion} to v${base.formatVersion} during the commit; write the files again for v${base.formatVersion}`, { retryable: false });
    }
    const parentId = base.refs[MAIN_BRANCH]?.snapshotId;
    const parent = parentId === undefined ? undefined : snapshotById(base, parentId);
    if (parentId !== undefined && !parent) throw new FloeError(SUBSYSTEM, 'invalid-data', `branch main points at snapshot ${parentId}, which the table's metadata does not have`);
    if (attempt > 1) await dvCheck.validate(base);
    const parentManifests = parent ? await reads.manifestsOf(parent) : [];
    let data: ManifestFile[];
    let deletes: ManifestFile[];
    let removedNow: DataFile[] = [];
    let rewriteSummary: Record<string, string> = {};
    if (rewrite) {
      // Java BaseRewriteManifests.validateDeletedManifests: the replaced manifests must all still be
      // in the snapshot this attempt commits on; manifests other writers added meanwhile are kept.
      const present = new Set(parentManifests.map((m) => m.path));
      const missing = [...replacedPaths].filter((p) => !present.has(p));
      if (missing.length > 0) {
        throw new FloeError(SUBSYSTEM, 'commit-conflict', `manifest rewrite of ${current.identifier.name}: ${missing.length} manifest(s) it replaces are no longer in the current snapshot (e.g. ${missing[0]}); another writer changed them — plan the rewrite again`, { retryable: false });
      }
      const kept = parentManifests.filter((m) => !replacedPaths.has(m.path));
      // Java's RewriteManifests summary keys (SnapshotSummary.*_MANIFESTS_*, ENTRIES_PROCESSED)
      rewriteSummary = {
        'manifests-created': String(rewritten.length),
        'manifests-kept': String(kept.length),
        'manifests-replaced': String(replacedPaths.size),
        'entries-processed': String((rewrite.groups).reduce((n, g) => n + g.entries.length, 0)),
      };
      data = [...rewritten.filter((m) => m.content === 'data'), ...kept.filter((m) => m.content === 'data')];
      deletes = [...rewritten.filter((m) => m.content === 'deletes'), ...kept.filter((m) => m.content === 'deletes')];
    } else {
      const filtered = await filter.filter(base, parentManifests);
      removedNow = filtered.removed;
      data = await dataMerger.merge(base, [...newData, ...filtered.manifests.filter((m) => m.content === 'data')]);
      deletes = await deleteMerger.merge(base, [...newDeletes, ...filtered.manifests.filter((m) => m.content === 'deletes')]);
    }
    const sequenceNumber = base.lastSequenceNumber + 1n;
    const list = writeManifestList({
      formatVersion,
      snapshotId,
      parentSnapshotId: parent?.snapshotId,
      sequenceNumber,
      firstRowId: formatVersion >= 3 ? (base.nextRowId ?? 0n) : undefined,
      manifests: [...data, ...deletes],
    });
    const listPath = await ws.writeManifestList(attempt, list.bytes);
    await failpoint('after-manifest-list');
    await scoped('after-manifest-list');

    const summaryChanges = new SnapshotSummaryBuilder();
    for (const f of added) summaryChanges.addedFile(f);
    for (const f of removedNow) summaryChanges.removedFile(f);
    const now = options.nowMs ? options.nowMs() : BigInt(Date.now());
    const evolution = options.schemaChanges ? evolveSchema(base, options.schemaChanges) : undefined;
    // the builder reuses the id of an equal schema the table already has (metadata-builder.ts addSchema)
    const schemaId = evolution?.changed ? (base.schemas.find((x) => sameSchema(x, evolution.schema))?.schemaId ?? evolution.schema.schemaId) : base.currentSchemaId;
    const snapshot: Snapshot = {
      snapshotId,
      sequenceNumber,
      // Keep timestamps monotonic along the branch (DuckDB PR #333: Spark "lost" rows otherwise).
      timestampMs: parent && parent.timestampMs > now ? parent.timestampMs : now,
      manifestList: listPath,
      summary: snapshotSummary(changes.operation, summaryChanges.build(), parent?.summary, { ...options.summary, ...rewriteSummary }),
      schemaId,
    };
    if (parent) snapshot.parentSnapshotId = parent.snapshotId;
    if (formatVersion >= 3) {
      snapshot.firstRowId = base.nextRowId ?? 0n;
      snapshot.addedRows = list.addedRows ?? 0n;
    }
    const requirements: TableRequirement[] = [
      { type: 'assert-table-uuid', uuid: base.tableUuid },
      { type: 'assert-ref-snapshot-id', ref: MAIN_BRANCH, snapshotId: parentId ?? null },
      ...(specChange?.requirements ?? []),
      ...(evolution?.changed ? evolution.requirements : []),
    ];
    const updates: MetadataUpdate[] = [
      ...(specChange?.updates ?? []),
      ...(evolution?.changed ? evolution.updates : []),
      { action: 'add-snapshot', snapshot },
      { action: 'set-snapshot-ref', refName: MAIN_BRANCH, type: 'branch', snapshotId },
    ];
    if (options.properties) updates.push({ action: 'set-properties', updates: options.properties(snapshotId) });
    return { requirements, updates, snapshot, keep: new Set([listPath, ...list.manifests.map((m) => m.path)]) };
  };
}

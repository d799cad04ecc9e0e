/**
 * The commit of one checkpoint's prepared changes to one table (table-committer.ts prepares them):
 * one row delta, stamped (checkpoint-stamps.ts), with the replay check and the DV-target check in
 * its `validate` — asked before the first attempt and after every reload — and, when another writer
 * rewrote a data file the checkpoint deletes rows of, its deletes located again (dv-replan.ts) and
 * the commit planned anew, up to `MAX_RELOCATIONS` times.
 *
 * An unknown outcome is resolved once, by the commit loop (table/commit-engine.ts): it looks for the
 * snapshot after reloading, and `validate` skips the checkpoint another process of the job
 * committed meanwhile. What it cannot tell is raised here as 'commit-state-unknown', every file kept.
 */
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { identifierToString, type TableIdentifier } from '../metadata/catalog.js';
import type { PartitionSpec } from '../spec/partition.js';
import { commitRowDelta, type CatalogTable, type CommitResult, type RetryPolicy } from '../table/index.js';
import type { ManifestReads } from '../table/manifest-reads.js';
import type { KeyIndexLifecycle } from '../keyindex/key-index-lifecycle.js';
import type { PreparedChanges } from '../writer/table-change-writer.js';
import type { SchemaChange } from '../spec/schema-update.js';
import { checkpointProperties, checkpointSummary, isCheckpointCommitted, lastCommitted } from './checkpoint-stamps.js';
import { isDvTargetConflict, validateTargetsUntouched } from './committed-dv-targets.js';
import { MAX_RELOCATIONS, replanDeletes } from './dv-replan.js';
import { deleteUnreferenced } from './unreferenced-files.js';

const SUBSYSTEM = 'iceberg.writer';

/** A schema change committed with a checkpoint's snapshot (TableCommitter.commit). */
export interface SchemaCommit {
  readonly changes: readonly SchemaChange[];
  /** Table properties set with it (what the caller records about the schema). */
  readonly properties?: Readonly<Record<string, string>>;
}


export interface CheckpointCommitContext {
  identifier: TableIdentifier;
  job: { jobId: string; checkpointId: bigint };
  /** The table's progress summary, stored as `floe.source-offset`. */
  progress: string;
  /** The commit's reads of the table's manifests (table/manifest-reads.ts), shared with what prepared it. */
  reads: ManifestReads;
  /** The unpartitioned spec the commit adds for its equality deletes (table/added-spec.ts). */
  addSpec: PartitionSpec | undefined;
  /** A schema change the snapshot carries, with the table properties that record it. */
  schema: SchemaCommit | undefined;
  /** The table's key index: located again from, or dropped when the outcome leaves it behind the table. */
  keys: KeyIndexLifecycle;
  /** Where a keyless table's row index located the checkpoint's deletes (value-indexes.ts): its snapshot, its rows' schema. */
  rowIndex?: { snapshotId: bigint | undefined; schemaId: number | undefined };
  retry?: Partial<RetryPolicy>;
  warn?: (message: string) => void;
  /** The table as reloaded to locate the deletes again (the committer's table from then on). */
  replanned: (table: CatalogTable) => void;
}

/**
 * Commits `prepared` (none: a stamps-only snapshot) on top of `table`. 'already-committed': another
 * process of the job committed the checkpoint while its deletes were located again (the files
 * written for it are deleted). Otherwise the commit loop's result, with the table and the prepared
 * changes it committed (re-planned ones, after a relocation).
 */
export async function commitCheckpoint(
  table: CatalogTable,
  prepared: PreparedChanges | undefined,
  dvTargets: ReadonlySet<string>,
  c: CheckpointCommitContext,
): Promise<{ result: CommitResult; table: CatalogTable; prepared: PreparedChanges | undefined } | 'already-committed'> {
  for (let relocations = 0; ; relocations++) {
    try {
      return { result: await commitPrepared(table, prepared, dvTargets, c), table, prepared };
    } catch (e) {
      if (isDvTargetConflict(e) && prepared?.relocate && relocations < MAX_RELOCATIONS) {
        // Nothing of this attempt landed (a definite conflict): the deletes are located again in
        // the table as it is now and the commit planned anew.
        c.warn?.(`${identifierToString(c.identifier)}: ${errorMessage(e)}; locating the checkpoint's deletes again`);
        const replanned = await replanDeletes(table, c.identifier, c.keys, prepared, c.job, c.reads, c.warn, c.rowIndex?.schemaId);
        c.replanned(replanned.table);
        if (replanned.prepared === 'already-committed') {
          await deleteUnreferenced(table, prepared.writtenPaths, c.warn);
          return 'already-committed';
        }
        table = replanned.table;
        prepared = replanned.prepared;
        dvTargets = new Set(prepared.committedTargets ?? []);
        continue;
      }
      c.keys.drop(); // whatever happened, the index no longer knows the table's state
      // a DV-target conflict is a definite refusal (an unknown outcome before it would have made
      // it one): nothing references this checkpoint's files
      if (isDvTargetConflict(e) && prepared) await deleteUnreferenced(table, prepared.writtenPaths, c.warn);
      if (isFloeError(e, 'commit-state-unknown')) {
        // the commit loop looked for the snapshot already (commit-engine.ts): every file is kept
        const { jobId, checkpointId } = c.job;
        throw new FloeError(SUBSYSTEM, 'commit-state-unknown', `checkpoint ${checkpointId} of job ${jobId} to ${identifierToString(c.identifier)}: the commit's outcome is unknown and the table does not show it (yet); its files were kept. Restart and resume from lastCommitted: ${errorMessage(e)}`, { cause: e });
      }
      // Delivery note: the files stay as orphans — after a failed attempt a catalog may still
      // reference them if its error hid a landed commit; deleting them is never worth that risk.
      throw e;
    }
  }
}

/** One row-delta commit of the prepared changes, stamped, with the replay check in `validate`. */
function commitPrepared(table: CatalogTable, prepared: PreparedChanges | undefined, dvTargets: ReadonlySet<string>, c: CheckpointCommitContext): Promise<CommitResult> {
  const { jobId, checkpointId } = c.job;
  const previous = lastCommitted(table.metadata, jobId);
  const maxCommitted = previous && previous.checkpointId > checkpointId ? previous.checkpointId : checkpointId;
  const planned = c.keys.current?.snapshotId ?? c.rowIndex?.snapshotId;
  return commitRowDelta(
    table,
    { dataFiles: prepared?.dataFiles ?? [], deleteFiles: prepared?.deleteFiles ?? [], removedFiles: prepared?.removedDeleteFiles ?? [] },
    {
      summary: checkpointSummary(jobId, checkpointId, maxCommitted, c.progress),
      properties: (snapshotId) => ({ ...c.schema?.properties, ...checkpointProperties(jobId, checkpointId, maxCommitted, c.progress, snapshotId) }),
      schemaChanges: c.schema?.changes,
      // asked before the first attempt too (snapshot-producer.ts), on the table as loaded here
      validate: async (current) => {
        if (isCheckpointCommitted(current, jobId, checkpointId)) return 'skip';
        // DVs on files committed earlier: no other writer may have removed them since the index
        await validateTargetsUntouched(c.reads, current, planned, dvTargets);
        return 'proceed';
      },
      reads: c.reads,
      addSpec: c.addSpec,
      retry: c.retry,
      warn: c.warn,
    },
  );
}

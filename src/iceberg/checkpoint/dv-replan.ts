/**
 * Planning a checkpoint's deletion vectors again (docs/design.md §4a): when another writer rewrote
 * (or gave a DV to) a data file whose rows the checkpoint deletes — a compaction running beside
 * floe — its commit is refused with a DV-target conflict (committed-dv-targets.ts,
 * table/concurrent-dv-check.ts). Nothing of that attempt landed, so the table is reloaded, the key
 * index rebuilt from it, and the deletes of committed rows located through it anew: new DV files,
 * the replaced ones (never committed) deleted. The table committer (table-committer.ts) then commits
 * the re-planned changes, up to `MAX_RELOCATIONS` times.
 */
import { FloeError } from '../../util/errors.js';
import { identifierToString, type TableIdentifier } from '../metadata/catalog.js';
import { findExistingDeletes } from './existing-deletes.js';
import { isCheckpointCommitted } from './checkpoint-stamps.js';
import type { KeyIndexLifecycle } from '../keyindex/key-index-lifecycle.js';
import type { PreparedChanges } from '../writer/table-change-writer.js';
import { deleteUnreferenced } from './unreferenced-files.js';
import { reloadTable, type CatalogTable } from '../table/index.js';
import type { ManifestReads } from '../table/manifest-reads.js';

const SUBSYSTEM = 'iceberg.writer';

/** Times one checkpoint's deletion vectors are located again after other writers' rewrites. */
export const MAX_RELOCATIONS = 10;

export interface Replanned {
  /** The table as reloaded for the new plan. */
  table: CatalogTable;
  prepared: PreparedChanges | 'already-committed';
}

/**
 * Locates the deletes of `prepared` again in the table as it is now. 'already-committed': another
 * process of the job committed the checkpoint meanwhile.
 */
export async function replanDeletes(
  table: CatalogTable,
  identifier: TableIdentifier,
  keys: KeyIndexLifecycle,
  prepared: PreparedChanges,
  job: { jobId: string; checkpointId: bigint },
  reads: ManifestReads,
  warn?: (message: string) => void,
): Promise<Replanned> {
  const now = await reloadTable(table);
  keys.drop();
  if (isCheckpointCommitted(now.metadata, job.jobId, job.checkpointId)) return { table: now, prepared: 'already-committed' };
  const m = now.metadata;
  const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
  if (!schema || m.currentSchemaId !== keys.indexSchemaId) {
    throw new FloeError(SUBSYSTEM, 'commit-conflict', `${identifierToString(identifier)}: the schema changed while a checkpoint was committed; its deletes cannot be located again with the same keys. Restart and resume from lastCommitted`, { retryable: false });
  }
  const index = await keys.load(now, schema);
  const relocated = await prepared.relocate!(index, (targets) => findExistingDeletes({ io: now.io, metadata: m }, targets, reads));
  await deleteUnreferenced(now, relocated.replacedPaths, warn);
  return { table: now, prepared: relocated };
}

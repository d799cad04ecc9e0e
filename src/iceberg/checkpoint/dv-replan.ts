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
import type { IndexedRow } from '../keyindex/key-index.js';
import { buildRowIndex } from '../keyindex/value-index-build.js';
import type { ValueIndex } from '../keyindex/value-index.js';
import type { KeyId } from '../keyindex/table-key.js';
import type { RowLocator } from '../writer/prepared-changes.js';
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
  /** A keyless table's: the schema its row index encoded the deleted rows with. */
  rowSchemaId?: number,
): Promise<Replanned> {
  const now = await reloadTable(table);
  keys.drop();
  if (isCheckpointCommitted(now.metadata, job.jobId, job.checkpointId)) return { table: now, prepared: 'already-committed' };
  const m = now.metadata;
  const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
  const keyless = prepared.rowIndexDelta !== undefined;
  if (!schema || m.currentSchemaId !== (keyless ? rowSchemaId : keys.indexSchemaId)) {
    throw new FloeError(SUBSYSTEM, 'commit-conflict', `${identifierToString(identifier)}: the schema changed while a checkpoint was committed; its deletes cannot be located again with the same keys. Restart and resume from lastCommitted`, { retryable: false });
  }
  const index = keyless ? copiesOf(await buildRowIndex(now, schema)) : await keys.load(now, schema);
  const relocated = await prepared.relocate!(index, (targets) => findExistingDeletes({ io: now.io, metadata: m }, targets, reads));
  await deleteUnreferenced(now, relocated.replacedPaths, warn);
  return { table: now, prepared: relocated };
}

/**
 * A keyless table's row index as a locator: each `get` of a row hands out a live copy no earlier
 * `get` took, so a row deleted twice is located as two copies (the index itself is not kept: the
 * commit it is built for lands on another writer's snapshot, and the next checkpoint builds one).
 */
function copiesOf(index: ValueIndex): RowLocator {
  const taken = new Set<string>();
  return {
    get(k: KeyId): IndexedRow | undefined {
      let found: IndexedRow | undefined;
      index.rowsOf(k, (file, pos) => {
        const place = `${file.filePath}#${pos}`;
        if (taken.has(place)) return false;
        taken.add(place);
        found = { file, pos };
        return true;
      });
      return found;
    },
  };
}

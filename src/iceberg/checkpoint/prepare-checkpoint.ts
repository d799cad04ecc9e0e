/**
 * A checkpoint's buffered changes made into files for ONE commit (table-committer.ts): the
 * unpartitioned spec a partitioned table's equality deletes need, the deletes already committed on
 * the data files its deletion vectors target (merged into the new DVs), and the writer's `prepare`.
 */
import type { PartitionSpec } from '../spec/partition.js';
import { unpartitionedSpecFor, type CatalogTable } from '../table/index.js';
import { ManifestReads } from '../table/manifest-reads.js';
import type { PreparedChanges, TableChangeWriter } from '../writer/table-change-writer.js';
import { findExistingDeletes } from './existing-deletes.js';

export interface PreparedCheckpoint {
  /** The head's manifests, read once for this commit: the deletes the new DVs merge, the manifests it carries over, the snapshots committed meanwhile. */
  reads: ManifestReads;
  /** The unpartitioned spec the commit adds for its equality deletes. */
  addSpec: PartitionSpec | undefined;
  prepared: PreparedChanges | undefined;
  /** The data files committed earlier that the checkpoint's DVs delete rows of. */
  dvTargets: Set<string>;
}

/** Prepares `writer`'s changes on top of `table` (none: `prepared` undefined, the writer ended); `onError` runs before a failure is thrown. */
export async function prepareCheckpoint(table: CatalogTable, writer: TableChangeWriter | undefined, onError: () => void): Promise<PreparedCheckpoint> {
  const reads = new ManifestReads(table.io);
  // A partitioned table's equality deletes are global: written with an unpartitioned spec, which
  // the commit adds when the table has none yet (table/added-spec.ts).
  let addSpec: PartitionSpec | undefined;
  let equalityDeleteSpecId: number | undefined;
  if (writer?.needsUnpartitionedSpec) {
    const unpartitioned = unpartitionedSpecFor(table.metadata);
    equalityDeleteSpecId = unpartitioned.spec.specId;
    if (unpartitioned.added) addSpec = unpartitioned.spec;
  }
  let prepared: PreparedChanges | undefined;
  const dvTargets = new Set(writer?.committedTargetPaths() ?? []);
  if (writer && !writer.isEmpty) {
    try {
      // the deletes of these files now, to merge into the new DVs (one DV per data file)
      const existingDeletes = dvTargets.size > 0 ? findExistingDeletes(table, dvTargets, reads) : undefined;
      // awaited by prepare once the data files are written; a failure before then is prepare's to report
      existingDeletes?.catch(() => undefined);
      prepared = await writer.prepare({ equalityDeleteSpecId, existingDeletes });
    } catch (e) {
      onError();
      await writer.abort();
      throw e;
    }
  } else await writer?.abort();
  return { reads, addSpec, prepared, dvTargets };
}

/**
 * One captured table as the running pipeline holds it: ONE record per table, in one map
 * (captured-tables.ts), that the checkpointer reads for its policy (when and whether the table
 * commits: checkpoint.ts), the router for routing changes to it (router.ts), and the DDL handler for
 * the table's definition. The record holds what the table is mapped with (`prepared`: its MySQL
 * definition, Iceberg mapping and table), how a source row becomes an Iceberg row (`project`), its
 * committer with the writer modes of its two phases, and its progress and idle counters
 * (`CheckpointTable`, the part a checkpoint needs).
 */
import type { WriteMode } from '../../iceberg/writer/index.js';
import type { Row } from '../../model/values.js';
import type { CheckpointTable } from '../table-checkpoint.js';
import type { PreparedTable } from './prepared-tables.js';

export interface PipelineTable extends CheckpointTable {
  /** The definition, mapping and Iceberg table the run maps the table with (replaced after a DDL). */
  prepared: PreparedTable;
  /** Source row → Iceberg row (table-mapping-catalog.ts). */
  project: (row: Row) => Row;
  /** MySQL column names in source-row order (to place the values of cascade deletes). */
  sourceColumns: readonly string[];
  /** The writer mode of snapshot chunks and of binlog transactions (router.ts). */
  readonly snapshotMode: WriteMode;
  readonly streamMode: WriteMode;
}

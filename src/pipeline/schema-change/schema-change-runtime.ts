/** What applying a schema change needs from the running pipeline besides `DdlContext`. */
import type { Catalog, TableIdentifier } from '../../iceberg/metadata/catalog.js';
import type { SourceStream } from '../../source/mysql/index.js';

/**
 * What the evolve policy needs from the runner besides `DdlContext` (whose `refreshTable(table,
 * mapped)` it calls after evolving a table). The runner builds the handler with
 * `createSchemaChangeHandler(config, () => runtime)`; `runtime` may be undefined until the source runs.
 */
export interface SchemaChangeRuntime {
  /** The running source: current definitions, flavor, decoding remap, cascades. */
  readonly source: Pick<SourceStream, 'tables' | 'flavor' | 'captureSchemas' | 'remap' | 'forget' | 'replanCascades' | 'cascades'>;
  readonly catalog: Catalog;
  /** The Iceberg table of a captured table ('db.table'). */
  icebergIdentifier(key: string): TableIdentifier | undefined;
  /** Stops routing a table's changes (dropped or renamed away in MySQL). */
  dropTable(key: string): void;
}

/**
 * The MySQL source's one surface: everything the pipeline, the CLI and the demo use of src/source/mysql
 * is exported here, and they import nothing else of it (the layer rules of .dependency-cruiser.cjs), so
 * the modules behind it can be rearranged without touching their callers.
 */
export { chunkId, parseChunk } from './snapshot/chunk.js';
export type { Chunk } from './snapshot/chunk.js';
export { splitTable } from './snapshot/chunk-splitter.js';
export { connectMysql, quoteIdent, quoteString } from './client.js';
export type { MysqlClient, MysqlConnectionConfig } from './client.js';
export { readSessionTls } from './tls/session-tls.js';
export type { SessionTls } from './tls/session-tls.js';
export type { TlsSettings } from './tls/tls-settings.js';
export { applyDdl, enrichFromCatalog, preferServerTimestampDefaults } from './ddl/ddl-apply.js';
export type { ColumnChange, TableEffect } from './ddl/ddl-apply.js';
export { implicitDefaultText } from './ddl/ddl-columns.js';
export { parseDdl } from './ddl/ddl-parser.js';
export type { DdlStatement } from './ddl/ddl-statements.js';
export { literalDefaultValue } from './schema/default-values.js';
export { detectDialect } from './dialect.js';
export type { ServerDialect, ServerFlavor } from './dialect.js';
export { compilePattern, discoverTables, tableMatcher } from './schema/discovery.js';
export type { CascadeDeleteChange, DdlEvent, PhaseEvent, SnapshotPlanEvent, SnapshotRowsEvent, SourceEvent, TableRef, TransactionEvent } from './events.js';
export type { CascadePlan, KeyCascadeRule } from './schema/foreign-keys.js';
export { compareOffsets, formatEventPosition, formatOffset, isAfter, maxOffset, minOffset, parseOffset, sameServer, serializeOffset } from './offset/offset.js';
export type { BinlogOffset, ServerIdentity } from './offset/offset.js';
export { runPreflight } from './preflight.js';
export type { PreflightCheck } from './preflight.js';
export { createSnapshotRowConverter, isRequired, snapshotSelectList } from './snapshot/snapshot-values.js';
export { SourceStream } from './source-stream.js';
export type { SourceResume } from './source-options.js';
export { openMySqlSource } from './opened-source.js';
export type { MySqlSourceConfig, OpenedMySqlSource, SourceSession } from './opened-source.js';
export type { StartPosition } from './binlog/start-position.js';
export { captureTableSchema, captureTableSchemas, qualifiedTable, tableKey } from './schema/table-schema.js';
export type { ColumnSchema, TableId, TableSchema } from './schema/table-schema.js';
export { mapColumn, mapTable } from './schema/type-mapping.js';
export type { MappedColumn, MappedTable, TypeMappingOptions } from './schema/type-mapping.js';
export { readWatermark } from './snapshot/watermark.js';
// `floe verify` (src/pipeline/verify/): the server side of its checksums and reads, and the job lock
export { ChunkLocator, chunkKeyColumns } from './snapshot/chunk.js';
export { createKeyComparator, serverCollationWeigher } from './snapshot/key-compare.js';
export type { KeyComparator } from './snapshot/key-compare.js';
export { discoverForeignKeys, keyCascadeTriggers, planCascades } from './schema/foreign-keys.js';
export { transformComputable } from './verify/canonical-sql.js';
export type { CanonicalColumn } from './verify/canonical-sql.js';
export { readChunkChecksum, readChunkRows } from './verify/chunk-reads.js';
export type { ChunkChecksum, ReadServer } from './verify/chunk-reads.js';
export type { ReadPoint } from './verify/read-point.js';
export { TableChangeLog } from './verify/change-log.js';
export { changedChunks } from './verify/changed-chunks.js';
export { rowsAtOffset } from './verify/window-apply.js';
export { serverFloatTexts } from './verify/float-text.js';
export { readChunksForRepair } from './verify/repair-read.js';
export { JobLock, jobLockName } from './job-lock.js';

/**
 * The MySQL source's one surface: everything the pipeline, the CLI and the demo use of src/source/mysql
 * is exported here, and they import nothing else of it (the layer rules of .dependency-cruiser.cjs), so
 * the modules behind it can be rearranged without touching their callers.
 */
export { chunkId, parseChunk } from './chunk.js';
export type { Chunk } from './chunk.js';
export { splitTable } from './chunk-splitter.js';
export { connectMysql, quoteIdent, quoteString } from './client.js';
export type { MysqlClient, MysqlConnectionConfig } from './client.js';
export { applyDdl, enrichFromCatalog, preferServerTimestampDefaults } from './ddl-apply.js';
export type { ColumnChange, TableEffect } from './ddl-apply.js';
export { implicitDefaultText } from './ddl-columns.js';
export { parseDdl } from './ddl-parser.js';
export type { DdlStatement } from './ddl-statements.js';
export { literalDefaultValue } from './default-values.js';
export { detectDialect } from './dialect.js';
export type { ServerDialect, ServerFlavor } from './dialect.js';
export { compilePattern, discoverTables, tableMatcher } from './discovery.js';
export type { CascadeDeleteChange, DdlEvent, PhaseEvent, SnapshotPlanEvent, SnapshotRowsEvent, SourceEvent, TableRef, TransactionEvent } from './events.js';
export type { CascadePlan, CascadeRule } from './foreign-keys.js';
export { compareOffsets, formatEventPosition, formatOffset, isAfter, mariadbGtids, maxOffset, minOffset, mysqlGtids, parseOffset, sameServer, serializeOffset } from './offset.js';
export type { BinlogOffset, ServerIdentity } from './offset.js';
export { runPreflight } from './preflight.js';
export type { PreflightCheck } from './preflight.js';
export { createSnapshotRowConverter, isRequired, snapshotSelectList } from './snapshot-values.js';
export { MySqlSource } from './source.js';
export type { MySqlSourceOptions, SourceResume } from './source.js';
export { captureTableSchema, captureTableSchemas, qualifiedTable, tableKey } from './table-schema.js';
export type { ColumnSchema, TableId, TableSchema } from './table-schema.js';
export { mapColumn, mapTable } from './type-mapping.js';
export type { MappedColumn, MappedTable, TypeMappingOptions } from './type-mapping.js';
export { listBinlogFiles, readServerIdentity, readWatermark } from './watermark.js';

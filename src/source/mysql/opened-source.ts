/**
 * The MySQL side of a run, captured once: `openMySqlSource` opens one control connection, detects the
 * server's dialect, reads its identity (server id / uuid, what offsets are stamped with) and captures
 * the definitions of the tables to capture (discovered by include/exclude patterns, or a given list),
 * mapped to Iceberg types. Everything the pipeline asks the server outside the streams goes through
 * it: where a stream starts (`resolveStart`, start-position.ts), which binlog files the server still
 * has, row estimates, the definitions of tables that join later.
 *
 * `events(session)` starts one source stream (a `SourceStream`, source.ts) over that connection: it
 * does not connect, detect or read the identity again, it decodes with the mappings captured here
 * (or the caller's, where a DDL made while floe was stopped is still ahead in the binlog), and its
 * binlog readers resolve their start on the same connection. A run that restarts its stream (a new
 * table joins) asks for another session; the connection is closed with `close()`.
 */
import { prewarmBinlogWorker } from './binlog/worker-session.js';
import { FloeError } from '../../util/errors.js';
import { connectMysql, quoteString } from './client.js';
import { detectDialect, type ServerDialect } from './dialect.js';
import { discoverTables } from './schema/discovery.js';
import type { BinlogOffset, ServerIdentity } from './offset/offset.js';
import { captureTableSchemas, tableKey, type TableId } from './schema/table-schema.js';
import { mapTable, type MappedTable } from './schema/type-mapping.js';
import { resolveStartOffset, type StartPosition } from './binlog/start-position.js';
import { listBinlogFiles, readServerIdentity } from './snapshot/watermark.js';
import { SourceStream } from './source-stream.js';
import type { MySqlSourceOptions, SourceControl } from './source-options.js';

/** The source's configuration for a run: what `MySqlSourceOptions` holds beyond one stream's resume. */
export type MySqlSourceConfig = Omit<MySqlSourceOptions, 'resume' | 'mapped' | 'decodeAfter' | 'changedDefinitions' | 'startWhenNoSnapshot'>;

/** One stream's part: the tables it captures (default: every captured table) and where it resumes. */
export type SourceSession = Pick<MySqlSourceOptions, 'resume' | 'mapped' | 'decodeAfter' | 'changedDefinitions' | 'startWhenNoSnapshot'> & {
  readonly tables?: readonly TableId[];
};

const SUBSYSTEM = 'source.mysql';

/** Opens the source: one control connection, the dialect, the server identity, the captured tables. */
export async function openMySqlSource(config: MySqlSourceConfig): Promise<OpenedMySqlSource> {
  // the streaming reader's worker thread loads its modules while the run prepares its tables
  if (config.binlogThread === 'worker') prewarmBinlogWorker();
  const client = await connectMysql(config.connection);
  try {
    const dialect = await detectDialect(client);
    const identity = await readServerIdentity(client, dialect.flavor);
    const opened = new OpenedMySqlSource(config, { client, dialect, identity });
    if (Array.isArray(config.tables)) {
      const ids = config.tables as readonly TableId[];
      const mapped = await opened.capture(ids);
      const found = new Set(mapped.map((m) => tableKey(m.schema.id)));
      const missing = ids.find((id) => !found.has(tableKey(id)));
      if (missing) throw new FloeError(SUBSYSTEM, 'not-found', `table ${tableKey(missing)} not found: expected a base table readable by the source user`);
    } else {
      // a table dropped between the discovery and the capture is not captured
      await opened.capture(await discoverTables(client, config.tables as Exclude<MySqlSourceConfig['tables'], readonly TableId[]>));
    }
    return opened;
  } catch (e) {
    // the open failed: that failure is what the caller sees
    await client.close().catch(() => {});
    throw e;
  }
}

export class OpenedMySqlSource {
  private readonly captured = new Map<string, MappedTable>();

  constructor(
    private readonly config: MySqlSourceConfig,
    private readonly control: SourceControl,
  ) {}

  get dialect(): ServerDialect {
    return this.control.dialect;
  }

  get identity(): ServerIdentity {
    return this.control.identity;
  }

  /**
   * The captured tables ("db.table" → mapping, sorted by name at open): the source's one map of them,
   * as the server defined them when captured and then as its streams decode them (a DDL's new
   * mapping, a caller's where a DDL is still ahead; a table dropped is forgotten).
   */
  get tables(): ReadonlyMap<string, MappedTable> {
    return this.captured;
  }

  /** Captures more tables (ones that joined): their current definitions, mapped; tables that no longer exist are left out. */
  async capture(refs: readonly TableId[]): Promise<MappedTable[]> {
    if (refs.length === 0) return [];
    const schemas = await captureTableSchemas(this.control.client, refs, this.control.dialect.flavor);
    const out: MappedTable[] = [];
    for (const id of refs) {
      const s = schemas.get(tableKey(id));
      if (!s) continue;
      const m = mapTable(s, this.config.typeMapping);
      this.captured.set(tableKey(id), m);
      out.push(m);
    }
    return out;
  }

  /** The concrete offset a start position stands for on this server now (start-position.ts). */
  resolveStart(start: StartPosition): Promise<BinlogOffset> {
    return resolveStartOffset(this.control.client, this.control.dialect, this.control.identity, start);
  }

  /** The binlog files the server still has, oldest first (SHOW BINARY LOGS). */
  async binlogFiles(): Promise<string[]> {
    return (await listBinlogFiles(this.control.client)).map((f) => f.name);
  }

  /** The server's row estimates ("db.table" → information_schema.TABLES.TABLE_ROWS; 0 when unknown). */
  async rowEstimates(ids: readonly TableId[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    if (ids.length === 0) return out;
    const rows = await this.control.client.query<{ db: string; t: string; n: unknown }>(
      `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS t, TABLE_ROWS AS n FROM information_schema.TABLES WHERE (TABLE_SCHEMA, TABLE_NAME) IN (${ids
        .map((id) => `(${quoteString(id.database)}, ${quoteString(id.table)})`)
        .join(', ')})`,
    );
    for (const id of ids) {
      const r = rows.find((x) => String(x.db) === id.database && String(x.t) === id.table);
      out.set(tableKey(id), Number(r?.n ?? 0));
    }
    return out;
  }

  /**
   * One source stream over the opened connection: `session.tables` (default every captured table),
   * decoded with the mappings of `session.mapped` where given and the captured ones otherwise.
   */
  events(session: SourceSession = {}): SourceStream {
    const ids = session.tables ?? [...this.captured.values()].map((m) => m.schema.id);
    return new SourceStream({ ...this.config, ...session, tables: ids }, this.control, this.captured);
  }

  async close(): Promise<void> {
    // closing after the run's outcome is decided: a failing close must not replace it
    await this.control.client.close().catch(() => {});
  }
}

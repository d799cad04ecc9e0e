/**
 * What a `SourceStream` session is given (source-stream.ts): the tables to capture, how to map and snapshot
 * them, where to resume (`SourceResume`, what the caller persisted from an earlier stream), the
 * definitions to decode with where they differ from the server's, and the control connection an
 * opened source shares with its sessions (`SourceControl`, opened-source.ts).
 */
import type { Chunk } from './snapshot/chunk.js';
import type { MysqlClient, MysqlConnectionConfig } from './client.js';
import type { ServerDialect, ServerFlavor } from './dialect.js';
import type { TableFilterConfig } from './schema/discovery.js';
import type { BinlogOffset, ServerIdentity } from './offset/offset.js';
import type { TableId } from './schema/table-schema.js';
import type { MappedTable, TypeMappingOptions } from './schema/type-mapping.js';
import type { StartPosition } from './binlog/start-position.js';

/** Splits a table into its chunk plan (the source's chunk splitter), on a server of `flavor`. */
type ChunkSplitter = (client: MysqlClient, table: MappedTable, flavor: ServerFlavor) => Promise<Chunk[]>;

export interface MySqlSourceOptions {
  readonly connection: MysqlConnectionConfig;
  /** Which tables: include/exclude patterns (discovery) or an explicit list. */
  readonly tables: TableFilterConfig | readonly TableId[];
  readonly typeMapping?: TypeMappingOptions;
  /** First replica server id floe uses: streaming uses it, snapshot backfill workers the next ones. */
  readonly serverIdBase: number;
  readonly snapshot?: {
    /** Default true. false: no snapshot, stream from `startWhenNoSnapshot`. */
    readonly enabled?: boolean;
    readonly parallelism?: number;
    /** Default true; false is at-least-once (see snapshot-reader.ts). */
    readonly backfill?: boolean;
    /** Rows per chunk (default 8096, as Flink CDC). */
    readonly chunkSize?: number;
    /** Default: the source's `splitTable` (even split for dense numeric keys, key walking otherwise). */
    readonly splitter?: ChunkSplitter;
  };
  /** Where streaming starts when there is no snapshot and no resume offset (default latest). */
  readonly startWhenNoSnapshot?: StartPosition;
  readonly resume?: SourceResume;
  /**
   * The tables' mappings to decode with ("db.table" → mapping; a table without one is captured from
   * the server): the opened source's, or the caller's where they differ from the server's current
   * definition — where the binlog is resumed from, rows were logged under the definition the caller
   * recorded with its offset, and a DDL made since is still ahead in the binlog (the caller applies it
   * there and switches the decoding with `remap`).
   */
  readonly mapped?: ReadonlyMap<string, MappedTable>;
  /**
   * Per table ("db.table"): binlog rows at or before this offset are not decoded — the caller holds
   * them already (it resumes the table from there), and they may have been logged under an older
   * definition than the one it decodes the table with.
   */
  readonly decodeAfter?: ReadonlyMap<string, BinlogOffset>;
  /**
   * Tables ("db.table") whose server definition differs from their mapping in `mapped` (a DDL made
   * while floe was stopped). When one of them is still being snapshotted, the binlog is first read
   * up to the server's current position ('catch-up' … 'caught-up' phase events) — delivering the
   * changes of the chunks already finished, and the DDL for the caller to apply — before the
   * remaining chunks are read, with the definition the DDL left.
   */
  readonly changedDefinitions?: ReadonlySet<string>;
  readonly log?: (message: string) => void;
  /** Where notes an operator must see go (a delivery guarantee weakened); default: `log`. */
  readonly warn?: (message: string) => void;
  /**
   * Heartbeat period the binlog connections ask the server for (binlog-session.ts; its read
   * watchdog gives up on a connection after 3 silent periods). Default: the reader's (2000 ms).
   */
  readonly heartbeatMs?: number;
  /** Where the streaming (and catch-up) binlog reader's session runs (binlog-reader.ts `thread`; default 'main'). */
  readonly binlogThread?: 'worker' | 'main';
  /**
   * What the before images of tables with a primary key carry (an UPDATE's before, a DELETE's row):
   * 'full' (default), or 'key' — the primary key (and a snapshot's chunk key) only, every other
   * column null (binlog-decoding.ts `beforeImages`). For a consumer that locates rows by their key.
   */
  readonly beforeImages?: 'full' | 'key';
  /**
   * Reproduce ON DELETE CASCADE child deletes, which the server does not log (default true;
   * cascade.ts, foreign-keys.ts). The plan and its warnings are in `cascades` once events started.
   */
  readonly cascadeDeletes?: boolean;
}

export interface SourceResume {
  /** "db.table" → the serialized chunks of its `snapshot-plan` event. */
  readonly plans?: Readonly<Record<string, readonly string[]>>;
  /** chunk id → serialized high watermark (`serializeOffset`) of chunks already delivered. */
  readonly finished?: Readonly<Record<string, string>>;
  /** Offset of the last transaction (or progress mark) whose effects are committed. */
  readonly offset?: BinlogOffset;
}

/**
 * The control connection of an opened source (opened-source.ts) with what was read on it once: the
 * sessions of a run share it (and their binlog readers resolve their start on it) instead of each
 * connecting, detecting the dialect and reading the server identity again. Closed by its owner.
 */
export interface SourceControl {
  readonly client: MysqlClient;
  readonly dialect: ServerDialect;
  readonly identity: ServerIdentity;
}

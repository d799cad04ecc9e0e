/**
 * One replication session with its transaction assembly: a BinlogSession (zongji) feeding a
 * TransactionAssembler, delivering, per binlog event, what the event completed (`AssembledBatch`).
 * The reader (binlog-reader.ts) runs it on its own thread (`startLocalSession`) or in a worker
 * thread (worker-session.ts), where the socket, the packet parsing and the assembly then run beside
 * the pipeline. Its options are plain data, so that they can be posted to a worker.
 */
import type { TableMapEntry } from '@vlasky/zongji';
import { type BinlogOffset, type ServerIdentity } from '../offset/offset.js';
import { tableKey } from '../schema/table-schema.js';
import { BinlogSession, type SessionStart } from './zongji/binlog-session.js';
import { TransactionAssembler, ddlConcerns } from './binlog-transactions.js';
import type { AssembledEvent } from './raw-transactions.js';

export interface AssemblingSessionOptions {
  /** mysql2 options of the dump connection (plain values). */
  readonly connection: Record<string, unknown>;
  readonly serverId: number;
  readonly start: SessionStart;
  /** Where the assembler starts: the position and (when known) GTID state of `start`. */
  readonly assemblerStart: BinlogOffset;
  readonly identity: ServerIdentity;
  readonly includeSchema: Record<string, string[]>;
  readonly heartbeatMs: number;
  /** Captured tables ('db.table'): only their row changes are assembled. */
  readonly captured: readonly string[];
  /** Databases whose DDL is delivered. */
  readonly ddlDatabases: readonly string[];
  /** Keep the captured tables' rows events as bytes for floe's decoder (zongji-raw-events.ts). */
  readonly rawRows: boolean;
}

/** What one binlog event completed, and the assembler's state after it. */
export interface AssembledBatch {
  readonly items: readonly AssembledEvent[];
  readonly inTransaction: boolean;
  /** The transaction boundary reached, when not in a transaction. */
  readonly offset: BinlogOffset | undefined;
}

export interface SessionHandlers {
  readonly onBatch: (batch: AssembledBatch) => void;
  /** Called at most once; the session is dead afterwards. */
  readonly onError: (error: unknown) => void;
}

export interface AssemblingSession {
  pause(): void;
  resume(): void;
  stop(): Promise<void>;
  /** MySQL thread id of the dump connection, once connected. */
  readonly threadId: number | undefined;
  /** The last zongji TableMap per table ('db.table'), for decoding zongji's row images. */
  readonly tableMaps: ReadonlyMap<string, TableMapEntry>;
}

/** Starts a session on this thread. */
export function startLocalSession(options: AssemblingSessionOptions, handlers: SessionHandlers): AssemblingSession {
  const captured = new Set(options.captured);
  const assembler = new TransactionAssembler({
    identity: options.identity,
    start: options.assemblerStart,
    isCaptured: (t) => captured.has(tableKey(t)),
    isCapturedDdl: ddlConcerns(new Set(options.ddlDatabases)),
  });
  const session = new BinlogSession({
    connection: options.connection,
    serverId: options.serverId,
    start: options.start,
    includeSchema: options.includeSchema,
    heartbeatMs: options.heartbeatMs,
    ...(options.rawRows ? { rawRows: (t: { parentSchema: string; tableName: string }) => captured.has(tableKey({ database: t.parentSchema, table: t.tableName })) } : {}),
    onEvent: (e) => {
      const items = assembler.accept(e) ?? [];
      const inTransaction = assembler.inTransaction;
      handlers.onBatch({ items, inTransaction, offset: inTransaction ? undefined : assembler.offset });
    },
    onError: (e) => {
      // the half-read transaction is read again by the next session
      assembler.abandonTransaction();
      handlers.onError(e);
    },
  });
  session.start();
  return {
    pause: () => session.pause(),
    resume: () => session.resume(),
    stop: () => session.stop(),
    get threadId() {
      return session.threadId;
    },
    tableMaps: assembler.tableMaps,
  };
}

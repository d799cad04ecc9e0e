/**
 * The binlog reader: an async stream of whole transactions, DDL and progress marks for the captured
 * tables, from a start position (earliest, latest, or a `BinlogOffset` by file/position or GTIDs),
 * optionally up to a stop offset (the DBLog backfill window), surviving connection loss.
 *
 * Resume semantics: the reader remembers the offset after the last transaction it handed out
 * (`lastOffset`). When the connection breaks (a KILL of the dump thread, a restart, a network cut)
 * it discards the half-read transaction, waits (exponential backoff), and starts a new session at
 * `lastOffset` — by file/position on the same server, by GTID state when the server changed (a
 * failover) and GTIDs are known. Transactions not after `lastOffset` are dropped, so nothing is
 * delivered twice and nothing is skipped.
 *
 * Failures that reconnecting cannot fix stop the stream with a FloeError: a purged binlog (error
 * 1236), a server change without GTIDs, missing privileges, partial JSON updates, a compressed
 * transaction floe cannot decompress.
 */
import { FloeError } from '../../../util/errors.js';
import type { BinlogEvent, TableRef } from '../events.js';
import { tableKey } from '../events.js';
import { compareOffsets, formatOffset, isAfter, sameServer, type BinlogOffset, type EventPosition, type ServerIdentity } from '../offset/offset.js';
import type { SessionStart } from './zongji/binlog-session.js';
import { startLocalSession, type AssembledBatch, type AssemblingSession, type AssemblingSessionOptions, type SessionHandlers } from './assembled-session.js';
import { startWorkerSession } from './worker-session.js';
import { connectMysql, driverOptions, type MysqlClient, type MysqlConnectionConfig } from '../client.js';
import { detectDialect, type ServerDialect } from '../dialect.js';
import { decodeTransaction, type AssembledEvent, type BinlogDecoding } from './raw-transactions.js';
import { SUBSYSTEM, classifyBinlogError, purgedBinlogError, serverChangedError } from './binlog-errors.js';
import { listBinlogFiles, readServerIdentity } from '../snapshot/watermark.js';
import { AsyncQueue } from './binlog-queue.js';
import { resolveStartOffset, type StartPosition } from './start-position.js';

export type { StartPosition } from './start-position.js';

interface ReconnectPolicy {
  /** Attempts after a retryable failure before giving up (default 10). */
  readonly maxAttempts?: number;
  readonly initialDelayMs?: number;
  readonly maxDelayMs?: number;
}

export interface BinlogReaderOptions {
  /** Where the source is. */
  readonly connection: MysqlConnectionConfig;
  /** Replica server id for the dump connection: unique among the server's replicas and floe's other readers. */
  readonly serverId: number;
  readonly start: StartPosition;
  /** Captured tables: only their row changes are decoded and delivered. */
  readonly tables: readonly TableRef[];
  /** Databases whose DDL is delivered (default: the databases of `tables`). */
  readonly ddlDatabases?: readonly string[];
  readonly decoding: BinlogDecoding;
  /** End the stream once this offset is reached (transactions after it are not delivered). */
  readonly stopAt?: BinlogOffset;
  readonly reconnect?: ReconnectPolicy;
  /** Heartbeat period requested from the server (default 2000 ms; `floe run`: `source.heartbeatMs`). */
  readonly heartbeatMs?: number;
  /**
   * Where the replication session runs: 'worker' (a worker thread: the socket, packet parsing and
   * transaction assembly beside the pipeline, worker-session.ts) or 'main' (this thread). The rows are
   * decoded on this thread either way, when the transaction is taken. Default 'main'.
   */
  readonly thread?: 'worker' | 'main';
  /** Events buffered before the socket is paused (default 256). */
  readonly maxBufferedEvents?: number;
  /** Minimum interval between `progress` events (default 1000 ms). */
  readonly progressIntervalMs?: number;
  readonly dialect?: ServerDialect;
  /**
   * A control connection of the caller's (the source's, opened-source.ts) and its server identity:
   * the start is resolved on it and no connection is opened for it (needs `dialect`). It is not
   * closed by the reader; after a connection loss the reader opens one of its own.
   */
  readonly control?: { readonly client: MysqlClient; readonly identity: ServerIdentity };
  readonly log?: (message: string) => void;
}

export class BinlogReader implements AsyncIterable<BinlogEvent> {
  private readonly queue: AsyncQueue<AssembledEvent>;
  private session: AssemblingSession | undefined;
  private control: MysqlClient | undefined;
  /** `control` is the reader's own (closed with it), not the caller's. */
  private ownsControl = false;
  private dialect: ServerDialect | undefined;
  private identity: ServerIdentity | undefined;
  private closed = false;
  private started = false;
  private attempts = 0;
  private lastProgressAt = 0;
  /** Offset after the last delivered transaction / DDL / progress mark (where a restart resumes). */
  private last: BinlogOffset | undefined;
  private readonly captured: Set<string>;
  private readonly includeSchema: Record<string, string[]>;

  constructor(private readonly options: BinlogReaderOptions) {
    const max = options.maxBufferedEvents ?? 256;
    this.queue = new AsyncQueue<AssembledEvent>(
      max,
      () => this.session?.pause(),
      () => this.session?.resume(),
      () => void this.close(),
    );
    this.captured = new Set(options.tables.map(tableKey));
    this.includeSchema = {};
    for (const t of options.tables) (this.includeSchema[t.database] ??= []).push(t.table);
  }

  /** Offset after the last event handed out (undefined before the first). */
  get lastOffset(): BinlogOffset | undefined {
    return this.last;
  }

  /** MySQL thread id of the current dump connection (for tests that KILL it). */
  get dumpThreadId(): number | undefined {
    return this.session?.threadId;
  }

  [Symbol.asyncIterator](): AsyncIterator<BinlogEvent> {
    if (!this.started) {
      this.started = true;
      this.begin().catch((e) => this.queue.fail(e));
    }
    const inner = this.queue[Symbol.asyncIterator]();
    // row images are converted here, when the consumer takes the transaction (see RawTransaction)
    return {
      next: async () => {
        const r = await inner.next();
        if (r.done) return r;
        const e = r.value;
        return { value: 'raw' in e ? decodeTransaction(e, this.options.decoding, this.session?.tableMaps ?? new Map()) : e, done: false };
      },
      return: async () => {
        await inner.return?.();
        return { value: undefined, done: true };
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const s = this.session;
    this.session = undefined;
    await s?.stop();
    // on the way out: the stream's outcome is already decided, and a dead control connection has nothing left to release
    if (this.ownsControl) await this.control?.close().catch(() => {});
    this.control = undefined;
    this.queue.end();
  }

  // -------------------------------------------------------------------------------------------

  private async begin(): Promise<void> {
    const given = this.options.control;
    const conn = given?.client ?? (await connectMysql(this.options.connection));
    this.control = conn;
    this.ownsControl = !given;
    // closed while connecting: close() found no connection to close yet
    if (this.closed) return this.releaseControl();
    this.dialect = this.options.dialect ?? (await detectDialect(conn));
    this.identity = given?.identity ?? (await readServerIdentity(conn, this.dialect.flavor));
    const start = await resolveStartOffset(conn, this.dialect, this.identity, this.options.start);
    this.last = start;
    await this.connect(start);
  }

  /** Closes the control connection when it is the reader's own. */
  private async releaseControl(): Promise<void> {
    if (this.ownsControl) await this.control?.close().catch(() => {});
    this.control = undefined;
  }

  /** Chooses file/position or GTIDs for `from`, verifying the server and that the binlog is still there. */
  private async sessionStart(from: BinlogOffset): Promise<{ start: SessionStart; assemblerStart: BinlogOffset }> {
    const conn = this.control!;
    const identity = this.identity!;
    const onSameServer = sameServer(from, identity);
    if (from.file !== undefined && from.position !== undefined && onSameServer) {
      const files = await listBinlogFiles(conn);
      if (!files.some((f) => f.name === from.file)) {
        throw purgedBinlogError(from, `binlog file ${from.file} is not in SHOW BINARY LOGS (oldest: ${files[0]?.name ?? 'none'})`);
      }
      return { start: { file: from.file, position: from.position }, assemblerStart: { ...from, ...identity } };
    }
    if (from.gtids && from.gtids.flavor === this.dialect!.flavor) {
      if (!onSameServer) this.options.log?.(`binlog: offset ${formatOffset(from)} is from another server; resuming by GTIDs`);
      const text = from.gtids.flavor === 'mysql' ? from.gtids.set.toString() : from.gtids.position.toString();
      // file/position come from the stream (its first ROTATE) on the new server
      return { start: { gtids: text }, assemblerStart: { gtids: from.gtids, ...identity } };
    }
    if (!onSameServer) {
      const expected = from.serverUuid ?? `id ${from.serverId}`;
      const found = from.serverUuid ? (identity.serverUuid ?? '?') : `id ${identity.serverId}`;
      throw serverChangedError(expected, found, from);
    }
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `cannot start the binlog at ${formatOffset(from)}: expected a file/position or ${this.dialect!.flavor} GTIDs`);
  }

  private async connect(from: BinlogOffset): Promise<void> {
    if (this.closed) return this.releaseControl();
    if (this.reachedStop(from)) {
      await this.close();
      return;
    }
    const { start, assemblerStart } = await this.sessionStart(from);
    if (this.closed) return this.releaseControl();
    const decoding = this.options.decoding;
    const rawRows = decoding.compiledFor !== undefined;
    const options: AssemblingSessionOptions = {
      // the dump connection goes the way its control session went (for source.tls.mode preferred: TLS when the server offered it)
      connection: { ...(await driverOptions(this.options.connection, this.control!.encrypted ? 'tls' : 'plain')), ...(decoding.connectionOptions ?? {}) },
      serverId: this.options.serverId,
      start,
      assemblerStart,
      identity: this.identity!,
      includeSchema: this.includeSchema,
      heartbeatMs: this.options.heartbeatMs ?? 2000,
      captured: [...this.captured],
      ddlDatabases: [...new Set(this.options.ddlDatabases ?? this.options.tables.map((t) => t.database))],
      // floe's own row decoder (row-decoder.ts) reads the captured tables' rows, when the decoding can
      rawRows,
    };
    let session: AssemblingSession | undefined;
    const handlers: SessionHandlers = { onBatch: (b) => this.onBatch(session!, b), onError: (e) => void this.onError(session!, e) };
    // the worker hands over rows events as bytes only (zongji's row images do not survive the thread
    // boundary): without floe's decoder the session stays on this thread
    session = this.options.thread === 'worker' && rawRows ? startWorkerSession(options, handlers) : startLocalSession(options, handlers);
    this.session = session;
  }

  private onBatch(session: AssemblingSession, batch: AssembledBatch): void {
    if (session !== this.session) return;
    if (batch.items.length > 0) {
      for (const item of batch.items) {
        if (item.kind === 'transaction' || item.kind === 'ddl') {
          const pos = item.position;
          // after a reconnect: never hand out what was already delivered
          if (this.last && this.isDelivered(pos)) continue;
          if (this.options.stopAt && isAfter(pos, this.options.stopAt)) {
            void this.close();
            return;
          }
          this.attempts = 0;
          this.last = item.offset;
          this.lastProgressAt = Date.now();
          this.queue.push(item);
        } else {
          this.last = item.offset ?? this.last;
          const now = Date.now();
          if (now - this.lastProgressAt >= (this.options.progressIntervalMs ?? 1000)) {
            this.lastProgressAt = now;
            this.queue.push(item);
          }
        }
      }
    } else if (!batch.inTransaction) {
      const o = batch.offset;
      if (o && o.file) this.last = o;
    }
    if (this.options.stopAt && !batch.inTransaction && this.last && this.reachedStop(this.last)) void this.close();
  }

  private isDelivered(pos: EventPosition): boolean {
    try {
      return !isAfter(pos, this.last!);
    } catch {
      return false;
    }
  }

  private reachedStop(at: BinlogOffset): boolean {
    const stop = this.options.stopAt;
    if (!stop) return false;
    try {
      return compareOffsets(at, stop) >= 0;
    } catch {
      return false;
    }
  }

  private async onError(session: AssemblingSession, e: unknown): Promise<void> {
    if (session !== this.session || this.closed) return;
    const err = classifyBinlogError(e, this.last);
    this.session = undefined;
    await session.stop();
    const policy = this.options.reconnect ?? {};
    const max = policy.maxAttempts ?? 10;
    if (!err.retryable || this.attempts >= max) {
      this.queue.fail(
        err.retryable
          ? new FloeError(SUBSYSTEM, 'source', `gave up reconnecting after ${this.attempts} attempts: ${err.detail}`, { retryable: true, cause: err })
          : err,
      );
      await this.close();
      return;
    }
    this.attempts++;
    const delay = Math.min((policy.initialDelayMs ?? 200) * 2 ** (this.attempts - 1), policy.maxDelayMs ?? 10_000);
    this.options.log?.(`binlog: ${err.detail}; reconnecting in ${delay} ms from ${this.last ? formatOffset(this.last) : 'start'} (attempt ${this.attempts}/${max})`);
    await new Promise((r) => setTimeout(r, delay));
    if (this.closed) return;
    try {
      // the control connection may have died with the dump connection: the reader opens its own
      if (this.ownsControl) await this.control?.close().catch(() => {});
      this.control = undefined;
      this.control = await connectMysql(this.options.connection);
      this.ownsControl = true;
      this.identity = await readServerIdentity(this.control, this.dialect!.flavor);
      await this.connect(this.last!);
    } catch (e2) {
      const err2 = classifyBinlogError(e2, this.last);
      if (err2.retryable) {
        // count it as another failed attempt and try again
        this.session = { stop: async () => {} } as unknown as AssemblingSession;
        await this.onError(this.session, e2);
      } else {
        this.queue.fail(err2);
        await this.close();
      }
    }
  }
}

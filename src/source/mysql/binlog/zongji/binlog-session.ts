/**
 * One replication connection: a `@vlasky/zongji` instance started at a file/position or a GTID
 * state, with heartbeats, a read watchdog, pause/resume for backpressure, and exactly one terminal
 * error callback. The binlog reader builds transactions on top; the raw-decode benchmark mode
 * counts events on top. No reconnect logic here: a session that failed is thrown away.
 *
 * zongji 0.9 already speaks MariaDB: it sends `SET @mariadb_slave_capability=4` and, for a GTID
 * start, `SET @slave_connect_state='d-s-n,…'` before COM_BINLOG_DUMP, and decodes ANNOTATE_ROWS (160),
 * BINLOG_CHECKPOINT (161), GTID (162) and GTID_LIST (163); MySQL GTID starts use
 * COM_BINLOG_DUMP_GTID. The one thing floe adds on the wire is the heartbeat period below; the
 * connection uses the value-shaping options of `binlog-values.ts` (passed in by the reader). A
 * compressed transaction (TRANSACTION_PAYLOAD_EVENT) is unpacked into its events before zongji
 * parses them (zongji-payload-events.ts).
 */
import ZongJi from '@vlasky/zongji';
import type { AnyBinlogEvent } from '@vlasky/zongji';
import { attachExactValueDecoding, type ZongjiLike } from './binlog-values.js';
import { setRawRows } from './zongji-raw-events.js';
import { expandTransactionPayloads } from './zongji-payload-events.js';
import { DumpFlow } from './dump-flow.js';

/** mysql2 connection options (host, port, user, password, ssl, …) plus decoder-required flags. */
type ConnectionOptions = Record<string, unknown>;

export interface SessionStart {
  /** File/position start (ignored when `gtids` is set). */
  readonly file?: string;
  readonly position?: number;
  /** GTID start: a MySQL GTID set or a MariaDB GTID position, as text. */
  readonly gtids?: string;
}

export interface BinlogSessionOptions {
  readonly connection: ConnectionOptions;
  /** Replica server id announced to the source: must be unique among its replicas. */
  readonly serverId: number;
  readonly start: SessionStart;
  /** zongji TableMap filter: row events of other tables are skipped without decoding. */
  readonly includeSchema?: Record<string, string[] | true>;
  /** Heartbeat period requested from the server; the watchdog fails after 3 silent periods. */
  readonly heartbeatMs: number;
  /**
   * Rows events of the tables this accepts are kept as bytes for floe's decoder and not decoded by
   * zongji (zongji-raw-events.ts); default: zongji decodes every row.
   */
  readonly rawRows?: (table: { parentSchema: string; tableName: string }) => boolean;
  readonly onEvent: (event: AnyBinlogEvent) => void;
  /** Called at most once; the session is dead afterwards. */
  readonly onError: (error: unknown) => void;
}

/** The binlog connection's flow control, as mysql2 has it. */
interface Pausable {
  pause(): void;
  resume(): void;
}

export class BinlogSession {
  private readonly zongji: ZongJi;
  private failed = false;
  private stopped = false;
  /** floe's backpressure holds the connection (dump-flow.ts counts it beside zongji's holds). */
  private paused = false;
  private lastEventAt = Date.now();
  private watchdog?: NodeJS.Timeout;

  constructor(private readonly options: BinlogSessionOptions) {
    this.zongji = new ZongJi({ ...options.connection } as never);
    if (options.rawRows) setRawRows(this.zongji, options.rawRows);
  }

  get isMariaDb(): boolean {
    return this.zongji.isMariaDb;
  }

  start(): void {
    const { start, serverId, includeSchema, heartbeatMs } = this.options;
    // the source's exact-value decoding: rewrites JSON/ENUM/SET columns of every TableMap before its rows
    // are parsed (binlog-values.ts); must be the first 'binlog' listener
    attachExactValueDecoding(this.zongji as unknown as ZongjiLike);
    this.zongji.on('binlog', (event: AnyBinlogEvent) => {
      if (this.stopped || this.failed) return;
      this.lastEventAt = Date.now();
      try {
        this.options.onEvent(event);
      } catch (e) {
        this.fail(e);
      }
    });
    this.zongji.on('error', (e: unknown) => this.fail(e));
    const zopts: Record<string, unknown> = { serverId, includeSchema };
    if (start.gtids !== undefined) zopts.gtidSet = start.gtids;
    else {
      zopts.filename = start.file;
      zopts.position = start.position;
    }
    this.zongji.start(zopts);
    // start() creates the binlog connection synchronously and queues its preamble after async
    // server detection, so this statement runs on the binlog connection before COM_BINLOG_DUMP.
    // The server then sends a HEARTBEAT event after every idle period (nanoseconds; MySQL
    // replication protocol, CHANGE MASTER TO MASTER_HEARTBEAT_PERIOD does the same on a replica).
    const conn = (this.zongji as unknown as { connection?: { query(sql: string, cb: (e: unknown) => void): void; pause(): void; resume(): void } }).connection;
    conn?.query(`SET @master_heartbeat_period = ${BigInt(heartbeatMs) * 1_000_000n}`, (e) => {
      if (e) this.fail(e);
    });
    if (conn) {
      // zongji (a TABLE_MAP's column look-up) and pause() below (backpressure) both hold the dump
      // connection paused (dump-flow.ts); a compressed transaction reaches zongji as the events it
      // holds (zongji-payload-events.ts), from the dump on ('ready' comes after this)
      expandTransactionPayloads(this.zongji, new DumpFlow(conn));
    }
    let lastTick = Date.now();
    this.watchdog = setInterval(() => {
      const now = Date.now();
      // A tick long after its time means the event loop was held by a synchronous step of several
      // heartbeats (verify hashing a large chunk, a big commit's encoding). What the server sent
      // meanwhile sits unread in the socket, and timers run before the loop polls it, so the silence
      // seen here says nothing of the server: it is counted again from the end of the hold.
      if (now - lastTick > 2 * heartbeatMs) this.lastEventAt = Math.max(this.lastEventAt, now);
      lastTick = now;
      if (!this.paused && now - this.lastEventAt > 3 * heartbeatMs) {
        this.fail(new Error(`binlog read timeout: no event or heartbeat for ${now - this.lastEventAt} ms`));
      }
    }, heartbeatMs);
    this.watchdog.unref();
  }

  /** Stops reading from the socket (backpressure); the server buffers, then blocks its dump thread. */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.binlogConnection()?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.lastEventAt = Date.now();
    this.binlogConnection()?.resume();
  }

  /** The MySQL thread id of the dump connection (tests KILL it). */
  get threadId(): number | undefined {
    return (this.zongji as unknown as { connection?: { threadId?: number } }).connection?.threadId ?? undefined;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.watchdog) clearInterval(this.watchdog);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 3000);
      timer.unref();
      this.zongji.once('stopped', () => {
        clearTimeout(timer);
        resolve();
      });
      try {
        this.zongji.stop();
      } catch {
        clearTimeout(timer);
        resolve();
      }
    });
    this.zongji.removeAllListeners('binlog');
    // keep an error listener: late socket errors of destroyed connections must not crash the process
    this.zongji.removeAllListeners('error');
    this.zongji.on('error', () => {});
  }

  private binlogConnection(): Pausable | undefined {
    return (this.zongji as unknown as { connection?: Pausable }).connection ?? undefined;
  }

  private fail(e: unknown): void {
    if (this.stopped || this.failed) return;
    this.failed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    this.options.onError(e);
  }
}

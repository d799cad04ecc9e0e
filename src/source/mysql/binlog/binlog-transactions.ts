/**
 * Turns the decoded binlog event sequence of one replication session into floe's binlog events:
 * whole transactions (with GTID, commit position, resume offset and timestamp), DDL statements and
 * progress marks. Pure state machine, no I/O: it is fed zongji events in order.
 *
 * Transaction boundaries (MySQL and MariaDB binlog layouts):
 * - MySQL:   GTID | ANONYMOUS_GTID, Query "BEGIN", (TableMap, Rows…)…, Xid | Query "COMMIT"
 *            DDL:  GTID, Query "<ddl>"  (no BEGIN, the DDL ends the group)
 * - MariaDB: GTID(162, not standalone) replaces BEGIN, …, Xid | Query "COMMIT"
 *            DDL:  GTID(162, FL_STANDALONE), Query "<ddl>"
 * - gtid_mode=OFF MySQL / old servers: Query "BEGIN" … Xid, DDL alone.
 * The position after the commit event is a transaction boundary: resuming there (COM_BINLOG_DUMP
 * with file/position) replays exactly the following transactions.
 *
 * Position bookkeeping: every event header carries the position after the event (`nextPosition`);
 * artificial events (the Rotate/Format sent when a dump starts) carry 0 and are ignored; ROTATE
 * names the next file and its first position.
 *
 * XA: an XA PREPARE group ends with XA_PREPARE_LOG_EVENT; its rows are delivered then, as if
 * committed. If the XA transaction is later rolled back, those changes were delivered anyway: the
 * delivery guarantee weakens for XA ROLLBACK after PREPARE (rare in CDC sources; documented).
 */
import type { AnyBinlogEvent, MariadbGtidEvent, QueryEvent, RotateEvent, HeartbeatEvent, PreviousGtidsEvent, MariadbGtidListEvent, TableMapEntry } from '@vlasky/zongji';
import { FloeError } from '../../../util/errors.js';
import type { ChangeOp, DdlEvent, TableRef } from '../events.js';
import { advanceGtids, mysqlGtids, type BinlogOffset, type EventPosition, type GtidState, type ServerIdentity } from '../offset/offset.js';
import { MariaDbGtidPosition } from '../offset/gtid-mariadb.js';
import { COMMON_HEADER_BYTES, parseTableMap, type TableMapEvent } from './rows/table-map.js';
import type { RawEventBytes } from './zongji/zongji-raw-events.js';
import type { AssembledEvent, PendingChange, RawChange, RawRowsEvent, RawTransaction } from './raw-transactions.js';


export interface AssemblerOptions {
  readonly identity: ServerIdentity;
  /** Start point: file/position and, when known, the GTID state there. */
  readonly start: BinlogOffset;
  /** Whether row changes of a table are kept. */
  readonly isCaptured: (table: TableRef) => boolean;
  /** Whether a statement's DDL concerns the captured databases. */
  readonly isCapturedDdl: (database: string, statement: string) => boolean;
}


interface OpenTransaction {
  gtid?: string;
  /** Saw BEGIN (or MariaDB's non-standalone GTID): the group ends at COMMIT/Xid, not at a DDL. */
  explicit: boolean;
  changes: PendingChange[];
}

const CONTROL = /^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE\s+SAVEPOINT|ROLLBACK\s+TO|XA\s)/i;

export class TransactionAssembler {
  private file: string | undefined;
  private position: number | undefined;
  private gtids: GtidState | undefined;
  private txn: OpenTransaction | undefined;
  private readonly tableRefs = new Map<number, TableRef>();
  /** The last TableMap seen per table ("db.table"), for decoders that want the logged layout. */
  readonly tableMaps = new Map<string, TableMapEntry>();
  /** The last TABLE_MAP per table id, parsed (sessions with raw rows only). */
  private readonly rawTableMaps = new Map<number, TableMapEvent & { readonly bytes: Buffer }>();
  /**
   * Per table id: the column names its last TABLE_MAP event carried itself (binlog_row_metadata=FULL),
   * undefined without them. Not zongji's table map entry: under MINIMAL zongji fills that from
   * information_schema when it reads the event, which can be long after later DDLs changed the
   * table — names of another definition than the rows were logged with.
   */
  private readonly loggedNames = new Map<number, readonly string[] | undefined>();

  constructor(private readonly options: AssemblerOptions) {
    this.file = options.start.file;
    this.position = options.start.position;
    this.gtids = options.start.gtids;
  }

  /** True between a transaction's first event and its commit. */
  get inTransaction(): boolean {
    return this.txn !== undefined;
  }

  /** The current transaction boundary (valid when not in a transaction and a file is known). */
  get offset(): BinlogOffset | undefined {
    if (this.file === undefined || this.position === undefined) return undefined;
    return this.offsetHere();
  }

  /** Forget a half-read transaction (the connection broke inside it; it will be read again). */
  abandonTransaction(): void {
    this.txn = undefined;
  }

  /** Feeds one event; returns what it completes (usually nothing). */
  accept(e: AnyBinlogEvent): AssembledEvent[] | undefined {
    const name = e.getEventName();
    switch (name) {
      case 'rotate': {
        const r = e as RotateEvent;
        this.file = r.binlogName;
        this.position = Number(r.position);
        return undefined;
      }
      case 'gtid':
        return this.open(e.gtid, false);
      case 'anonymousgtid':
        return this.open(undefined, false);
      case 'mariadbgtid': {
        const g = e as MariadbGtidEvent;
        return this.open(g.gtid, !g.standalone);
      }
      case 'query':
        return this.query(e as QueryEvent);
      case 'xid':
      case 'xaprepare':
        return this.commit(e);
      case 'tablemap': {
        const { tableId, columnNames, columnCount } = e as unknown as { tableId: number; columnNames?: string[]; columnCount: number };
        const { floeTableMap: bytes, floeChecksumBytes: checksumBytes = 0 } = e as RawEventBytes;
        if (bytes) {
          // every transaction logs its tables' TABLE_MAPs again: an unchanged one (same bytes between
          // the common header and the checksum) keeps its parsed form, so its compiled decoder is reused
          let known = this.rawTableMaps.get(tableId);
          if (!known || !samePayload(known.bytes, bytes, checksumBytes)) {
            const copy = Buffer.from(bytes);
            known = { ...parseTableMap(copy, checksumBytes), bytes: copy };
            this.rawTableMaps.set(tableId, known);
          }
          // floe's parse is the only one: zongji steps over the column metadata of a table read raw
          this.loggedNames.set(tableId, known.columnNames?.length === known.types.length ? known.columnNames : undefined);
        } else {
          this.loggedNames.set(tableId, columnNames?.length === columnCount ? columnNames : undefined);
        }
        this.advancePosition(e);
        return undefined;
      }
      case 'writerows':
      case 'updaterows':
      case 'deleterows':
        this.rows(e, name === 'writerows' ? 'insert' : name === 'updaterows' ? 'update' : 'delete');
        return undefined;
      case 'previousgtids': {
        // MySQL: the GTID state before this file; exact at a file start (seeds an unknown state)
        this.advancePosition(e);
        const text = (e as PreviousGtidsEvent).gtidSet;
        if (this.gtids === undefined && this.txn === undefined) this.gtids = mysqlGtids(text);
        return undefined;
      }
      case 'mariadbgtidlist': {
        this.advancePosition(e);
        if (this.gtids === undefined && this.txn === undefined) {
          let pos = MariaDbGtidPosition.EMPTY;
          for (const g of (e as MariadbGtidListEvent).gtids) pos = pos.advance(`${g.domainId}-${g.serverId}-${g.seqNo}`);
          this.gtids = { flavor: 'mariadb', position: pos };
        }
        return undefined;
      }
      case 'heartbeat': {
        const h = e as HeartbeatEvent;
        if (this.txn !== undefined) return undefined;
        // a heartbeat names the current file and the position the dump thread reached
        if (h.binlogName && h.binlogName !== this.file && e.nextPosition > 0) this.file = h.binlogName;
        this.advancePosition(e);
        const offset = this.offset;
        return offset ? [{ kind: 'progress', offset }] : undefined;
      }
      default:
        this.advancePosition(e);
        return undefined;
    }
  }

  private advancePosition(e: AnyBinlogEvent): void {
    if (this.txn === undefined && e.nextPosition > 0) this.position = e.nextPosition;
  }

  private open(gtid: string | undefined, explicit: boolean): AssembledEvent[] | undefined {
    // A new group implies the previous one ended (a DDL group whose statement was not captured
    // ends without a commit marker of its own).
    this.txn = { gtid, explicit, changes: [] };
    return undefined;
  }

  private query(q: QueryEvent): AssembledEvent[] | undefined {
    const sql = q.query.trim();
    const head = sql.slice(0, 20).toUpperCase();
    if (head === 'BEGIN') {
      if (this.txn) this.txn.explicit = true;
      else this.txn = { explicit: true, changes: [] };
      return undefined;
    }
    if (head === 'COMMIT' || head === 'ROLLBACK') {
      // ROLLBACK is logged only when non-transactional tables were changed inside the
      // transaction: those row changes happened and are delivered
      return this.commit(q);
    }
    if (/^XA\s+(COMMIT|ROLLBACK)/i.test(sql)) return this.commit(q);
    if (CONTROL.test(sql)) return undefined; // SAVEPOINT, XA START/END…: inside a group
    // anything else is a statement logged as text: DDL (in ROW format DML is never logged this way)
    const txn = this.txn;
    // A DDL ends its group unless the group was opened explicitly (BEGIN / MariaDB non-standalone
    // GTID), as for CREATE TABLE … SELECT, whose rows and commit follow.
    const closes = !txn || !txn.explicit;
    const out: AssembledEvent[] = [];
    if (closes) {
      const done = this.commit(q);
      // a (non-explicit) group with row changes before the DDL: those changes come first
      for (const x of done ?? []) if (x.kind === 'transaction') out.push(x);
    }
    if (this.options.isCapturedDdl(q.schema, sql)) {
      // (inside an explicit group — CREATE TABLE … SELECT — a rows event kept as bytes counts as one)
      const position = this.eventPosition(q.nextPosition, txn?.gtid, closes ? 0 : (txn?.changes.length ?? 0));
      out.push({
        kind: 'ddl',
        database: q.schema,
        statement: sql,
        ...(txn?.gtid ? { gtid: txn.gtid } : {}),
        position,
        // resume after the DDL when it ends its group; otherwise at the start of the group, so the
        // DDL is seen again after a restart there (at-least-once for DDL inside a transaction)
        offset: this.offsetHere(),
        timestampMs: q.timestamp,
      } satisfies DdlEvent);
    } else if (closes && out.length === 0) {
      const offset = this.offset;
      if (offset) out.push({ kind: 'progress', offset });
    }
    return out.length ? out : undefined;
  }

  private rows(e: AnyBinlogEvent, op: ChangeOp): void {
    const ev = e as AnyBinlogEvent & { tableId: number; tableMap: Record<number, TableMapEntry>; rows: unknown[]; flags?: number; useChecksum?: boolean; _zongji?: unknown };
    const tm = ev.tableMap?.[ev.tableId];
    if (!tm || !ev.rows) return;
    let ref = this.tableRefs.get(ev.tableId);
    if (!ref || ref.database !== tm.parentSchema || ref.table !== tm.tableName) {
      ref = { database: tm.parentSchema, table: tm.tableName };
      this.tableRefs.set(ev.tableId, ref);
    }
    if (!this.options.isCaptured(ref)) return;
    this.tableMaps.set(`${ref.database}.${ref.table}`, tm);
    if (!this.txn) this.txn = { explicit: true, changes: [] };
    const changes = this.txn.changes;
    // Rows-event flag NO_FOREIGN_KEY_CHECKS_F (0x0002, MySQL and MariaDB log_event.h): the server
    // did not enforce foreign keys — and so cascaded nothing — for these rows
    const fk: { noForeignKeyChecks?: true; logged?: readonly string[] } = ((ev.flags ?? 0) & 0x0002) !== 0 ? { noForeignKeyChecks: true as const } : {};
    // the logged layout, so a decoder can check it against its mapping (after a DDL)
    const names = this.loggedNames.get(ev.tableId);
    if (names) fk.logged = names;
    // one object per row without spreading (hot path: every row change passes here)
    const noForeignKeyChecks = fk.noForeignKeyChecks;
    const logged = fk.logged;
    const push = (before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined) => {
      const change: { -readonly [K in keyof RawChange]: RawChange[K] } = { table: ref, op };
      if (before !== undefined) change.before = before;
      if (after !== undefined) change.after = after;
      if (noForeignKeyChecks) change.noForeignKeyChecks = true;
      if (logged) change.logged = logged;
      changes.push(change);
    };
    const bytes = (e as RawEventBytes).floeRows;
    if (bytes) {
      const checksumBytes = ev.useChecksum ? 4 : 0;
      const map = this.tableMapFor(ev.tableId, ref);
      const kept: { -readonly [K in keyof RawRowsEvent]: RawRowsEvent[K] } = { table: ref, op, event: bytes, checksumBytes, map };
      if (noForeignKeyChecks) kept.noForeignKeyChecks = true;
      if (logged) kept.logged = logged;
      changes.push(kept);
    } else if (op === 'update') {
      for (const r of ev.rows as { before: Record<string, unknown>; after: Record<string, unknown> }[]) push(r.before, r.after);
    } else if (op === 'insert') {
      for (const r of ev.rows as Record<string, unknown>[]) push(undefined, r);
    } else {
      for (const r of ev.rows as Record<string, unknown>[]) push(r, undefined);
    }
  }

  /** The parsed TABLE_MAP of a rows event kept as bytes (zongji delivered the TABLE_MAP before it). */
  private tableMapFor(tableId: number, ref: TableRef): TableMapEvent {
    const map = this.rawTableMaps.get(tableId);
    if (!map) {
      throw new FloeError(
        'source.mysql.binlog',
        'internal',
        `a rows event of ${ref.database}.${ref.table} (table id ${tableId}) came without the TABLE_MAP event before it; expected zongji to deliver every TABLE_MAP of a captured table — report this as a bug`,
      );
    }
    return map;
  }

  private commit(e: AnyBinlogEvent): AssembledEvent[] | undefined {
    const txn = this.txn ?? { explicit: false, changes: [] };
    this.txn = undefined;
    if (e.nextPosition > 0) this.position = e.nextPosition;
    if (this.gtids && txn.gtid) this.gtids = advanceGtids(this.gtids, txn.gtid);
    const offset = this.offset;
    if (txn.changes.length === 0) return offset ? [{ kind: 'progress', offset }] : undefined;
    const file = this.file ?? '';
    const commitPosition = this.position ?? 0;
    const { serverUuid, serverId } = this.options.identity;
    const base = { file, commitPosition, ...(txn.gtid ? { gtid: txn.gtid } : {}), ...(serverUuid ? { serverUuid } : {}), ...(serverId !== undefined ? { serverId } : {}) };
    const t: RawTransaction = {
      kind: 'transaction',
      ...(txn.gtid ? { gtid: txn.gtid } : {}),
      position: { ...base, eventIndex: txn.changes.length },
      offset: offset ?? this.offsetAt(file, commitPosition, this.gtids),
      timestampMs: e.timestamp,
      raw: txn.changes,
    };
    return [t];
  }

  private eventPosition(nextPosition: number, gtid: string | undefined, index: number): EventPosition {
    const { serverUuid, serverId } = this.options.identity;
    return {
      file: this.file ?? '',
      commitPosition: nextPosition > 0 ? nextPosition : (this.position ?? 0),
      ...(gtid ? { gtid } : {}),
      eventIndex: index,
      ...(serverUuid ? { serverUuid } : {}),
      ...(serverId !== undefined ? { serverId } : {}),
    };
  }

  private offsetHere(): BinlogOffset {
    return this.offsetAt(this.file ?? '', this.position ?? 0, this.gtids);
  }

  private offsetAt(file: string, position: number, gtids: GtidState | undefined): BinlogOffset {
    const { serverUuid, serverId } = this.options.identity;
    return {
      file,
      position,
      ...(gtids ? { gtids } : {}),
      ...(serverUuid ? { serverUuid } : {}),
      ...(serverId !== undefined ? { serverId } : {}),
    };
  }
}

/** Two events equal but for their common headers and checksums (timestamps, positions differ between copies). */
function samePayload(a: Buffer, b: Buffer, checksumBytes: number): boolean {
  return a.length === b.length && a.compare(b, COMMON_HEADER_BYTES, b.length - checksumBytes, COMMON_HEADER_BYTES, a.length - checksumBytes) === 0;
}

/** Whether the statement touches one of `databases` (default database or a qualified name). */
export function ddlConcerns(databases: ReadonlySet<string>): (database: string, statement: string) => boolean {
  const lowered = new Set([...databases].map((d) => d.toLowerCase()));
  return (database, statement) => {
    if (lowered.has(database.toLowerCase())) return true;
    const s = statement.toLowerCase();
    for (const d of lowered) {
      if (s.includes(`\`${d}\`.`) || s.includes(`${d}.`) || new RegExp(`\\b(database|schema)\\s+(if\\s+(not\\s+)?exists\\s+)?\`?${d.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\`?`).test(s)) return true;
    }
    return false;
  };
}


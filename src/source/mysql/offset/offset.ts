/**
 * Binlog offsets: where a reader stands in a server's binary log, and where a single row change sits.
 *
 * - `BinlogOffset` is a point BETWEEN transactions: "everything before here is done". It is what a
 *   watermark (`SHOW BINARY LOG STATUS` / `SHOW MASTER STATUS`) returns, what a checkpoint persists
 *   (`floe.source-offset` in Iceberg snapshot summaries) and where a reader resumes. It carries the
 *   binlog file/position and, when known, the GTID state at that point (a MySQL GTID set or a
 *   MariaDB GTID position) and the identity of the server whose binlog the file/position refer to.
 * - `EventPosition` locates one row change: the file and commit position of its transaction (the
 *   offset to resume from after it), the transaction's GTID and the change's index inside it. floe
 *   delivers whole transactions, so "resume after the last complete transaction" is exactly the
 *   `BinlogOffset` made from the last transaction's `EventPosition`.
 *
 * Order (as Flink CDC's `BinlogOffset.compareTo`, made exact):
 * - On one server's binlog, file (by sequence number) then position is the physical order of the
 *   log and a total order. It is used whenever both sides are on the same server (same server UUID /
 *   server id, or identity unknown on one side).
 * - Otherwise GTID state decides (after a failover the file names of another server mean nothing):
 *   inclusion of MySQL GTID sets, per-domain sequence numbers for MariaDB. That order is partial;
 *   `compareOffsets` throws for incomparable offsets rather than guess.
 *
 * `isAfter(event, watermark)` asks "was this change committed after the watermark was taken?",
 * which the DBLog backfill and hand-over rely on. A watermark always sits on a transaction boundary
 * (the server writes a transaction's events to the binlog as one unit), so comparing the
 * transaction's commit position with the watermark's position is exact.
 */
import { FloeError } from '../../../util/errors.js';
import { parseJson, stringifyJson } from '../../../util/json.js';
import { MySqlGtidSet, compareGtidSets } from './gtid-set.js';
import { MariaDbGtidPosition, compareMariaDbPositions, parseMariaDbGtid } from './gtid-mariadb.js';

export type GtidState =
  | { readonly flavor: 'mysql'; readonly set: MySqlGtidSet }
  | { readonly flavor: 'mariadb'; readonly position: MariaDbGtidPosition };

export interface ServerIdentity {
  /** MySQL `@@server_uuid` (MariaDB has none). */
  readonly serverUuid?: string;
  /** `@@server_id`. */
  readonly serverId?: number;
}

export interface BinlogOffset extends ServerIdentity {
  /** Binlog file name, e.g. "binlog.000042". */
  readonly file?: string;
  /** Byte position in `file` of the next event to read (a transaction boundary). */
  readonly position?: number;
  /** Transactions executed up to this point. */
  readonly gtids?: GtidState;
}

export interface EventPosition extends ServerIdentity {
  /** Binlog file of the transaction's commit event. */
  readonly file: string;
  /** Position just after the transaction's commit event: the offset to resume from after it. */
  readonly commitPosition: number;
  /** GTID of the transaction ("uuid:n" on MySQL, "d-s-n" on MariaDB); absent for anonymous ones. */
  readonly gtid?: string;
  /** 0-based index of the change within its transaction (row changes counted in binlog order). */
  readonly eventIndex: number;
}

const SUBSYSTEM = 'source.mysql.offset';

function incomparable(a: string, b: string, why: string): never {
  throw new FloeError(SUBSYSTEM, 'invalid-argument', `cannot order binlog offsets ${a} and ${b}: ${why}`);
}

// ---------------------------------------------------------------------------------------------
// construction helpers

export function mysqlGtids(text: string): GtidState {
  return { flavor: 'mysql', set: MySqlGtidSet.parse(text) };
}

export function mariadbGtids(text: string): GtidState {
  return { flavor: 'mariadb', position: MariaDbGtidPosition.parse(text) };
}

export function gtidStateText(g: GtidState): string {
  return g.flavor === 'mysql' ? g.set.toString() : g.position.toString();
}

/** The GTID state after one more transaction. */
export function advanceGtids(g: GtidState, gtid: string): GtidState {
  return g.flavor === 'mysql' ? { flavor: 'mysql', set: g.set.add(gtid) } : { flavor: 'mariadb', position: g.position.advance(gtid) };
}

/** Whether transaction `gtid` is included in the GTID state. */
function gtidsInclude(g: GtidState, gtid: string): boolean {
  return g.flavor === 'mysql' ? g.set.contains(gtid) : g.position.covers(gtid);
}

// ---------------------------------------------------------------------------------------------
// order

/** Binlog files "<base>.<n>": same base, compared by the number. undefined when not comparable. */
export function compareBinlogFiles(a: string, b: string): number | undefined {
  if (a === b) return 0;
  const ia = a.lastIndexOf('.');
  const ib = b.lastIndexOf('.');
  if (ia < 0 || ib < 0 || a.slice(0, ia) !== b.slice(0, ib)) return undefined;
  const na = a.slice(ia + 1);
  const nb = b.slice(ib + 1);
  if (!/^\d+$/.test(na) || !/^\d+$/.test(nb)) return undefined;
  const x = BigInt(na);
  const y = BigInt(nb);
  return x < y ? -1 : x > y ? 1 : 0;
}

/** Same server's binlog? Unknown identity on either side counts as "same" (the caller vouched). */
export function sameServer(a: ServerIdentity, b: ServerIdentity): boolean {
  if (a.serverUuid && b.serverUuid) return a.serverUuid.toLowerCase() === b.serverUuid.toLowerCase();
  if (a.serverId !== undefined && b.serverId !== undefined) return a.serverId === b.serverId;
  return true;
}

function comparePhysical(fileA: string, posA: number, fileB: string, posB: number): number | undefined {
  const f = compareBinlogFiles(fileA, fileB);
  if (f === undefined) return undefined;
  if (f !== 0) return f;
  return posA < posB ? -1 : posA > posB ? 1 : 0;
}

function compareGtidStates(a: GtidState, b: GtidState): number | undefined {
  if (a.flavor !== b.flavor) return undefined;
  if (a.flavor === 'mysql') return compareGtidSets(a.set, (b as typeof a).set);
  return compareMariaDbPositions(a.position, (b as Extract<GtidState, { flavor: 'mariadb' }>).position);
}

/**
 * Total preorder on offsets of one server (file, then position); GTID inclusion across servers.
 * Throws a FloeError for offsets that cannot be ordered (different servers and no comparable GTIDs).
 */
export function compareOffsets(a: BinlogOffset, b: BinlogOffset): number {
  if (a.file !== undefined && a.position !== undefined && b.file !== undefined && b.position !== undefined && sameServer(a, b)) {
    const c = comparePhysical(a.file, a.position, b.file, b.position);
    if (c !== undefined) return c;
  }
  if (a.gtids && b.gtids) {
    const c = compareGtidStates(a.gtids, b.gtids);
    if (c !== undefined) return c;
    return incomparable(formatOffset(a), formatOffset(b), 'their GTID states are not contained in one another');
  }
  return incomparable(formatOffset(a), formatOffset(b), 'they are from different servers (or binlog bases) and do not both carry GTIDs');
}

/**
 * Was the change at `event` committed after `watermark`? Same server: its transaction's commit
 * position is past the watermark position (the watermark is a transaction boundary, so a
 * transaction is entirely before or entirely after it). Otherwise: its GTID is not in the
 * watermark's GTID state. Throws when neither applies.
 */
export function isAfter(event: EventPosition, watermark: BinlogOffset): boolean {
  if (watermark.file !== undefined && watermark.position !== undefined && sameServer(event, watermark)) {
    const c = comparePhysical(event.file, event.commitPosition, watermark.file, watermark.position);
    if (c !== undefined) return c > 0;
  }
  if (watermark.gtids && event.gtid !== undefined) {
    if (watermark.gtids.flavor === 'mariadb') parseMariaDbGtid(event.gtid); // validates the flavor
    return !gtidsInclude(watermark.gtids, event.gtid);
  }
  return incomparable(formatEventPosition(event), formatOffset(watermark), 'the event is from another server and has no GTID to compare');
}

/** The smallest of several offsets (the hand-over starts at the lowest chunk high watermark). */
export function minOffset(offsets: readonly BinlogOffset[]): BinlogOffset {
  if (offsets.length === 0) throw new FloeError(SUBSYSTEM, 'invalid-argument', 'minOffset: expected at least one offset, found none');
  return offsets.reduce((m, o) => (compareOffsets(o, m) < 0 ? o : m));
}

export function maxOffset(offsets: readonly BinlogOffset[]): BinlogOffset {
  if (offsets.length === 0) throw new FloeError(SUBSYSTEM, 'invalid-argument', 'maxOffset: expected at least one offset, found none');
  return offsets.reduce((m, o) => (compareOffsets(o, m) > 0 ? o : m));
}

// ---------------------------------------------------------------------------------------------
// serialization: compact JSON text, stable key order, only strings/numbers (JSON-safe everywhere)

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/**
 * `{"file":"binlog.000003","pos":1234,"flavor":"mysql","gtids":"uuid:1-5","serverUuid":"…","serverId":1}`
 * (absent fields omitted). This is the `floe.source-offset` value.
 */
export function serializeOffset(o: BinlogOffset): string {
  return stringifyJson(
    withoutUndefined({
      file: o.file,
      pos: o.position,
      flavor: o.gtids?.flavor,
      gtids: o.gtids ? gtidStateText(o.gtids) : undefined,
      serverUuid: o.serverUuid,
      serverId: o.serverId,
    }),
  );
}

function bad(text: string, why: string): never {
  throw new FloeError(SUBSYSTEM, 'invalid-data', `expected a serialized binlog offset, found ${JSON.stringify(text.slice(0, 300))}: ${why}`);
}

function parseIdentity(text: string, o: Record<string, unknown>): ServerIdentity {
  const serverUuid = o.serverUuid;
  const serverId = o.serverId;
  if (serverUuid !== undefined && typeof serverUuid !== 'string') bad(text, 'serverUuid must be a string');
  if (serverId !== undefined && !(typeof serverId === 'number' && Number.isSafeInteger(serverId) && serverId >= 0)) bad(text, 'serverId must be a non-negative integer');
  return withoutUndefined({ serverUuid: serverUuid as string | undefined, serverId: serverId as number | undefined });
}

function parsePos(text: string, v: unknown, what: string): number {
  if (!(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)) bad(text, `${what} must be a non-negative integer`);
  return v;
}

export function parseOffset(text: string): BinlogOffset {
  let o: unknown;
  try {
    o = parseJson(text);
  } catch (e) {
    bad(text, 'not JSON');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) bad(text, 'not a JSON object');
  const r = o as Record<string, unknown>;
  for (const k of Object.keys(r)) if (!['file', 'pos', 'flavor', 'gtids', 'serverUuid', 'serverId'].includes(k)) bad(text, `unknown field ${k}`);
  if ((r.file === undefined) !== (r.pos === undefined)) bad(text, 'file and pos go together');
  if (r.file !== undefined && typeof r.file !== 'string') bad(text, 'file must be a string');
  let gtids: GtidState | undefined;
  if (r.gtids !== undefined || r.flavor !== undefined) {
    if (typeof r.gtids !== 'string') bad(text, 'gtids must be a string');
    if (r.flavor === 'mysql') gtids = mysqlGtids(r.gtids);
    else if (r.flavor === 'mariadb') gtids = mariadbGtids(r.gtids);
    else bad(text, 'flavor must be "mysql" or "mariadb"');
  }
  if (r.file === undefined && !gtids) bad(text, 'neither file/pos nor gtids');
  return withoutUndefined({
    file: r.file as string | undefined,
    position: r.pos === undefined ? undefined : parsePos(text, r.pos, 'pos'),
    gtids,
    ...parseIdentity(text, r),
  });
}

/** Human-readable form for messages and logs: "binlog.000003:1234 gtids=uuid:1-5". */
export function formatOffset(o: BinlogOffset): string {
  const parts: string[] = [];
  if (o.file !== undefined) parts.push(`${o.file}:${o.position}`);
  if (o.gtids) parts.push(`${o.gtids.flavor === 'mysql' ? 'gtid_executed' : 'gtid_pos'}=${JSON.stringify(gtidStateText(o.gtids))}`);
  if (o.serverUuid) parts.push(`server_uuid=${o.serverUuid}`);
  else if (o.serverId !== undefined) parts.push(`server_id=${o.serverId}`);
  return parts.join(' ') || '(empty offset)';
}

export function formatEventPosition(p: EventPosition): string {
  return `${p.file}:${p.commitPosition}#${p.eventIndex}${p.gtid ? ` gtid=${p.gtid}` : ''}`;
}

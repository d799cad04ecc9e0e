/**
 * The event bytes floe's own row decoder (row-decoder.ts) needs, taken from zongji's stream: zongji
 * stays the connection (dump command, MariaDB capabilities, GTID and position bookkeeping,
 * checksums, heartbeats) but no longer decodes the rows of the tables floe decodes itself.
 *
 * zongji keeps no event bytes and decodes rows inside its event constructors, so this module patches
 * prototype methods of zongji's event classes (loaded by file URL: its package exports only its
 * entry point; Node gives them the same module instances the entry uses):
 * - `BinlogEvent.prototype._readTableId`, which every TABLE_MAP and rows event calls first, with the
 *   parser right after the 19-byte common header: the event's bytes are `buffer[offset - 19,
 *   packetEnd)`, checksum included. A TABLE_MAP keeps them as `floeTableMap`; a rows event keeps a
 *   copy as `floeRows` when its zongji instance asks for it (`setRawRows`, per session: the raw-decode
 *   benchmark's sessions leave zongji decoding as it always did).
 * - `_fetchOneRow` of the rows events: for an event that kept `floeRows`, it skips the row images
 *   (the parser jumps to the event end) instead of decoding them.
 * - `TableMap.prototype._readColumnMetadata` and `_readOptionalMetadata`: for a table whose rows are
 *   kept raw, zongji steps over the column metadata, which floe parses from `floeTableMap`
 *   (table-map.ts) — one parse of each TABLE_MAP, and only floe's crosses to the reader's thread.
 * - per instance, `_fetchTableInfo`: see `setRawRows` (the information_schema description of a
 *   TABLE_MAP without column metadata).
 * - per binlog command class (made at each start, announced by 'ready'), `binlogData`: a
 *   PARTIAL_UPDATE_ROWS_EVENT (type 39, binlog_row_value_options=PARTIAL_JSON) is read as the
 *   UPDATE_ROWS_EVENT (31) whose layout it shares up to the row images, so zongji keeps its bytes
 *   for floe like any rows event (they keep type 39: row-decoder.ts reads its after images with
 *   partial-update-rows.ts). zongji itself has no decoder for it: it would skip the event with a
 *   one-time error, and the update would be lost.
 *
 * These are zongji's private methods: package.json pins zongji to the exact version they were read
 * in, and test/source/mysql/binlog/zongji/zongji-raw-events.test.ts fingerprints each of them (and
 * those zongji-payload-events.ts wraps), so an upgrade fails there, naming what to re-read here.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface ZongjiParser {
  _buffer: Buffer;
  _offset: number;
  _packetEnd: number;
}

/** What the patched events carry. */
export interface RawEventBytes {
  /** TABLE_MAP of a session with raw rows: the whole event (a view of the packet: copy it to keep it). */
  floeTableMap?: Buffer;
  /** With `floeTableMap`: 4 when the events end with a CRC32 checksum, else 0. */
  floeChecksumBytes?: number;
  /** Rows event of a table floe decodes: a copy of the whole event; zongji left `rows` undecoded. */
  floeRows?: Buffer;
}

/** zongji's table map entry for a rows event's table id, as zongji keeps it. */
type ZongjiInstance = { tableMap: Record<string, unknown>; useChecksum: boolean; connection?: { config?: unknown } | null };

/** The zongji instances with raw rows, by their `tableMap` object (all a TABLE_MAP event can reach). */
const rawSessions = new WeakMap<object, ZongjiInstance>();

/** Set on a zongji instance: whether the rows of this table map entry are kept raw for floe. */
const RAW_ROWS = Symbol('floe.rawRows');
type RawRowsPredicate = (entry: { parentSchema: string; tableName: string }) => boolean;

const ZONGJI_LIB = join(dirname(createRequire(import.meta.url).resolve('@vlasky/zongji')), 'lib');
const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(join(ZONGJI_LIB, file)).href)) as T;

type RowsEventClass = { prototype: { _fetchOneRow(parser: ZongjiParser): unknown } };
type EventProto = { _readTableId(parser: ZongjiParser): void };
type TableMapProto = {
  _readColumnMetadata(parser: ZongjiParser): void;
  _readOptionalMetadata(parser: ZongjiParser, zongji: unknown): void;
};

const { BinlogEvent, TableMap } = await load<{ BinlogEvent: { prototype: EventProto }; TableMap: (new (...a: never[]) => unknown) & { prototype: TableMapProto } }>('binlog_event.js');
const rowsClasses = await load<{ WriteRows: RowsEventClass; UpdateRows: RowsEventClass }>('rows_event.js');

const PARTIAL_UPDATE_ROWS_EVENT = 39;
const UPDATE_ROWS_EVENT = 31;
/** Set while zongji handles a PARTIAL_UPDATE_ROWS_EVENT read as an UPDATE_ROWS_EVENT (synchronous). */
let partialUpdate = false;

/** mysql2's packet as zongji's binlog command receives it. */
interface BinlogPacketIn {
  buffer: Buffer;
  offset: number;
}
type BinlogData = (this: unknown, packet: BinlogPacketIn, connection: unknown) => unknown;

/** Reads type 39 as type 31 in the binlog command class of one start (see the module header). */
function readPartialUpdatesAsUpdates(binlogClass: { prototype: { binlogData: BinlogData } } | undefined): void {
  if (!binlogClass) return;
  const data = binlogClass.prototype.binlogData;
  binlogClass.prototype.binlogData = function (packet, connection) {
    // an event packet: the OK byte, then the common header: timestamp (4), type (1), … (binlog.js)
    const at = packet.offset + 5;
    if (packet.buffer[packet.offset] !== 0x00 || packet.buffer[at] !== PARTIAL_UPDATE_ROWS_EVENT) return data.call(this, packet, connection);
    packet.buffer[at] = UPDATE_ROWS_EVENT;
    partialUpdate = true;
    try {
      return data.call(this, packet, connection);
    } finally {
      partialUpdate = false;
    }
  };
}

const readTableId = BinlogEvent.prototype._readTableId;
BinlogEvent.prototype._readTableId = function (this: RawEventBytes & { _zongji?: ZongjiInstance; tableId?: number }, parser: ZongjiParser) {
  const start = parser._offset - 19;
  readTableId.call(this, parser);
  if (this instanceof TableMap) {
    // the TABLE_MAP constructor sets `tableMap` (its zongji's) before reading the table id
    const owner = rawSessions.get((this as { tableMap?: object }).tableMap ?? {});
    if (owner) {
      this.floeTableMap = parser._buffer.subarray(start, parser._packetEnd);
      this.floeChecksumBytes = owner.useChecksum ? 4 : 0;
    }
    return;
  }
  const zongji = this._zongji as (ZongjiInstance & { [RAW_ROWS]?: RawRowsPredicate }) | undefined;
  const wants = zongji?.[RAW_ROWS];
  if (wants) {
    const entry = zongji.tableMap[String(this.tableId)] as { parentSchema: string; tableName: string } | undefined;
    // a copy: the event is decoded when the consumer takes its transaction, after later packets;
    // one that owns its whole ArrayBuffer (not Buffer's shared pool), so a worker can move it as is.
    // A partial update is never left to zongji, which would misread its after images.
    if (entry && (wants(entry) || partialUpdate)) {
      this.floeRows = ownedCopy(parser._buffer.subarray(start, parser._packetEnd));
      if (partialUpdate) this.floeRows[4] = PARTIAL_UPDATE_ROWS_EVENT;
    }
  }
};
function ownedCopy(bytes: Uint8Array): Buffer {
  const out = new Uint8Array(bytes.length);
  out.set(bytes);
  return Buffer.from(out.buffer, 0, out.length);
}

/** A TABLE_MAP event as zongji's constructor fills it. */
type TableMapThis = { tableMap?: object; schemaName: string; tableName: string; columnsMetadata?: unknown[] };

/** Whether a TABLE_MAP is one of a table whose rows its session keeps raw (floe reads it from its bytes). */
function readByFloe(event: TableMapThis): boolean {
  const owner = rawSessions.get(event.tableMap ?? {}) as (ZongjiInstance & { [RAW_ROWS]?: RawRowsPredicate }) | undefined;
  return owner?.[RAW_ROWS]?.({ parentSchema: event.schemaName, tableName: event.tableName }) === true;
}

// The column metadata of such a TABLE_MAP (per-column and optional: names, charsets, labels) is
// floe's to parse (table-map.ts), and zongji decodes none of its rows: zongji steps over it. Without
// column names zongji takes its information_schema path, which `setRawRows` answers at once.
const readColumnMetadata = TableMap.prototype._readColumnMetadata;
TableMap.prototype._readColumnMetadata = function (this: TableMapThis, parser: ZongjiParser) {
  if (!readByFloe(this)) return readColumnMetadata.call(this, parser);
  this.columnsMetadata = [];
  parser._offset = parser._packetEnd;
};
const readOptionalMetadata = TableMap.prototype._readOptionalMetadata;
TableMap.prototype._readOptionalMetadata = function (this: TableMapThis, parser: ZongjiParser, zongji: unknown) {
  if (!readByFloe(this)) readOptionalMetadata.call(this, parser, zongji);
};

/** zongji reads the row images in `_fetchOneRow`, called until the event end: skip to it instead. */
const skipWhenRaw = (fetch: (parser: ZongjiParser) => unknown) =>
  function (this: RawEventBytes, parser: ZongjiParser): unknown {
    if (this.floeRows === undefined) return fetch.call(this, parser);
    parser._offset = parser._packetEnd;
    return undefined;
  };
const rowsEventProto = Object.getPrototypeOf(rowsClasses.WriteRows.prototype) as RowsEventClass['prototype'];
rowsEventProto._fetchOneRow = skipWhenRaw(rowsEventProto._fetchOneRow);
rowsClasses.UpdateRows.prototype._fetchOneRow = skipWhenRaw(rowsClasses.UpdateRows.prototype._fetchOneRow);

interface FetchingZongji {
  tableMap: Record<string, { parentSchema: string; tableName: string; columnSchemas: Record<string, unknown>[] } | undefined>;
  _fetchTableInfo(event: { tableId: number; columnCount: number; schemaName: string; tableName: string }, next: () => void): void;
}

/**
 * From now on `zongji` keeps the rows events of the tables `wants` accepts raw (see the module header).
 *
 * zongji describes the table of a TABLE_MAP without column names (binlog_row_metadata=MINIMAL,
 * MySQL 8's default; and every TABLE_MAP of such a table here, whose metadata zongji steps over) from
 * information_schema, with the dump connection paused. floe's decoder reads their rows with the
 * definition it keeps for the event's position (binlog-decoding.ts), never with zongji's description,
 * so that look-up is answered without a query: an entry naming the table, with one nameless column
 * per logged column. (A query would also describe the table as it stands when the event is read,
 * after any DDL run since, and zongji stops the stream when that has fewer columns than the event.)
 * The answer comes on a later turn of the event loop, as a query's would: the dump connection's
 * flow (dump-flow.ts) releases its hold on it then, outside zongji's handling of the event.
 */
export function setRawRows(zongji: unknown, wants: RawRowsPredicate): void {
  (zongji as { [RAW_ROWS]?: RawRowsPredicate })[RAW_ROWS] = wants;
  // zongji creates its tableMap object once, in its constructor
  rawSessions.set((zongji as ZongjiInstance).tableMap, zongji as ZongjiInstance);
  const z = zongji as FetchingZongji & { BinlogClass?: { prototype: { binlogData: BinlogData } }; on(event: 'ready', listener: () => void): unknown };
  z.on('ready', () => readPartialUpdatesAsUpdates(z.BinlogClass));
  const fetch = z._fetchTableInfo;
  z._fetchTableInfo = function (this: FetchingZongji, event, next) {
    if (!wants({ parentSchema: event.schemaName, tableName: event.tableName })) return fetch.call(this, event, next);
    const columnSchemas = Array.from({ length: event.columnCount }, (_, i) => ({ COLUMN_NAME: `@${i + 1}`, COLLATION_NAME: null, CHARACTER_SET_NAME: null, COLUMN_COMMENT: '', COLUMN_TYPE: '' }));
    this.tableMap[String(event.tableId)] = { parentSchema: event.schemaName, tableName: event.tableName, columnSchemas };
    setImmediate(next);
  };
}

/**
 * What crosses the thread boundary between the binlog worker (binlog-worker.ts) and the reader
 * (worker-session.ts): assembled batches as plain data. Offsets travel as plain objects with their
 * GTID state as its text (`WireOffset`: the states are classes, which a clone would flatten),
 * rows-event bytes as exact-size byte arrays moved with the message (transferred, not copied),
 * each TABLE_MAP once under a number (floe's parse of it), errors as their fields (a cloned Error keeps only its message: the reader classifies by
 * `code` and `errno`).
 */
import { FloeError, type ErrorKind, type Subsystem } from '../../../util/errors.js';
import { mariadbGtids, mysqlGtids, type BinlogOffset } from '../offset/offset.js';
import type { AssembledBatch } from './assembled-session.js';
import type { AssembledEvent, RawTransaction } from './raw-transactions.js';
import type { TableMapEvent } from './rows/table-map.js';
import type { TableRef } from '../events.js';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
type RawItem = RawTransaction['raw'][number];
type RawRows = Extract<RawItem, { event: Buffer }>;

interface WireRawRows extends Omit<RawRows, 'event' | 'map'> {
  readonly event: Uint8Array;
  readonly map: number;
}
type WireItem =
  | (Omit<RawTransaction, 'offset' | 'raw'> & { readonly offset: WireOffset; readonly raw: readonly WireRawRows[] })
  | (Omit<Extract<AssembledEvent, { kind: 'ddl' }>, 'offset'> & { readonly offset: WireOffset })
  | { readonly kind: 'progress'; readonly offset?: WireOffset };

export interface WireBatch {
  readonly items: readonly WireItem[];
  readonly inTransaction: boolean;
  readonly offset?: WireOffset;
}

/**
 * A BinlogOffset as plain data, its GTID state as the state's text under its flavor. Not floe's
 * offset text (offset.ts serializeOffset / parseOffset), which is checked field by field through a
 * JSON parser — work on the main thread for every transaction. This comes from floe's own worker,
 * so it needs no checking: only the GTID state is parsed.
 */
interface WireOffset {
  readonly file?: string;
  readonly position?: number;
  readonly mysql?: string;
  readonly mariadb?: string;
  readonly serverUuid?: string;
  readonly serverId?: number;
}

function toWireOffset(o: BinlogOffset): WireOffset {
  const w: { -readonly [K in keyof WireOffset]: WireOffset[K] } = {};
  if (o.file !== undefined) w.file = o.file;
  if (o.position !== undefined) w.position = o.position;
  if (o.gtids?.flavor === 'mysql') w.mysql = o.gtids.set.toString();
  else if (o.gtids?.flavor === 'mariadb') w.mariadb = o.gtids.position.toString();
  if (o.serverUuid !== undefined) w.serverUuid = o.serverUuid;
  if (o.serverId !== undefined) w.serverId = o.serverId;
  return w;
}

function fromWireOffset(w: WireOffset): BinlogOffset {
  const o: { -readonly [K in keyof BinlogOffset]: BinlogOffset[K] } = {};
  if (w.file !== undefined) o.file = w.file;
  if (w.position !== undefined) o.position = w.position;
  if (w.mysql !== undefined) o.gtids = mysqlGtids(w.mysql);
  else if (w.mariadb !== undefined) o.gtids = mariadbGtids(w.mariadb);
  if (w.serverUuid !== undefined) o.serverUuid = w.serverUuid;
  if (w.serverId !== undefined) o.serverId = w.serverId;
  return o;
}

/** A TABLE_MAP as sent once: floe's parse of it. */
export interface WireTableMap {
  readonly id: number;
  readonly map: TableMapEvent;
}

export type WorkerMessage =
  | { readonly type: 'batches'; readonly batches: readonly WireBatch[]; readonly maps: readonly WireTableMap[] }
  | { readonly type: 'error'; readonly error: Record<string, unknown> }
  | { readonly type: 'thread'; readonly threadId: number }
  | { readonly type: 'stopped' };

/** The worker's side: numbers TABLE_MAPs and collects what a message must carry and transfer. */
export class WireEncoder {
  private readonly ids = new WeakMap<TableMapEvent, number>();
  private nextId = 1;
  maps: WireTableMap[] = [];
  transfer: ArrayBuffer[] = [];

  batch(b: AssembledBatch): WireBatch {
    const items = b.items.map((item): WireItem => {
      if (item.kind === 'progress') return item.offset ? { kind: 'progress', offset: toWireOffset(item.offset) } : { kind: 'progress' };
      if (item.kind === 'ddl') return { ...item, offset: toWireOffset(item.offset) };
      return { ...item, offset: toWireOffset(item.offset), raw: item.raw.map((c) => this.rawRows(c)) };
    });
    return b.offset && !b.inTransaction ? { items, inTransaction: false, offset: toWireOffset(b.offset) } : { items, inTransaction: b.inTransaction };
  }

  private rawRows(c: RawItem): WireRawRows {
    if (!('event' in c)) throw new Error('binlog worker: expected every captured rows event kept as bytes (rawRows), found zongji row images');
    let id = this.ids.get(c.map);
    if (id === undefined) {
      id = this.nextId++;
      this.ids.set(c.map, id);
      const { bytes: _bytes, ...map } = c.map as TableMapEvent & { bytes?: Buffer };
      this.maps.push({ id, map });
    }
    // moved, not copied: the bytes own their whole buffer (zongji-raw-events.ts copies each event so)
    const event = c.event.byteOffset === 0 && c.event.byteLength === c.event.buffer.byteLength ? c.event : new Uint8Array(c.event);
    this.transfer.push(event.buffer as ArrayBuffer);
    const { event: _event, map: _map, ...rest } = c;
    return { ...rest, event, map: id };
  }

  /** Hands out and resets what was collected for one message. */
  take(): { maps: WireTableMap[]; transfer: ArrayBuffer[] } {
    const out = { maps: this.maps, transfer: this.transfer };
    this.maps = [];
    this.transfer = [];
    return out;
  }
}

/** The reader's side. */
export class WireDecoder {
  private readonly maps = new Map<number, Omit<WireTableMap, 'id'>>();

  /** One TableRef object per table, as on the session's own thread (a clone makes one per rows event). */
  private readonly tables = new Map<string, TableRef>();

  /**
   * The table's one TableRef: consumers look a table up once per run of changes sharing its object
   * (raw-transactions.ts, the router), which a new object per rows event defeats.
   */
  private tableRef(t: TableRef): TableRef {
    const key = `${t.database}\u0000${t.table}`;
    let ref = this.tables.get(key);
    if (!ref) this.tables.set(key, (ref = t));
    return ref;
  }

  addMaps(maps: readonly WireTableMap[]): void {
    for (const { id, ...m } of maps) this.maps.set(id, m);
  }

  batch(w: WireBatch): AssembledBatch {
    const items = w.items.map((item): AssembledEvent => {
      if (item.kind === 'progress') return item.offset === undefined ? { kind: 'progress' } : { kind: 'progress', offset: fromWireOffset(item.offset) };
      const offset = fromWireOffset(item.offset);
      if (item.kind === 'ddl') return { ...item, offset };
      return { ...item, offset, raw: item.raw.map((c) => this.rawRows(c)) };
    });
    return { items, inTransaction: w.inTransaction, offset: w.offset === undefined ? undefined : fromWireOffset(w.offset) };
  }

  private rawRows(c: WireRawRows): RawItem {
    const m = this.maps.get(c.map);
    if (!m) throw new Error(`binlog worker: a rows event names TABLE_MAP #${c.map}, which no message carried`);
    // a literal, not a spread of `c`: a cloned object is copied key by key, a literal has one shape
    const out: Mutable<RawRows> = {
      table: this.tableRef(c.table),
      op: c.op,
      event: Buffer.from(c.event.buffer, c.event.byteOffset, c.event.byteLength),
      checksumBytes: c.checksumBytes,
      map: m.map,
    };
    if (c.noForeignKeyChecks) out.noForeignKeyChecks = true;
    if (c.logged) out.logged = c.logged;
    return out;
  }
}

/** An error as its fields (message, name, code, errno, sqlState, fatal, …). */
export function errorFields(e: unknown): Record<string, unknown> {
  if (e instanceof FloeError) {
    return { floe: true, subsystem: e.subsystem, kind: e.kind, retryable: e.retryable, context: e.context, message: e.message.slice(e.subsystem.length + 2) };
  }
  if (!(e instanceof Error)) return { message: String(e) };
  const out: Record<string, unknown> = { message: e.message, name: e.name, stack: e.stack };
  for (const [k, v] of Object.entries(e)) if (v === null || ['string', 'number', 'boolean'].includes(typeof v)) out[k] = v;
  return out;
}

export function errorFromFields(f: Record<string, unknown>): Error {
  if (f.floe === true) {
    return new FloeError(f.subsystem as Subsystem, f.kind as ErrorKind, String(f.message), { retryable: f.retryable as boolean, context: f.context as Record<string, string> });
  }
  const { message, ...rest } = f;
  return Object.assign(new Error(String(message)), rest);
}

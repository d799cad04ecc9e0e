/**
 * The zongji internals floe patches or relies on, checked against the installed zongji so that an
 * upgrade that changes them fails here, by name, rather than as lost or misread rows in a run.
 * zongji-raw-events.ts overrides `_readTableId`, `_fetchOneRow` and the TABLE_MAP's metadata readers,
 * wraps the per-instance `_fetchTableInfo` and the binlog command's `binlogData`, reads and moves the parser's `_buffer`,
 * `_offset` and `_packetEnd`; zongji-payload-events.ts wraps `binlogData`; binlog-transactions.ts
 * reads a rows event's `_zongji`; dump-flow.ts and binlog-session.ts rely on how `start()` pauses
 * the dump connection around a TABLE_MAP's column look-up; bench/zongji-capture.ts overrides
 * `_readTableId` too, and replays rows events through zongji's own event classes.
 *
 * Each member is pinned by its parameter count and the sha256 of its source text (`fn.toString()`;
 * for a class, the whole class, whose constructor floe relies on). When one changes, re-read the
 * hook named beside it against the new zongji source (what it relies on is stated there), fix the
 * hook if needed, and only then record the new fingerprint here, with the new version in package.json.
 *
 * zongji is loaded natively (vitest leaves node_modules to Node) and unpatched: no module of this file
 * imports zongji-raw-events.ts, and each test file runs in its own process (pool 'forks').
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import ZongJi from '@vlasky/zongji';

/** The zongji version the fingerprints below were taken from (and the hooks written against). */
const FINGERPRINTED_VERSION = '0.9.0';

const ZONGJI_ROOT = dirname(createRequire(import.meta.url).resolve('@vlasky/zongji'));
const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '../../../../..');
const lib = async <T>(file: string): Promise<T> => (await import(pathToFileURL(join(ZONGJI_ROOT, 'lib', file)).href)) as T;

type Fn = (...args: never[]) => unknown;
type Proto = Record<string, Fn>;
type Klass = Fn & { prototype: Proto };

const { BinlogEvent, TableMap } = await lib<{ BinlogEvent: Klass; TableMap: Klass }>('binlog_event.js');
const { WriteRows, UpdateRows, DeleteRows } = await lib<{ WriteRows: Klass; UpdateRows: Klass; DeleteRows: Klass }>('rows_event.js');
const { Parser } = await lib<{ Parser: Klass }>('reader.js');
const { default: initBinlogClass } = await lib<{ default: (zongji: unknown) => Klass }>('sequence/binlog.js');
const RowsEvent = Object.getPrototypeOf(WriteRows) as Klass;
const Binlog = initBinlogClass({});
const zongjiProto = ZongJi.prototype as unknown as Proto;

function accessor(proto: object, name: string, kind: 'get' | 'set'): Fn {
  const fn = Object.getOwnPropertyDescriptor(proto, name)?.[kind];
  if (!fn) throw new Error(`expected zongji's Parser to have a ${kind}ter for ${name}, found none: re-read zongji-raw-events.ts against the installed zongji`);
  return fn as Fn;
}

interface Pinned {
  /** Where floe reaches it (the hook to re-read when it changes). */
  readonly usedBy: string;
  /** What floe relies on: what to re-check in the new source. */
  readonly reliesOn: string;
  readonly get: () => Fn;
  readonly params: number;
  readonly sha256: string;
}

const PINNED: Record<string, Pinned> = {
  'BinlogEvent.prototype._readTableId (lib/binlog_event.js)': {
    usedBy: 'zongji-raw-events.ts (overridden; the original called first), bench/zongji-capture.ts',
    reliesOn: 'every TABLE_MAP and rows event calls it first, with the parser right after the 19-byte common header; it sets this.tableId',
    get: () => BinlogEvent.prototype._readTableId!,
    params: 1,
    sha256: '8ebe26b854e88a63ee0aabd27f86d91a1487b0a8f2de6b1e482eaa954f8df01b',
  },
  'RowsEvent.prototype._fetchOneRow (lib/rows_event.js)': {
    usedBy: 'zongji-raw-events.ts (overridden by skipWhenRaw on the rows events’ base class)',
    reliesOn: 'the constructor calls it once per row until the parser reaches the event end: moving _offset to _packetEnd ends the loop with no row',
    get: () => RowsEvent.prototype._fetchOneRow!,
    params: 1,
    sha256: '78bd193c9ecbd47faf4cacc373d2db81bcf9efc451839e6f3fc60b38c3552b88',
  },
  'UpdateRows.prototype._fetchOneRow (lib/rows_event.js)': {
    usedBy: 'zongji-raw-events.ts (overridden by skipWhenRaw: UpdateRows has its own)',
    reliesOn: 'reads one {before, after} pair per call, called like the base class’s',
    get: () => UpdateRows.prototype._fetchOneRow!,
    params: 1,
    sha256: '71b3d683debcdea59a46269ceeeae64a499b4d9c93633907413cf310868f8f8c',
  },
  'class RowsEvent (lib/rows_event.js)': {
    usedBy: 'binlog-transactions.ts (reads _zongji), bench/zongji-capture.ts (zongjiReplay constructs its subclasses)',
    reliesOn:
      'the constructor (parser, options, zongji) sets this._zongji before _readTableId (the hook finds its session through it), reads zongji.tableMap and useChecksum, and fills this.rows with _fetchOneRow until _packetEnd less the checksum; the values read zongji.connection.config and zongji.emit only (the stand-in zongji of zongjiReplay)',
    get: () => RowsEvent,
    params: 3,
    sha256: 'ebf950fb37f923bd83f8511d75c4706a5284bec80a74f90451c2efd33480eed2',
  },
  'class WriteRows (lib/rows_event.js)': {
    usedBy: 'bench/zongji-capture.ts (zongjiReplay)',
    reliesOn: 'constructed as (parser, options, zongji), passed on to RowsEvent',
    get: () => WriteRows,
    params: 3,
    sha256: '869c496573878006e88c53908055e7f35200833a894f079e5d019b64c2ca1b43',
  },
  'class UpdateRows (lib/rows_event.js)': {
    usedBy: 'bench/zongji-capture.ts (zongjiReplay)',
    reliesOn: 'constructed as (parser, options, zongji), two images per row',
    get: () => UpdateRows,
    params: 3,
    sha256: '2ab6e8dd2dc96eae2646a4c82711cacea35e4675beb78c82a2bcbfc5792d8ae6',
  },
  'class DeleteRows (lib/rows_event.js)': {
    usedBy: 'bench/zongji-capture.ts (zongjiReplay)',
    reliesOn: 'constructed as (parser, options, zongji), passed on to RowsEvent',
    get: () => DeleteRows,
    params: 3,
    sha256: '042d61e8dca2f8a8e18175cfdc52c2880ba6aca5f2651e6717e9ad33a64b0d9a',
  },
  'class TableMap (lib/binlog_event.js)': {
    usedBy: 'zongji-raw-events.ts (_readTableId finds the session by the event’s tableMap), binlog-values.ts (rewrites the entry’s column types)',
    reliesOn:
      'the constructor sets this.tableMap = zongji.tableMap before _readTableId; the entry it fills holds columns[] with type, metadata and charset, which binlog-values.ts rewrites before the rows are parsed',
    get: () => TableMap,
    params: 3,
    sha256: '69233af48baa4b74c3226df8e815b0f06ec46acf8a723e71efdbcd80505f834d',
  },
  'TableMap.prototype._readColumnMetadata (lib/binlog_event.js)': {
    usedBy: 'zongji-raw-events.ts (overridden: steps over the metadata of a table read raw)',
    reliesOn: 'the constructor calls it after the column types, with this.tableMap, schemaName and tableName set, and it only fills this.columnsMetadata (one entry per column, read by updateColumnInfo)',
    get: () => TableMap.prototype._readColumnMetadata!,
    params: 1,
    sha256: '6ea33658aab82ba06dda4ca13754e754988e3e62ba805f3962910de80b94dfb0',
  },
  'TableMap.prototype._readOptionalMetadata (lib/binlog_event.js)': {
    usedBy: 'zongji-raw-events.ts (overridden: nothing to read for a table read raw)',
    reliesOn: 'the constructor calls it last; without it columnNames stays undefined, so hasSelfDescribingMetadata() is false and zongji takes the _fetchTableInfo path',
    get: () => TableMap.prototype._readOptionalMetadata!,
    params: 2,
    sha256: '27fef98e2e89aad11ca71168fe7427030309d9455e76d99a605276af73da228e',
  },
  'TableMap.prototype.updateColumnInfo (lib/binlog_event.js)': {
    usedBy: 'zongji-raw-events.ts (runs on the entry setRawRows answers _fetchTableInfo with)',
    reliesOn: 'reads columnsMetadata[i] only behind a truthiness check (an empty array is fine) and needs columnSchemas with at least columnCount rows; builds tableMap.columns',
    get: () => TableMap.prototype.updateColumnInfo!,
    params: 0,
    sha256: '58349f1bb86e39ab281d0e45b373771084c306cd22baa9abbf1ec443a913c629',
  },
  'Parser.prototype.append (lib/reader.js)': {
    usedBy: 'bench/zongji-capture.ts (zongjiReplay)',
    reliesOn: 'append(buffer) makes the buffer the whole packet: _buffer = buffer, _offset 0, _packetEnd its length',
    get: () => Parser.prototype.append!,
    params: 1,
    sha256: 'cfa4e53d28a00a30040a9440c146c961b956b7f7a46147f808c079e177eca0ff',
  },
  'Parser.prototype._offset getter (lib/reader.js)': {
    usedBy: 'zongji-raw-events.ts, bench/zongji-capture.ts',
    reliesOn: 'the absolute position in _buffer (the packet’s own offset for a packet of the MySQL driver)',
    get: () => accessor(Parser.prototype, '_offset', 'get'),
    params: 0,
    sha256: '57baccd01255264fe5f8669c498ab9316443152410effc5b30335f6c1722b516',
  },
  'Parser.prototype._offset setter (lib/reader.js)': {
    usedBy: 'zongji-raw-events.ts (skipWhenRaw jumps to the event end), bench/zongji-capture.ts (zongjiReplay starts after the header)',
    reliesOn: 'assigning it moves the parser (the driver packet’s offset when there is one)',
    get: () => accessor(Parser.prototype, '_offset', 'set'),
    params: 1,
    sha256: '63ba0ecdb47897ab210a673241524595d1726eb22f6bffa95a443e1679cdb2a5',
  },
  'Parser.prototype._packetEnd getter (lib/reader.js)': {
    usedBy: 'zongji-raw-events.ts, bench/zongji-capture.ts',
    reliesOn: 'the absolute end of the event in _buffer, checksum included',
    get: () => accessor(Parser.prototype, '_packetEnd', 'get'),
    params: 0,
    sha256: '7a8c14865a9b2ccad61d031dfb652f434a796b93e8239876bb9fda8185296b74',
  },
  'Parser.prototype._packetEnd setter (lib/reader.js)': {
    usedBy: 'zongji’s rows events, which move the end back by the checksum while reading rows and restore it after',
    reliesOn: 'the end zongji-raw-events.ts reads in _readTableId is the event end, checksum included (no change was made before it)',
    get: () => accessor(Parser.prototype, '_packetEnd', 'set'),
    params: 1,
    sha256: '1ac8289495903026b4b5db7f557e5153c53e97e56dace0201a61ece3f304b624',
  },
  'ZongJi.prototype._fetchTableInfo (index.js)': {
    usedBy: 'zongji-raw-events.ts setRawRows (answered per instance for the tables read raw), binlog-session.test.ts',
    reliesOn: 'called as this._fetchTableInfo(event, next) for a TABLE_MAP without usable column metadata (event.schemaName, tableName, tableId and columnCount set); next() may come on a later turn, once tableMap[event.tableId] holds columnSchemas, parentSchema and tableName',
    get: () => zongjiProto._fetchTableInfo!,
    params: 2,
    sha256: 'e39a94377b200d31b9874e01aa80315116497b267e974259bf0d6ec2b56b2637',
  },
  'ZongJi.prototype.start (index.js)': {
    usedBy: 'binlog-session.ts, dump-flow.ts, zongji-payload-events.ts, zongji-raw-events.ts',
    reliesOn:
      "creates the binlog connection synchronously; makes this.BinlogClass per start and emits 'ready' before queuing the dump command; pauses the connection around _fetchTableInfo and resumes it once (dump-flow.ts counts the pairs); reads this.tableMap, useChecksum",
    get: () => zongjiProto.start!,
    params: 0,
    sha256: 'c0b1e9ff59d7e4809d241a4613a18364339f3e5ea8574f2b66fa770c1fc6266b',
  },
  'Binlog.prototype.start (lib/sequence/binlog.js)': {
    usedBy: 'zongji-payload-events.ts, zongji-raw-events.ts (both wrap binlogData on the class)',
    reliesOn: 'returns Binlog.prototype.binlogData, looked up on the prototype, so a wrapper installed after construction handles the packets',
    get: () => Binlog.prototype.start!,
    params: 2,
    sha256: 'a55f83931beb616d11209a4fcddd4362a647fb36e502de4dd9e88a714acce2c7',
  },
  'Binlog.prototype.binlogData (lib/sequence/binlog.js)': {
    usedBy: 'zongji-payload-events.ts (feeds inner events of a compressed transaction), zongji-raw-events.ts (reads type 39 as 31)',
    reliesOn:
      'called per packet as (packet, connection) on the command; the packet is the OK byte then the 19-byte common header at packet.offset; the event is parsed synchronously; returns the next handler (the prototype’s binlogData)',
    get: () => Binlog.prototype.binlogData!,
    params: 2,
    sha256: '55f3c04d59b3360c5162ee1bf90329a9e20733f21dd26cf0593c2265f66e23b0',
  },
};

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const readJson = async <T>(path: string): Promise<T> => JSON.parse(await readFile(path, 'utf8')) as T;

describe('the zongji internals floe depends on', () => {
  it('is installed at the exact version package.json pins, the one the hooks were written for', async () => {
    const pkg = await readJson<{ dependencies: Record<string, string> }>(join(REPO_ROOT, 'package.json'));
    const lock = await readJson<{ packages: Record<string, { version?: string; dependencies?: Record<string, string> }> }>(join(REPO_ROOT, 'package-lock.json'));
    const installed = (await readJson<{ version: string }>(join(ZONGJI_ROOT, 'package.json'))).version;
    const pinned = pkg.dependencies['@vlasky/zongji'];
    expect(pinned, `expected package.json to pin @vlasky/zongji to one exact version (floe patches its private methods), found "${pinned}": pin it to ${FINGERPRINTED_VERSION}`).toMatch(/^\d+\.\d+\.\d+$/);
    expect(lock.packages['']?.dependencies?.['@vlasky/zongji'], 'expected package-lock.json to record the pin of package.json: run npm install').toBe(pinned);
    expect(installed, `expected the installed @vlasky/zongji to be the pinned ${pinned}, found ${installed}: run npm ci`).toBe(pinned);
    expect(
      pinned,
      `expected @vlasky/zongji ${FINGERPRINTED_VERSION}, the version this file's fingerprints and floe's hooks (src/source/mysql/binlog/zongji/) were written against, found ${pinned} in package.json: re-read each hook against the new zongji source, then record the new fingerprints here`,
    ).toBe(FINGERPRINTED_VERSION);
  });

  it('is unpatched in this process (the fingerprints are of zongji’s own source)', () => {
    expect(BinlogEvent.prototype._readTableId!.toString(), 'expected zongji’s own _readTableId, found floe’s override: keep zongji-raw-events.ts out of this test file’s imports').not.toContain('floe');
    expect(RowsEvent.prototype._fetchOneRow!.toString()).not.toContain('floeRows');
  });

  it.each(Object.entries(PINNED))('%s has the shape floe relies on', (name, pinned) => {
    const fn = pinned.get();
    expect(typeof fn, `expected zongji ${FINGERPRINTED_VERSION}'s ${name} to be a function, found ${typeof fn}: re-read ${pinned.usedBy} against the installed zongji`).toBe('function');
    const found = { params: fn.length, sha256: sha256(fn.toString()) };
    expect(
      found,
      `expected zongji's ${name} as in ${FINGERPRINTED_VERSION} (${pinned.params} parameters, sha256 ${pinned.sha256}), found ${found.params} parameters, sha256 ${found.sha256}: ` +
        `it changed. floe relies on this: ${pinned.reliesOn}. Re-read ${pinned.usedBy} (under src/source/mysql/binlog/ and bench/) against the new source, fix the hook if needed, then record the new fingerprint in this test`,
    ).toEqual({ params: pinned.params, sha256: pinned.sha256 });
  });

  it('keeps the parser state the hooks read and move in _buffer, _offset and _packetEnd', () => {
    const parser = new (Parser as unknown as new () => { _buffer: Buffer | null; _offset: number; _packetEnd: number; append(b: Buffer): void })();
    const bytes = Buffer.from([1, 2, 3, 4, 5, 6, 7, 8]);
    parser.append(bytes);
    expect({ buffer: parser._buffer, offset: parser._offset, end: parser._packetEnd }).toEqual({ buffer: bytes, offset: 0, end: 8 });
    parser._offset = parser._packetEnd;
    expect(parser._offset).toBe(8);
  });

  it('creates its tableMap once per instance, starts with no checksum and no connection', async () => {
    const zongji = new ZongJi({}) as unknown as { tableMap: object; useChecksum: boolean; connection: unknown };
    expect({ tableMap: zongji.tableMap, useChecksum: zongji.useChecksum, connection: zongji.connection }).toEqual({ tableMap: {}, useChecksum: false, connection: null });
    // setRawRows keys its sessions by this object: zongji must never replace it
    const source = await readFile(join(ZONGJI_ROOT, 'index.js'), 'utf8');
    expect(source.match(/this\.tableMap = /g), 'expected zongji to assign this.tableMap only in its constructor: zongji-raw-events.ts setRawRows keys sessions by it').toHaveLength(1);
  });

  it('fetches a TABLE_MAP’s columns through an instance-overridable _fetchTableInfo(event, next), pausing the binlog connection meanwhile', async () => {
    const source = await readFile(join(ZONGJI_ROOT, 'index.js'), 'utf8');
    expect(source).toContain('this._fetchTableInfo(event, () => {');
    expect(source).toMatch(/this\.connection\.pause\(\);\s+attachGtid\(event\);\s+this\._fetchTableInfo/);
    expect(source).toMatch(/if \(this\.connection\) this\.connection\.resume\(\);/);
  });

  it("makes its binlog command class per start and emits 'ready' before queuing it", async () => {
    const source = await readFile(join(ZONGJI_ROOT, 'index.js'), 'utf8');
    expect(source).toMatch(/this\.BinlogClass = initBinlogClass\(this\);\s+this\.ready = true;\s+this\.emit\('ready'\);[\s\S]*?addCommand\(new this\.BinlogClass\(binlogHandler\)\)/);
    expect(typeof Binlog.prototype.binlogData).toBe('function');
    // each packet goes through the prototype's binlogData, looked up per packet
    expect(await readFile(join(ZONGJI_ROOT, 'lib', 'sequence', 'binlog.js'), 'utf8')).toContain('return Binlog.prototype.binlogData;');
  });

  it('maps type 39 to its undecodable PartialUpdateRows and 31 to UpdateRows, which shares its layout up to the row images', async () => {
    const { getEventClass } = await lib<{ getEventClass: (code: number) => { name: string } }>('code_map.js');
    expect(getEventClass(39).name).toBe('PartialUpdateRows');
    expect(getEventClass(31).name).toBe('UpdateRows');
    const rows = await readFile(join(ZONGJI_ROOT, 'lib', 'rows_event.js'), 'utf8');
    expect(rows).toMatch(/0x1f, \/\/ UPDATE_ROWS_EVENT_V2/);
  });
});

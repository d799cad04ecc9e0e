/**
 * Raw event bytes out of a live zongji session, and zongji's row decoding replayed in-process on
 * captured bytes — what the row-decoder cross-check (test/source/mysql/binlog/rows/row-decoder.test.ts) and the
 * decoder micro-benchmark (bench/row-decoder.ts) need to run floe's decoder and zongji on the very
 * same events.
 *
 * zongji keeps no event bytes, so `installRawCapture` patches `BinlogEvent.prototype._readTableId`,
 * which every TABLE_MAP and rows event calls first with the parser positioned right after the
 * 19-byte common header: the event's bytes are then `buffer[offset - 19, packetEnd)` (checksum
 * included). zongji's modules are loaded by file URL (its package exports only its entry point);
 * Node gives them the same module instances the package entry uses.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

interface ZongjiParser {
  _buffer: Buffer;
  _offset: number;
  _packetEnd: number;
  append(buffer: Buffer): void;
}

/** A zongji event with the raw bytes `installRawCapture` attached. */
export interface WithRaw {
  floeRaw?: Buffer;
}

const ZONGJI_LIB = join(dirname(createRequire(import.meta.url).resolve('@vlasky/zongji')), 'lib');

async function zongjiModule<T>(file: string): Promise<T> {
  return (await import(pathToFileURL(join(ZONGJI_LIB, file)).href)) as T;
}

let installed = false;

/** From now on, every TABLE_MAP and rows event zongji builds carries its bytes as `floeRaw`. */
export async function installRawCapture(): Promise<void> {
  if (installed) return;
  const { BinlogEvent } = await zongjiModule<{ BinlogEvent: { prototype: { _readTableId(parser: ZongjiParser): void } } }>('binlog_event.js');
  const original = BinlogEvent.prototype._readTableId;
  BinlogEvent.prototype._readTableId = function (this: WithRaw, parser: ZongjiParser) {
    this.floeRaw = Buffer.from(parser._buffer.subarray(parser._offset - 19, parser._packetEnd));
    original.call(this, parser);
  };
  installed = true;
}

/** zongji's rows-event decoding alone, on captured bytes: builds its event objects as its stream does. */
export interface ZongjiReplay {
  /** Decodes one captured rows event; returns zongji's row images ({before, after} for updates). */
  decode(raw: Buffer): unknown[];
}

/**
 * A replay of zongji's decoding with the table map state of a finished session (`tableMap`, already
 * adapted by floe's attachExactValueDecoding) and the connection options floe gives it: zongji's
 * rows event classes, built on a parser holding the captured event as zongji's stream builds them.
 */
export async function zongjiReplay(tableMap: Record<string, unknown>, useChecksum: boolean, config: Record<string, unknown>): Promise<ZongjiReplay> {
  type RowsEventClass = new (parser: ZongjiParser, options: Record<string, unknown>, zongji: unknown) => { rows: unknown[] };
  const rows = await zongjiModule<{ WriteRows: RowsEventClass; UpdateRows: RowsEventClass; DeleteRows: RowsEventClass }>('rows_event.js');
  const { Parser } = await zongjiModule<{ Parser: new () => ZongjiParser }>('reader.js');
  const classOf = (type: number): RowsEventClass => {
    // WRITE_ROWS v1, v2 and MariaDB's compressed v1, v2; then UPDATE_ROWS (log_event.h)
    if ([23, 30, 166, 169].includes(type)) return rows.WriteRows;
    if ([24, 31, 167, 170].includes(type)) return rows.UpdateRows;
    return rows.DeleteRows;
  };
  return {
    decode(raw) {
      const parser = new Parser();
      parser.append(raw);
      parser._offset = 19;
      const tableId = raw.readUIntLE(19, 6);
      const zongji = { tableMap: { [tableId]: tableMap[String(tableId)] }, useChecksum, connection: { config }, emit: () => false };
      const checksumBytes = useChecksum ? 4 : 0;
      const options = { timestamp: raw.readUInt32LE(0) * 1000, eventType: raw[4], size: raw.length - 19 - checksumBytes, nextPosition: raw.readUInt32LE(13) };
      return new (classOf(raw[4]!))(parser, options, zongji).rows;
    },
  };
}

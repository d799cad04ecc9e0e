/**
 * TRANSACTION_PAYLOAD_EVENT decoding (transaction-payload.ts) over compressed transactions a real
 * MySQL 8.0.31 logged (test/fixtures/mysql8-binlog/, with its README): the header fields against
 * what the server reports (SHOW BINLOG EVENTS), the inner events against the server's own list of
 * them and its uncompressed logging of the same transaction, and the rows they hold decoded by
 * floe's row decoder to the values the statements wrote. Then the payloads floe must refuse, each
 * with its own error: an unknown compression type, a payload cut short, damaged zstd bytes, a size
 * that disagrees with the header. The reader over a live MySQL 8 with compression on is
 * test/source/mysql/binlog/compressed-transactions.test.ts.
 */
import { readFileSync } from 'node:fs';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { decompress as fzstdDecompress } from 'fzstd';
import { innerEvents, readPayloadHeader } from '../../../../src/source/mysql/binlog/transaction-payload.js';
import { parseTableMap, type TableMapEvent } from '../../../../src/source/mysql/binlog/rows/table-map.js';
import { compileTable, decodeRowsEvent } from '../../../../src/source/mysql/binlog/rows/row-decoder.js';
import type { TableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { FloeError } from '../../../../src/util/errors.js';

const FIXTURES = new URL('../../../fixtures/mysql8-binlog/', import.meta.url);

interface ServerEventRow {
  Pos: number;
  Event_type: string;
  End_log_pos: number;
  Info: string;
}
interface Facts {
  server: string;
  binlogChecksum: 'CRC32' | 'NONE';
  mixed: ServerEventRow[];
  big: ServerEventRow[];
  uncompressedMixed: ServerEventRow[];
  schemas: Record<string, TableSchema>;
}

function fixture(name: 'crc32' | 'no-checksum') {
  const facts = JSON.parse(readFileSync(new URL(`${name}.json`, FIXTURES), 'utf8')) as Facts;
  const bin = (what: string) => readFileSync(new URL(`${name}-${what}.bin`, FIXTURES));
  return { facts, mixed: bin('mixed'), big: bin('big'), uncompressed: bin('uncompressed-mixed'), checksumBytes: facts.binlogChecksum === 'CRC32' ? 4 : 0 };
}

/** Event type codes (libbinlogevents Log_event_type) to the names SHOW BINLOG EVENTS prints. */
const TYPE_NAMES: Record<number, string> = { 2: 'Query', 16: 'Xid', 19: 'Table_map', 30: 'Write_rows', 31: 'Update_rows', 32: 'Delete_rows' };

/** Events laid back to back (the server's binlog, or a payload's contents), split by event_length. */
function splitEvents(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += bytes.readUInt32LE(at + 9)) out.push(bytes.subarray(at, at + bytes.readUInt32LE(at + 9)));
  return out;
}

interface Decoded {
  table: string;
  kind: string;
  rows: unknown[][];
}

/** The row changes of inner events, decoded by floe (TABLE_MAP parser + row decoder) with the captured schemas. */
function decodeAll(events: readonly Buffer[], schemas: Record<string, TableSchema>, checksumBytes: number): Decoded[] {
  const maps = new Map<number, TableMapEvent>();
  const out: Decoded[] = [];
  for (const e of events) {
    if (e[4] === 19) {
      const map = parseTableMap(e, checksumBytes);
      maps.set(map.tableId, map);
    } else if (e[4] === 30 || e[4] === 31 || e[4] === 32) {
      const map = maps.get(e.readUIntLE(19, 6))!;
      const decoded = decodeRowsEvent(e, compileTable(map, mapTable(schemas[map.table]!)), checksumBytes);
      out.push({ table: map.table, kind: decoded.kind, rows: decoded.rows as unknown[][] });
    }
  }
  return out;
}

/** A TRANSACTION_PAYLOAD_EVENT as the server writes one (codecs/binary.cpp `encode`), around `payload`. */
function payloadEvent(fields: { compressionType: number; uncompressedSize?: number; payloadSize?: number }, payload: Uint8Array, checksumBytes: number, logPos = 5000): Buffer {
  const lenenc = (v: number): number[] => (v < 0xfb ? [v] : v < 0x10000 ? [0xfc, v & 0xff, v >> 8] : [0xfd, v & 0xff, (v >> 8) & 0xff, v >> 16]);
  const field = (type: number, value: number) => [type, lenenc(value).length, ...lenenc(value)];
  const header = [
    ...field(2, fields.compressionType),
    ...(fields.uncompressedSize === undefined ? [] : field(3, fields.uncompressedSize)),
    ...field(1, fields.payloadSize ?? payload.length),
    0,
  ];
  const event = Buffer.alloc(19 + header.length + payload.length + checksumBytes);
  event.writeUInt32LE(1_700_000_000, 0);
  event[4] = 40;
  event.writeUInt32LE(1, 5);
  event.writeUInt32LE(event.length, 9);
  event.writeUInt32LE(logPos, 13);
  Buffer.from(header).copy(event, 19);
  Buffer.from(payload).copy(event, 19 + header.length);
  if (checksumBytes) event.writeUInt32LE(zlib.crc32(event.subarray(0, event.length - 4)), event.length - 4);
  return event;
}

const at = (y: number, mo: number, d: number, h: number, mi: number, s: number, micros: number) => BigInt(Date.UTC(y, mo - 1, d, h, mi, s)) * 1000n + BigInt(micros);

describe.each(['crc32', 'no-checksum'] as const)('a compressed transaction MySQL 8.0.31 logged (binlog checksum %s)', (name) => {
  const { facts, mixed, big, uncompressed, checksumBytes } = fixture(name);
  const [payloadRow, ...innerRows] = facts.mixed;

  it('has the header fields the server reports: ZSTD, its decompressed size, a payload up to the checksum', () => {
    expect(facts.server).toBe('MySQL 8.0.31');
    expect(mixed.readUInt32LE(13)).toBe(payloadRow!.End_log_pos);
    const header = readPayloadHeader(mixed, checksumBytes);
    expect(header.compressionType).toBe(0);
    expect(`compression='ZSTD', decompressed_size=${header.uncompressedSize} bytes`).toBe(payloadRow!.Info);
    expect(header.payloadStart + header.payloadSize).toBe(mixed.length - checksumBytes);
    expect(`compression='ZSTD', decompressed_size=${readPayloadHeader(big, checksumBytes).uncompressedSize} bytes`).toBe(facts.big[0]!.Info);
  });

  it("holds the server's list of inner events, each at the payload's end position, as the server reports them", () => {
    const events = [...innerEvents(mixed, checksumBytes)];
    expect(events.map((e) => TYPE_NAMES[e[4]!])).toEqual(innerRows.map((r) => r.Event_type));
    for (const [i, e] of events.entries()) {
      expect(e.readUInt32LE(13)).toBe(innerRows[i]!.End_log_pos);
      expect(e.readUInt32LE(13)).toBe(payloadRow!.End_log_pos);
      expect(e.readUInt32LE(9)).toBe(e.length);
    }
  });

  it('gives each inner event the TABLE_MAP and rows bytes the server logs for the same transaction uncompressed', () => {
    const logged = splitEvents(uncompressed);
    expect(logged.map((e) => TYPE_NAMES[e[4]!])).toEqual(facts.uncompressedMixed.map((r) => r.Event_type));
    const events = [...innerEvents(mixed, checksumBytes)];
    expect(events.length).toBe(logged.length);
    for (const [i, e] of events.entries()) {
      const server = logged[i]!;
      expect(e.length).toBe(server.length);
      // the body: equal for TABLE_MAP and rows events; the Query and the Xid carry the session's
      // timing and the transaction's xid, which differ between the two transactions
      if (e[4] === 19 || (e[4]! >= 30 && e[4]! <= 32)) expect(e.subarray(19, e.length - checksumBytes).equals(server.subarray(19, server.length - checksumBytes))).toBe(true);
    }
  });

  it.runIf(name === 'crc32')('checksums each inner event the way the server checksums its events (CRC32 of header and body)', () => {
    // the convention, on the server's own events: CRC32 over everything before the checksum
    for (const e of splitEvents(uncompressed)) expect(zlib.crc32(e.subarray(0, e.length - 4))).toBe(e.readUInt32LE(e.length - 4));
    for (const e of innerEvents(mixed, 4)) expect(zlib.crc32(e.subarray(0, e.length - 4))).toBe(e.readUInt32LE(e.length - 4));
  });

  it('decodes to the rows the statements wrote', () => {
    const changes = decodeAll([...innerEvents(mixed, checksumBytes)], facts.schemas, checksumBytes);
    const leapDay = at(2024, 2, 29, 12, 34, 56, 789_012);
    expect(changes).toEqual([
      { table: 't', kind: 'insert', rows: [[1, 'a'], [2, 'b'], [3, 'c']] },
      { table: 'u', kind: 'insert', rows: [[10n, '1.50', leapDay]] },
      { table: 't', kind: 'update', rows: [[2, 'b'], [2, 'bb']] },
      { table: 't', kind: 'update', rows: [[3, 'c'], [30, 'c']] },
      { table: 't', kind: 'delete', rows: [[1, 'a']] },
      { table: 'u', kind: 'update', rows: [[10n, '1.50', leapDay], [10n, '-7.25', leapDay]] },
    ]);
  });

  it('decodes a payload of 5,000 rows (several zstd blocks, many rows events) to every row', () => {
    const events = [...innerEvents(big, checksumBytes)];
    expect(events.filter((e) => e[4] === 30).length).toBeGreaterThan(10);
    const rows = decodeAll(events, facts.schemas, checksumBytes).flatMap((c) => c.rows);
    const amount = (n: number) => {
      const thousandths = n * 1125;
      return `${Math.floor(thousandths / 1000)}.${String(thousandths % 1000).padStart(3, '0')}`;
    };
    expect(rows).toEqual(Array.from({ length: 5000 }, (_, i) => [i + 1, `name-${i + 1}-${'x'.repeat((i + 1) % 40)}`, amount(i + 1)]));
  });
});

describe('zstd decoders', () => {
  const { big } = fixture('crc32');
  const header = readPayloadHeader(big, 4);
  const payload = big.subarray(header.payloadStart, header.payloadStart + header.payloadSize);
  const zstdDecompressSync = (zlib as { zstdDecompressSync?: (b: Uint8Array) => Buffer }).zstdDecompressSync;

  it('fzstd decompresses the server payload to the size the server reports', () => {
    expect(fzstdDecompress(payload).length).toBe(header.uncompressedSize);
  });

  // Node 22.15+ / 23.8+ only: there floe uses Node's zstd, which must give the same bytes
  it.runIf(zstdDecompressSync !== undefined)("Node's zlib zstd and fzstd give the same bytes", () => {
    expect(Buffer.from(zstdDecompressSync!(payload)).equals(Buffer.from(fzstdDecompress(payload)))).toBe(true);
  });
});

describe('payloads floe cannot read stop with an error that says why', () => {
  const { mixed } = fixture('crc32');
  const header = readPayloadHeader(mixed, 4);
  const compressed = mixed.subarray(header.payloadStart, header.payloadStart + header.payloadSize);
  const events = Buffer.from(fzstdDecompress(compressed));

  function failure(f: () => unknown): FloeError {
    try {
      f();
    } catch (e) {
      expect(e).toBeInstanceOf(FloeError);
      return e as FloeError;
    }
    throw new Error('expected a FloeError, nothing was thrown');
  }

  it('rebuilds the captured event from its parts (the helper below writes what the server writes)', () => {
    const rebuilt = payloadEvent({ compressionType: 0, uncompressedSize: events.length }, compressed, 4, mixed.readUInt32LE(13));
    // from the event length on, up to the checksum (which covers the timestamp and server id too)
    expect(rebuilt.subarray(9, -4).equals(mixed.subarray(9, -4))).toBe(true);
  });

  it('an uncompressed payload (compression type 255, NONE) gives the same events', () => {
    const none = payloadEvent({ compressionType: 255 }, events, 4, mixed.readUInt32LE(13));
    expect([...innerEvents(none, 4)]).toEqual([...innerEvents(mixed, 4)]);
  });

  it('an unknown compression type: unsupported, naming the type, the event and what to do', () => {
    const e = failure(() => innerEvents(payloadEvent({ compressionType: 1, uncompressedSize: events.length }, compressed, 4, 2899), 4, { file: 'binlog.000007' }));
    expect(e.kind).toBe('unsupported');
    expect(e.retryable).toBe(false);
    expect(e.message).toBe(
      'source.mysql.binlog: expected the compressed transaction (TRANSACTION_PAYLOAD_EVENT ending at binlog.000007:2899) to use compression type 0 (ZSTD) or 255 (NONE), ' +
        'found type 1, which floe cannot decompress: set binlog_transaction_compression=OFF on the source (SET PERSIST binlog_transaction_compression=OFF) so that new ' +
        'transactions are logged uncompressed, and re-snapshot the captured tables, since the transactions already logged this way cannot be read',
    );
  });

  it('damaged zstd bytes: invalid data, not a wrong transaction', () => {
    const damaged = Buffer.from(compressed);
    for (let i = 8; i < damaged.length; i += 3) damaged[i] ^= 0x5a;
    const e = failure(() => innerEvents(payloadEvent({ compressionType: 0, uncompressedSize: events.length }, damaged, 4), 4));
    expect(e.kind).toBe('invalid-data');
    expect(e.message).toMatch(/^source\.mysql\.binlog: expected the (zstd payload|payload|events inside)/);
  });

  it('a payload shorter than its header says', () => {
    const e = failure(() => innerEvents(payloadEvent({ compressionType: 0, uncompressedSize: events.length, payloadSize: compressed.length + 10 }, compressed, 4, 2899), 4));
    expect(e.kind).toBe('invalid-data');
    expect(e.message).toBe(
      `source.mysql.binlog: expected the payload of the TRANSACTION_PAYLOAD_EVENT ending at position 2899 to be ${compressed.length + 10} bytes as its header says, found ${compressed.length}: the event is damaged`,
    );
  });

  it('an uncompressed size that disagrees with the events', () => {
    const e = failure(() => innerEvents(payloadEvent({ compressionType: 0, uncompressedSize: events.length + 1 }, compressed, 4, 2899), 4));
    expect(e.message).toBe(
      `source.mysql.binlog: expected the payload of the TRANSACTION_PAYLOAD_EVENT ending at position 2899 to hold ${events.length + 1} bytes of events as its header says, found ${events.length}: the event is damaged`,
    );
  });

  it('inner events that do not fill the payload', () => {
    const cut = events.subarray(0, events.length - 5);
    const e = failure(() => innerEvents(payloadEvent({ compressionType: 255 }, cut, 0, 2899), 0));
    expect(e.kind).toBe('invalid-data');
    expect(e.message).toMatch(/expected the events inside the TRANSACTION_PAYLOAD_EVENT ending at position 2899 to fill its \d+ bytes, found an event of \d+ bytes at byte \d+/);
  });

  it('header fields cut short', () => {
    const e = failure(() => readPayloadHeader(mixed.subarray(0, 21), 0));
    expect(e.kind).toBe('invalid-data');
    expect(e.message).toContain('to have well-formed header fields, found them malformed or cut short');
  });
});

/**
 * The binlog worker's wire (src/source/mysql/binlog/worker-wire.ts): offsets cross a real structured
 * clone (what postMessage does) as plain data and come back as offsets equal to the ones sent, GTID
 * states of both flavors included — the same state, the same offset text, the same order.
 */
import { describe, expect, it } from 'vitest';
import { WireDecoder, WireEncoder } from '../../../../src/source/mysql/binlog/worker-wire.js';
import type { AssembledBatch } from '../../../../src/source/mysql/binlog/assembled-session.js';
import { compareOffsets, mariadbGtids, mysqlGtids, serializeOffset, type BinlogOffset } from '../../../../src/source/mysql/offset/offset.js';

const mysql: BinlogOffset = {
  file: 'binlog.000042',
  position: 98_765,
  gtids: mysqlGtids('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-18,4f22fa47-71ca-11e1-9e33-c80aa9429562:7'),
  serverUuid: '3e11fa47-71ca-11e1-9e33-c80aa9429562',
  serverId: 7,
};
const mariadb: BinlogOffset = { file: 'mariadb-bin.000003', position: 4_321, gtids: mariadbGtids('0-1-5003,1-2-17'), serverId: 1 };
const fileOnly: BinlogOffset = { file: 'binlog.000001', position: 4 };
const gtidsOnly: BinlogOffset = { gtids: mariadbGtids('0-1-9') };

function across(batch: AssembledBatch): AssembledBatch {
  const encoder = new WireEncoder();
  const wire = structuredClone(encoder.batch(batch));
  const decoder = new WireDecoder();
  decoder.addMaps(encoder.take().maps);
  return decoder.batch(wire);
}

function expectSame(got: BinlogOffset | undefined, sent: BinlogOffset): void {
  expect(got).toBeDefined();
  expect(serializeOffset(got!)).toBe(serializeOffset(sent));
  expect(compareOffsets(got!, sent)).toBe(0);
  // no field beyond the offset's own, none undefined
  expect(Object.entries(got!).every(([, v]) => v !== undefined)).toBe(true);
  expect(Object.keys(got!).sort()).toEqual(Object.keys(sent).sort());
}

describe('binlog worker wire', () => {
  it('carries every kind of offset through a structured clone unchanged', () => {
    const position = { file: 'binlog.000042', commitPosition: 98_765, gtid: '3e11fa47-71ca-11e1-9e33-c80aa9429562:18', eventIndex: 0, serverId: 7 };
    for (const offset of [mysql, mariadb, fileOnly, gtidsOnly]) {
      const got = across({
        items: [
          { kind: 'transaction', position, offset, timestampMs: 1_700_000_000_000, raw: [] },
          { kind: 'ddl', database: 'shop', statement: 'ALTER TABLE t ADD c INT', position, offset, timestampMs: 1_700_000_000_000 },
          { kind: 'progress', offset },
          { kind: 'progress' },
        ],
        inTransaction: false,
        offset,
      });
      const [txn, ddl, progress, bare] = got.items;
      expectSame(txn!.kind === 'transaction' ? txn.offset : undefined, offset);
      expect(txn).toMatchObject({ kind: 'transaction', position, timestampMs: 1_700_000_000_000, raw: [] });
      expectSame(ddl!.kind === 'ddl' ? ddl.offset : undefined, offset);
      expect(ddl).toMatchObject({ statement: 'ALTER TABLE t ADD c INT', database: 'shop' });
      expectSame(progress!.kind === 'progress' ? progress.offset : undefined, offset);
      expect(bare).toEqual({ kind: 'progress' });
      expectSame(got.offset, offset);
    }
  });

  it('sends no batch offset inside a transaction', () => {
    const got = across({ items: [], inTransaction: true, offset: mysql });
    expect(got.offset).toBeUndefined();
    expect(got.inTransaction).toBe(true);
  });

  it('keeps the GTID state a state: it still advances and compares by GTID', () => {
    const got = across({ items: [], inTransaction: false, offset: { gtids: mysql.gtids } });
    expect(got.offset!.gtids!.flavor).toBe('mysql');
    const later: BinlogOffset = { gtids: mysqlGtids('3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:11-19,4f22fa47-71ca-11e1-9e33-c80aa9429562:7') };
    expect(compareOffsets(got.offset!, later)).toBeLessThan(0);
  });

  it('hands rows events over whole: their bytes, flags and logged columns, one TableRef per table', () => {
    const map = { tableId: 5, database: 'shop', table: 'orders', types: [8, 15], meta: [0, 64], meta2: [0, 0], columnNames: ['id', 'sku'] };
    const other = { ...map, tableId: 6, table: 'items' };
    const rows = (table: { database: string; table: string }, m: typeof map, fill: number, extra: object) => ({
      table: { ...table },
      op: 'update' as const,
      event: Buffer.alloc(40, fill),
      checksumBytes: 4,
      map: m as never,
      ...extra,
    });
    const position = { file: 'binlog.000001', commitPosition: 900, eventIndex: 0 };
    const raw = [
      rows({ database: 'shop', table: 'orders' }, map, 1, { logged: ['id', 'sku'] }),
      rows({ database: 'shop', table: 'orders' }, map, 2, { noForeignKeyChecks: true }),
      rows({ database: 'shop', table: 'items' }, other, 3, {}),
    ];
    const first = across({ items: [{ kind: 'transaction', position, offset: fileOnly, timestampMs: 0, raw }], inTransaction: false, offset: fileOnly });
    const got = first.items[0]!.kind === 'transaction' ? first.items[0]!.raw : [];
    expect(got).toHaveLength(3);
    const [a, b, c] = got as Extract<(typeof got)[number], { event: Buffer }>[];
    expect([a!.event, b!.event, c!.event].map((e) => [Buffer.isBuffer(e), e.length, e[0]])).toEqual([[true, 40, 1], [true, 40, 2], [true, 40, 3]]);
    expect(a!.table).toBe(b!.table);
    expect(a!.table).toEqual({ database: 'shop', table: 'orders' });
    expect(c!.table).toEqual({ database: 'shop', table: 'items' });
    expect(a!.logged).toEqual(['id', 'sku']);
    expect(b!.logged).toBeUndefined();
    expect([a!.noForeignKeyChecks, b!.noForeignKeyChecks, c!.noForeignKeyChecks]).toEqual([undefined, true, undefined]);
    expect(a!.map).toMatchObject({ tableId: 5, columnNames: ['id', 'sku'] });
    expect(c!.map).toMatchObject({ tableId: 6 });
    expect(Object.keys(c!).sort()).toEqual(['checksumBytes', 'event', 'map', 'op', 'table']);
  });
});

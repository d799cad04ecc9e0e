/**
 * The hand-over filter and synthetic cascade deletes: dropped when every chunk of the child table was
 * read after the parent delete (its rows already reflect it), passed when any chunk was read before;
 * tables without chunks pass everything. Row changes are still judged by their own key's chunk.
 */
import { describe, expect, it } from 'vitest';
import type { Chunk } from '../../../src/source/mysql/snapshot/chunk.js';
import { columnFromDefinition } from '../../../src/source/mysql/ddl/ddl-columns.js';
import { parseDdl } from '../../../src/source/mysql/ddl/ddl-parser.js';
import type { CreateTableStatement } from '../../../src/source/mysql/ddl/ddl-statements.js';
import type { CascadeDeleteChange, TransactionEvent } from '../../../src/source/mysql/events.js';
import { HandoverFilter } from '../../../src/source/mysql/snapshot/handover.js';
import { createKeyComparator } from '../../../src/source/mysql/snapshot/key-compare.js';
import type { BinlogOffset, EventPosition } from '../../../src/source/mysql/offset/offset.js';
import { mapTable } from '../../../src/source/mysql/schema/type-mapping.js';

const s = parseDdl('CREATE TABLE child (id INT PRIMARY KEY, pid INT)', 'db') as CreateTableStatement;
const child = mapTable({ id: s.table, columns: s.columns.map((c, i) => columnFromDefinition(c, i + 1, 'mariadb', 't')), primaryKey: ['id'], indexes: [], comment: '', engine: null });
const chunks: Chunk[] = [
  { table: s.table, index: 0, keyColumns: ['id'], upper: [100] },
  { table: s.table, index: 1, keyColumns: ['id'], lower: [100] },
];
const at = (pos: number): BinlogOffset => ({ file: 'binlog.000001', position: pos });
const posAt = (pos: number, i = 0): EventPosition => ({ file: 'binlog.000001', commitPosition: pos, eventIndex: i });

function filter(hw0: number, hw1: number): HandoverFilter {
  return new HandoverFilter([{ table: child, chunks, comparator: createKeyComparator([child.columns[0]]), highWatermarks: new Map([[0, at(hw0)], [1, at(hw1)]]) }]);
}

function txn(pos: number): TransactionEvent {
  const cascade: CascadeDeleteChange = { table: s.table, op: 'delete-matching', columns: ['pid'], values: [7], position: posAt(pos, 0), cause: { table: { database: 'db', table: 'parent' }, constraints: ['fk'] } };
  return {
    kind: 'transaction',
    position: posAt(pos, 2),
    offset: at(pos),
    timestampMs: 0,
    changes: [cascade, { table: s.table, op: 'insert', after: [5, 7], position: posAt(pos, 1) }, { table: s.table, op: 'insert', after: [150, 7], position: posAt(pos, 2) }],
  };
}

describe('hand-over of synthetic cascade deletes', () => {
  it('drops a cascade delete every chunk already reflects', async () => {
    const out = await filter(500, 600).filter(txn(400));
    expect(out.changes).toEqual([]);
  });

  it('passes a cascade delete when some chunk was read before it, and judges row changes by their chunk', async () => {
    const out = await filter(300, 600).filter(txn(400));
    expect(out.changes.map((c) => `${c.op}${c.after ? ` ${c.after[0]}` : ''}`)).toEqual(['delete-matching', 'insert 5']);
  });

  it('passes everything once past the highest high watermark', async () => {
    const t = txn(700);
    expect(await filter(300, 600).filter(t)).toBe(t);
  });
});

/**
 * Bringing a chunk's rows from their read point to the lake's offset (window-apply.ts) and telling
 * which chunks changed between the two (changed-chunks.ts), on synthetic binlogs: forward when the
 * lake is ahead (changes the read already holds are absorbed), backward when it is behind (changes
 * undone in reverse order, key moves included), MySQL's uncertain window between its watermarks
 * (GTIDs say what the read surely holds), a cascade that cannot be undone, and tables without a key
 * (multisets: only exact read points).
 */
import { describe, expect, it } from 'vitest';
import type { Row } from '../../../../src/model/values.js';
import { columnFromDefinition } from '../../../../src/source/mysql/ddl/ddl-columns.js';
import { parseDdl } from '../../../../src/source/mysql/ddl/ddl-parser.js';
import type { CreateTableStatement } from '../../../../src/source/mysql/ddl/ddl-statements.js';
import type { CascadeDeleteChange, RowChange } from '../../../../src/source/mysql/events.js';
import { mysqlGtids, type BinlogOffset, type EventPosition } from '../../../../src/source/mysql/offset/offset.js';
import { ChunkLocator, type Chunk } from '../../../../src/source/mysql/snapshot/chunk.js';
import { createKeyComparator } from '../../../../src/source/mysql/snapshot/key-compare.js';
import { mapTable, type MappedTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { changedChunks } from '../../../../src/source/mysql/verify/changed-chunks.js';
import type { ReadPoint } from '../../../../src/source/mysql/verify/read-point.js';
import { rowsAtOffset } from '../../../../src/source/mysql/verify/window-apply.js';

function table(ddl: string, primaryKey: string[]): MappedTable {
  const s = parseDdl(ddl, 'db') as CreateTableStatement;
  return mapTable({ id: s.table, columns: s.columns.map((c, i) => columnFromDefinition(c, i + 1, 'mysql', 't')), primaryKey, indexes: [], comment: '', engine: null });
}

const keyed = table('CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10), pid INT)', ['id']);
const keyless = table('CREATE TABLE l (v VARCHAR(10))', []);
const UUID = '3e11fa47-71ca-11e1-9e33-c80aa9429562';
const at = (pos: number, gtids?: string): BinlogOffset => ({ file: 'binlog.000001', position: pos, ...(gtids ? { gtids: mysqlGtids(gtids) } : {}) });
const pos = (p: number, gno?: number, i = 0): EventPosition => ({ file: 'binlog.000001', commitPosition: p, eventIndex: i, ...(gno ? { gtid: `${UUID}:${gno}` } : {}) });
const exact = (p: number): ReadPoint => ({ low: at(p), high: at(p), exact: true });
const insert = (p: number, after: Row, gno?: number): RowChange => ({ table: keyed.schema.id, op: 'insert', after, position: pos(p, gno) });
const update = (p: number, before: Row, after: Row, gno?: number): RowChange => ({ table: keyed.schema.id, op: 'update', before, after, position: pos(p, gno) });
const del = (p: number, before: Row, gno?: number): RowChange => ({ table: keyed.schema.id, op: 'delete', before, position: pos(p, gno) });
const cascade = (p: number, pid: number): CascadeDeleteChange => ({ table: keyed.schema.id, op: 'delete-matching', columns: ['pid'], values: [pid], position: pos(p), cause: { table: { database: 'db', table: 'parent' }, constraints: ['fk'] } });

function rows(r: ReturnType<typeof rowsAtOffset>): Row[] | string {
  return 'rows' in r ? [...r.rows].sort((a, b) => Number(a[0]) - Number(b[0])) : r.unresolvable;
}

describe('rowsAtOffset', () => {
  it('brings rows forward to a lake ahead of the read', () => {
    const read: Row[] = [[1, 'a', 7], [2, 'x', 7]];
    const log = [update(150, [1, 'a', 7], [1, 'b', 7]), del(180, [2, 'x', 7]), insert(250, [3, 'n', 7])];
    expect(rows(rowsAtOffset(keyed, read, exact(100), at(200), log))).toEqual([[1, 'b', 7]]);
  });

  it('takes rows back to a lake behind the read, key moves included', () => {
    const read: Row[] = [[3, 'n', 7], [5, 'c', 7]];
    const log = [update(150, [1, 'a', 7], [1, 'b', 7]), update(250, [1, 'b', 7], [5, 'c', 7]), insert(260, [3, 'n', 7]), del(270, [2, 'x', 7]), insert(400, [9, 'z', 7])];
    expect(rows(rowsAtOffset(keyed, read, exact(300), at(200), log))).toEqual([[1, 'b', 7], [2, 'x', 7]]);
  });

  it('absorbs changes a MySQL read may hold, and replays what its GTID set says it lacks', () => {
    // low watermark at 100 with GTIDs 1-10; the read view may hold 11 (at 105) and did; 12 (at 95,
    // written to the binlog before the low watermark but not yet committed) it does not hold
    const point: ReadPoint = { low: at(100, `${UUID}:1-10`), high: at(110, `${UUID}:1-11`), exact: false };
    const read: Row[] = [[1, 'seen', 7]];
    const log = [update(95, [2, 'old', 7], [2, 'late', 7], 12), update(105, [1, 'a', 7], [1, 'seen', 7], 11), update(90, [4, 'x', 7], [4, 'y', 7], 9)];
    log.sort((a, b) => a.position.commitPosition - b.position.commitPosition);
    expect(rows(rowsAtOffset(keyed, [...read, [2, 'old', 7]], point, at(120), log))).toEqual([[1, 'seen', 7], [2, 'late', 7]]);
  });

  it('applies a cascade going forward and cannot undo one', () => {
    const read: Row[] = [[1, 'a', 7], [2, 'b', 8]];
    expect(rows(rowsAtOffset(keyed, read, exact(100), at(200), [cascade(150, 7)]))).toEqual([[2, 'b', 8]]);
    expect(rows(rowsAtOffset(keyed, [[2, 'b', 8]], exact(200), at(100), [cascade(150, 7)]))).toMatch(/ON DELETE CASCADE from db\.parent/);
  });

  it('places no cascade whose rows only the lake knows (a key cascade: no columns), either way', () => {
    const unknown: CascadeDeleteChange = { ...cascade(150, 7), columns: [], values: [], cause: { table: { database: 'db', table: 'grandparent' }, constraints: ['fk_up', 'fk'] } };
    const read: Row[] = [[1, 'a', 7], [2, 'b', 8]];
    expect(rows(rowsAtOffset(keyed, read, exact(100), at(200), [unknown]))).toMatch(/from db\.grandparent \(via fk_up > fk\) may have removed rows/);
    expect(rows(rowsAtOffset(keyed, read, exact(200), at(100), [unknown]))).toMatch(/from db\.grandparent/);
    expect(rows(rowsAtOffset(keyless, [['a']], exact(100), at(200), [{ ...unknown, table: keyless.schema.id }]))).toMatch(/from db\.grandparent/);
    // outside the window it changes nothing
    expect(rows(rowsAtOffset(keyed, read, exact(200), at(200), [unknown]))).toEqual(read);
    // a repair read (rows at the high watermark of a DBLog window): one inside the window makes the chunk unresolvable too
    const window: ReadPoint = { low: at(100), high: at(200), exact: false };
    expect(rows(rowsAtOffset(keyed, read, window, at(100), [unknown]))).toMatch(/from db\.grandparent/);
    expect(rows(rowsAtOffset(keyed, read, window, at(100), [cascade(150, 7)]))).toMatch(/ON DELETE CASCADE from db\.parent removed rows/);
  });

  it('counts copies in a table without a key, and refuses an uncertain read', () => {
    const l = (op: 'insert' | 'delete', p: number, v: string): RowChange => ({ table: keyless.schema.id, op, ...(op === 'insert' ? { after: [v] } : { before: [v] }), position: pos(p) });
    const read: Row[] = [['a'], ['a'], ['b']];
    expect(rows(rowsAtOffset(keyless, read, exact(100), at(200), [l('delete', 150, 'a'), l('insert', 160, 'c'), l('insert', 250, 'd')])).toString()).toBe([['a'], ['b'], ['c']].toString());
    expect(rows(rowsAtOffset(keyless, read, exact(300), at(200), [l('delete', 250, 'a')])).toString()).toBe([['a'], ['a'], ['a'], ['b']].toString());
    const uncertain: ReadPoint = { low: at(100), high: at(120), exact: false };
    expect(rows(rowsAtOffset(keyless, read, uncertain, at(200), [l('insert', 110, 'x')]))).toMatch(/no primary key/);
  });
});

describe('changedChunks', () => {
  const chunks: Chunk[] = [
    { table: keyed.schema.id, index: 0, keyColumns: ['id'], upper: [100] },
    { table: keyed.schema.id, index: 1, keyColumns: ['id'], lower: [100], upper: [200] },
    { table: keyed.schema.id, index: 2, keyColumns: ['id'], lower: [200] },
  ];
  const locator = new ChunkLocator(createKeyComparator([keyed.columns[0]!]), chunks);

  it('names the chunks a change separates from the lake, by both keys of a key move', async () => {
    const points = new Map([[0, exact(300)], [1, exact(300)], [2, exact(300)]]);
    // lake at 250: a change at 260 is in every read, not in the lake; one at 240 in both
    const log = [update(240, [5, 'a', 7], [5, 'b', 7]), update(260, [150, 'x', 7], [250, 'x', 7])];
    expect([...(await changedChunks(log, locator, [0], points, at(250)))].sort()).toEqual([1, 2]);
  });

  it('takes a change between MySQL watermarks as separating, and a cascade as touching every chunk it separates', async () => {
    const points = new Map([[0, { low: at(100), high: at(120), exact: false } as ReadPoint], [1, exact(300)]]);
    expect([...(await changedChunks([update(110, [5, 'a', 7], [5, 'b', 7])], locator, [0], points, at(400)))]).toEqual([0]);
    // lake at 200: a cascade at 150 the first read lacks, one at 250 the second holds
    expect([...(await changedChunks([cascade(150, 7)], locator, [0], points, at(200)))]).toEqual([0]);
    expect([...(await changedChunks([cascade(250, 7)], locator, [0], points, at(200)))]).toEqual([1]);
  });
});

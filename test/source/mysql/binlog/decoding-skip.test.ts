/**
 * Which replayed binlog rows the source leaves undecoded after a restart (MappedTablesDecoding
 * `skipThrough`): a table's rows at or before its own committed offset, or at or before its lowest
 * chunk high watermark (the hand-over drops them) — they may predate the definition it is decoded
 * with — except for a table whose deletes cascade to another captured table, whose rows are always
 * decoded (a child resumed from an earlier offset needs the synthetic deletes of the parent's
 * replayed DELETEs).
 */
import { describe, expect, it } from 'vitest';
import { MappedTablesDecoding } from '../../../../src/source/mysql/binlog/binlog-decoding.js';
import { CascadeExpander } from '../../../../src/source/mysql/binlog/cascade.js';
import type { BinlogOffset, EventPosition } from '../../../../src/source/mysql/offset/offset.js';
import type { ColumnSchema, TableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../../src/source/mysql/schema/type-mapping.js';

function table(name: string): MappedTable {
  const col = (n: string, ordinal: number): ColumnSchema => ({
    name: n, ordinal, dataType: 'int', columnType: 'int(11)', unsigned: false, precision: 10, scale: 0, datetimePrecision: null, maxLength: null,
    charset: null, collation: null, nullable: false, generated: null, generationExpression: null, comment: '', default: { kind: 'none' }, labels: null, json: false, invisible: false, autoIncrement: false,
  });
  const schema: TableSchema = { id: { database: 'd', table: name }, columns: [col('id', 1), col('parent_id', 2)], primaryKey: ['id'], indexes: [], comment: '', engine: 'InnoDB' };
  return mapTable(schema);
}

const identity = { serverUuid: '00000000-0000-0000-0000-000000000001', serverId: 1 };
const at = (position: number): EventPosition => ({ ...identity, file: 'binlog.000001', commitPosition: position, eventIndex: 0 }) as EventPosition;
const offset = (position: number): BinlogOffset => ({ ...identity, file: 'binlog.000001', position });

describe('undecoded replays', () => {
  it('skips a table through its own offset, then decodes it; a cascade parent is always decoded', () => {
    const parent = table('parent');
    const child = table('child');
    const other = table('other');
    const decoding = new MappedTablesDecoding([parent, child, other]);
    decoding.cascades = new CascadeExpander([{ trigger: parent.schema.id, triggerColumns: ['id'], child: child.schema.id, childColumns: ['parent_id'], via: ['fk'] }], (k) => ({ 'd.parent': parent, 'd.child': child, 'd.other': other })[k]);
    decoding.skipThrough('d.other', offset(500));
    decoding.skipThrough('d.parent', offset(500));
    expect(decoding.decoderFor(other.schema.id, undefined, undefined, at(400))).toBeUndefined();
    expect(decoding.decoderFor(other.schema.id, undefined, undefined, at(500))).toBeUndefined();
    expect(decoding.decoderFor(other.schema.id, undefined, undefined, at(600))).toBeDefined();
    expect(decoding.decoderFor(other.schema.id, undefined, undefined, at(450))).toBeDefined(); // passed once: in order from there
    expect(decoding.decoderFor(parent.schema.id, undefined, undefined, at(400))).toBeDefined();
  });

  it('of two skips of a table the later holds (its committed offset, then the hand-over: its lowest chunk high watermark)', () => {
    const t = table('t');
    const decoding = new MappedTablesDecoding([t]);
    decoding.skipThrough('d.t', offset(500));
    decoding.skipThrough('d.t', offset(300));
    expect(decoding.decoderFor(t.schema.id, undefined, undefined, at(400))).toBeUndefined();
    decoding.skipThrough('d.t', offset(700));
    expect(decoding.decoderFor(t.schema.id, undefined, undefined, at(600))).toBeUndefined();
    expect(decoding.decoderFor(t.schema.id, undefined, undefined, at(700))).toBeUndefined();
    expect(decoding.decoderFor(t.schema.id, undefined, undefined, at(800))).toBeDefined();
  });
});

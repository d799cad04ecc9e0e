/**
 * Partial JSON updates (PARTIAL_UPDATE_ROWS_EVENT, binlog_row_value_options=PARTIAL_JSON) without a
 * server: events recorded from MySQL 8.0.31 decoded by floe's row decoder into the rows MySQL itself
 * returned, and the change semantics of sql/json_diff.cc (apply_json_diff) on hand-made changes.
 * test/e2e/mysql8-schema-features.test.ts runs the same through the pipeline against a live server.
 *
 * Provenance of the vectors: mysqld 8.0.31 (the suite's server, binlog_row_image=FULL,
 * binlog_row_metadata=FULL), binlog file bytes of
 *   CREATE TABLE pj.t (id INT PRIMARY KEY, doc JSON, other JSON, n INT);
 *   INSERT INTO pj.t VALUES (1, '{"a": 1, "list": [1, 2, 3], "nested": {"deep": {"x": "y"}}, "a b": true, "한": 1.5, "dec": 0}', '[1]', 1);
 *   SET SESSION binlog_row_value_options = 'PARTIAL_JSON';
 *   UPDATE pj.t SET doc = JSON_SET(doc, '$.nested.deep.x', 'zzzz', '$."a b"', false, '$.list[1]', 20, '$.list[5]', 99, '$.zz', JSON_OBJECT('k', 2.5)) WHERE id = 1;
 *   UPDATE pj.t SET doc = JSON_REMOVE(doc, '$.list[0]', '$."한"'), n = 2 WHERE id = 1;
 *   UPDATE pj.t SET doc = JSON_REPLACE(doc, '$.list[last]', 'L', '$.dec', CAST(1.25 AS DECIMAL(5,2))), other = JSON_SET(other, '$[0]', 7) WHERE id = 1;
 *   UPDATE pj.t SET doc = JSON_ARRAY_INSERT(doc, '$.list[0]', 'first') WHERE id = 1;
 * (the TABLE_MAP and PARTIAL_UPDATE_ROWS_EVENT of each UPDATE, CRC32 included; the expected rows are
 * `SELECT CAST(doc AS CHAR), CAST(other AS CHAR), n` after each), and then, in a session with
 * binlog_row_image = 'MINIMAL' as well, `UPDATE pj.t SET doc = JSON_SET(doc, '$.a', 2) WHERE id = 2`.
 */
import { describe, expect, it } from 'vitest';
import { parseTableMap } from '../../../../src/source/mysql/binlog/rows/table-map.js';
import { compileTable, decodeRowsEvent, requireFullImages } from '../../../../src/source/mysql/binlog/rows/row-decoder.js';
import { applyJsonDiffs, type JsonDiff } from '../../../../src/source/mysql/binlog/rows/mysql-json-diff.js';
import { mapTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import type { ColumnSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { isFloeError } from '../../../../src/util/errors.js';

const TABLE_MAP = '6e68146b134d00000049000000252700000000770000000000010002706a000174000403f5f5030204040e010100040f02696403646f63056f74686572016e0801000c01f0dcb2c49b';
/** The four updates' PARTIAL_UPDATE_ROWS_EVENTs and the row MySQL returned after each (doc, other, n). */
const UPDATES: { event: string; after: [string, string, number] }[] = [
  { event: '6e68146b274d000000210100004628000000007700000000000100020004ffff00010000007500000000060074002e0001002f0003003200030035000300380004003c0006000501000401000500000b4200024a0000570061612062646563ed959c6c6973746e6573746564000000000000f83f03000d0005010005020005030001001d000b000400000f006465657001000e000b0001000c0c0078017908000000020100070005010001000000010300010000005c000000000f242e6e65737465642e646565702e78060c047a7a7a7a0007242e22612062220204020009242e6c6973745b315d030514000109242e6c6973745b355d030563000104242e7a7a1300010012000b0001000f0c006bf6040201820500000000010000004958a59f', after: ["{\"a\": 1, \"zz\": {\"k\": 2.5}, \"a b\": false, \"dec\": 0, \"한\": 1.5, \"list\": [1, 20, 3, 99], \"nested\": {\"deep\": {\"x\": \"zzzz\"}}}", "[1]", 1] },
  { event: '6e68146b274d000000fa000000472a000000007700000000000100020004ffff00010000009600000000070095003500010036000200380003003b0003003e0003004100040045000600050100004b000402000500000b5d00026500007500617a7a612062646563ed959c6c6973746e6573746564010012000b0001000f0c006bf60402018205000000000000f83f04001000050100051400050300056300010020000b000400000f0064656570010011000b0001000c0c0078047a7a7a7a0800000002010007000501000100000001030001000000140000000209242e6c6973745b305d0207242e22ed959c220000000002000000c151f4ef', after: ["{\"a\": 1, \"zz\": {\"k\": 2.5}, \"a b\": false, \"dec\": 0, \"list\": [20, 3, 99], \"nested\": {\"deep\": {\"x\": \"zzzz\"}}}", "[1]", 2] },
  { event: '6e68146b274d00000012010000602c000000007700000000000100020004ffff00010000009600000000060095003500010036000200380003003b0003004100040045000600050100004b0004020005000002650000750000026500007500617a7a612062646563ed959c6c6973746e6573746564010012000b0001000f0c006bf60402018205000000000000f83f03001000051400050300056300056300010020000b000400000f0064656570010011000b0001000c0c0078047a7a7a7a080000000201000700050100020000000101000100000024000000000c242e6c6973745b6c6173745d030c014c0005242e6465630a0ff6070b02800000011908000000020100070005070002000000036fa86b', after: ["{\"a\": 1, \"zz\": {\"k\": 2.5}, \"a b\": false, \"dec\": 1.25, \"list\": [20, 3, \"L\"], \"nested\": {\"deep\": {\"x\": \"zzzz\"}}}", "[7]", 2] },
  { event: '6e68146b274d00000071010000d82e000000007700000000000100020004ffff00010000008c0000000006008b002e0001002f0002003100030034000300370004003b0006000501000041000402000f5300025c00006b00617a7a6120626465636c6973746e6573746564010012000b0001000f0c006bf60402018205f6070b02800000011903000f000514000503000c0d00014c010020000b000400000f0064656570010011000b0001000c0c0078047a7a7a7a08000000020100070005070002000000010200010000009500000000060094002e0001002f0002003100030034000300370004003b0006000501000041000402000f5300025c00007400617a7a6120626465636c6973746e6573746564010012000b0001000f0c006bf60402018205f6070b028000000119040018000c10000514000503000c1600056669727374014c010020000b000400000f0064656570010011000b0001000c0c0078047a7a7a7a0000000002000000916a8118', after: ["{\"a\": 1, \"zz\": {\"k\": 2.5}, \"a b\": false, \"dec\": 1.25, \"list\": [\"first\", 20, 3, \"L\"], \"nested\": {\"deep\": {\"x\": \"zzzz\"}}}", "[7]", 2] },
];
const MINIMAL_TABLE_MAP = '8e68146b134d00000049000000f53200000000770000000000010002706a000174000403f5f5030204040e010100040f02696403646f63056f74686572016e0801000c01f09f23d2db';
const MINIMAL_UPDATE = '8e68146b274d0000003c00000031330000000077000000000001000200040102000200000000000d0000000001000c000b000100050200610fb5d2b6';

function column(name: string, ordinal: number, dataType: string): ColumnSchema {
  return {
    name, ordinal, dataType, columnType: dataType, unsigned: false, precision: null, scale: null, datetimePrecision: null, maxLength: null,
    charset: null, collation: null, nullable: name !== 'id', generated: null, generationExpression: null, comment: '',
    default: name === 'id' ? { kind: 'none' } : { kind: 'null' }, labels: null, json: dataType === 'json', invisible: false, autoIncrement: false,
  };
}

const MAPPED = mapTable({
  id: { database: 'pj', table: 't' },
  columns: [column('id', 1, 'int'), column('doc', 2, 'json'), column('other', 3, 'json'), column('n', 4, 'int')],
  primaryKey: ['id'],
  indexes: [],
  comment: '',
  engine: 'InnoDB',
});

const CHECKSUM = 4;

function refusal(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    return isFloeError(e) ? `${e.kind}: ${e.message}` : `not a FloeError: ${String(e)}`;
  }
  return 'no error';
}

describe('PARTIAL_UPDATE_ROWS_EVENT recorded from MySQL 8.0.31', () => {
  it('decodes each after image into the row MySQL returned, the before image into the row before it', () => {
    // the pipeline's way: before images decoded for the key only — a partial update decodes them whole
    const table = compileTable(parseTableMap(Buffer.from(TABLE_MAP, 'hex'), CHECKSUM), MAPPED, new Set(['id']));
    let before: unknown[] | undefined;
    for (const [i, u] of UPDATES.entries()) {
      const decoded = decodeRowsEvent(Buffer.from(u.event, 'hex'), table, CHECKSUM);
      expect(decoded.kind).toBe('update');
      expect(decoded.rows).toHaveLength(2);
      if (before) expect(decoded.rows[0], `update ${i + 1}: before image`).toEqual(before);
      expect(decoded.rows[1], `update ${i + 1}: after image`).toEqual([1, ...u.after]);
      expect(() => requireFullImages(decoded, table)).not.toThrow();
      before = decoded.rows[1];
    }
  });

  it('stops at an update logged with binlog_row_image=MINIMAL, whose after image lacks the other columns', () => {
    const table = compileTable(parseTableMap(Buffer.from(MINIMAL_TABLE_MAP, 'hex'), CHECKSUM), MAPPED);
    const decoded = decodeRowsEvent(Buffer.from(MINIMAL_UPDATE, 'hex'), table, CHECKSUM);
    // MySQL logs the whole document when the before image lacks it (value options 0)
    expect(decoded.rows[1]![1]).toBe('{"a": 2}');
    expect(refusal(() => requireFullImages(decoded, table))).toBe(
      `unsupported: source.mysql.binlog: rows event of pj.t: expected full row images, found update images without the columns id, other, n — the session that wrote them ran with binlog_row_image=MINIMAL or NOBLOB (or MariaDB's FULL_NODUP), and the rows cannot be rebuilt from the binlog. Set binlog_row_image=FULL for that client (and globally), then re-snapshot the table`,
    );
  });
});

describe("partial JSON changes applied as MySQL's apply_json_diff does", () => {
  const doc = '{"a": 1, "b": [10, 20, 30], "o": {"x": null}}';
  const apply = (...diffs: JsonDiff[]) => applyJsonDiffs(doc, diffs, 'd.t.j');

  it('replaces, inserts and removes members and array cells, in order', () => {
    expect(apply({ operation: 'replace', path: '$.a', value: '"one"' })).toBe('{"a": "one", "b": [10, 20, 30], "o": {"x": null}}');
    expect(apply({ operation: 'replace', path: '$.b[last]', value: '3.5' }, { operation: 'replace', path: '$.b[last-2]', value: 'true' })).toBe('{"a": 1, "b": [true, 20, 3.5], "o": {"x": null}}');
    expect(apply({ operation: 'insert', path: '$.b[1]', value: '15' }, { operation: 'insert', path: '$.b[99]', value: '99' })).toBe('{"a": 1, "b": [10, 15, 20, 30, 99], "o": {"x": null}}');
    expect(apply({ operation: 'remove', path: '$.b[0]' }, { operation: 'remove', path: '$.b[last]' }, { operation: 'remove', path: '$.o.x' })).toBe('{"a": 1, "b": [20], "o": {}}');
  });

  it('puts inserted members in MySQL key order: UTF-8 length first, then bytes', () => {
    expect(
      apply(
        { operation: 'insert', path: '$.aa', value: '2' },
        { operation: 'insert', path: '$."한"', value: '3' },
        { operation: 'insert', path: '$.B', value: '4' },
        { operation: 'insert', path: '$."with space"', value: '{"z": [], "y": "q"}' },
        { operation: 'insert', path: '$."quo\\"te"', value: '5' },
      ),
    ).toBe('{"B": 4, "a": 1, "b": [10, 20, 30], "o": {"x": null}, "aa": 2, "한": 3, "quo\\"te": 5, "with space": {"y": "q", "z": []}}');
  });

  it('keeps every untouched value as MySQL printed it', () => {
    const text = '{"d": 1.0e100, "e": "tab\\tand \\u0001", "n": 18446744073709551615, "f": -0.0, "t": "2024-01-02 03:04:05.000000"}';
    expect(applyJsonDiffs(text, [{ operation: 'replace', path: '$.d', value: '2' }], 'd.t.j')).toBe('{"d": 2, "e": "tab\\tand \\u0001", "f": -0.0, "n": 18446744073709551615, "t": "2024-01-02 03:04:05.000000"}');
  });

  it('refuses a change the before image cannot take, saying what to do', () => {
    expect(refusal(() => apply({ operation: 'replace', path: '$.missing', value: '1' }))).toMatch(
      /^invalid-data: source\.mysql\.binlog: partial JSON update of d\.t\.j: expected REPLACE \$\.missing to apply to the before image, but the value to replace is not there; .*binlog_row_value_options=''.*re-snapshot the table$/,
    );
    expect(refusal(() => apply({ operation: 'insert', path: '$.a', value: '1' }))).toMatch(/INSERT \$\.a .*the member exists already/);
    expect(refusal(() => apply({ operation: 'remove', path: '$.b[3]' }))).toMatch(/REMOVE \$\.b\[3\] .*not there/);
    expect(refusal(() => apply({ operation: 'insert', path: '$.a.x', value: '1' }))).toMatch(/the parent is not an object/);
    expect(refusal(() => apply({ operation: 'remove', path: '$.*' }))).toMatch(/^invalid-data: .*path "\$\.\*"/);
  });
});

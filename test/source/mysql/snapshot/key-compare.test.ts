/**
 * The key comparator against the server itself: for every pair of tricky values, the sign of
 * comparator.compare(a, b) must equal the server's own comparison in the column's collation
 * (PAD SPACE vs NO PAD, tabs before trailing spaces, case and accent folding, 4-byte characters).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { createKeyComparator, serverCollationWeigher, compareBytes, compareCodePoints } from '../../../../src/source/mysql/snapshot/key-compare.js';
import type { Value } from '../../../../src/model/values.js';
import { sharedMysqlConfig } from '../../../support/shared-mysql.js';
import { keyColumn, serverSigns } from './key-compare-support.js';

let client: MysqlClient;

beforeAll(async () => {
  client = await connectMysql(sharedMysqlConfig());
});
afterAll(async () => {
  await client?.close();
});

const TRICKY = ['', ' ', 'a', 'a ', 'a  ', 'a\t', 'A', 'á', 'Á', 'ab', 'a b', 'b', 'ß', 'ss', 'SS', 'æ', 'ae', '😀', '😁', '한', 'z', '\u0000', 'ǅ', 'Ǆ', 'ǆ'];

describe('key comparator', () => {
  for (const collation of ['utf8mb4_general_ci', 'utf8mb4_unicode_ci', 'utf8mb4_bin', 'utf8mb4_nopad_bin', 'utf8mb4_unicode_nopad_ci', 'latin1_swedish_ci']) {
    it(`orders text exactly as the server does under ${collation}`, async () => {
      const charset = collation.split('_')[0];
      const col = keyColumn({ collation, charset });
      const values = charset === 'latin1' ? TRICKY.filter((s) => /^[\u0000-\u00ff]*$/.test(s)) : TRICKY;
      const cast = (lit: string) => `(CONVERT(${lit} USING ${charset}) COLLATE ${collation})`;
      const expected = await serverSigns(client, col, values, cast);
      const cmp = createKeyComparator([col], serverCollationWeigher(client));
      await cmp.prepare(values.map((v) => [v]));
      const actual = values.map((a) => values.map((b) => Math.sign(cmp.compare([a], [b]))));
      const mismatches: string[] = [];
      values.forEach((a, i) => values.forEach((b, j) => {
        if (actual[i][j] !== expected[i][j]) mismatches.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: floe ${actual[i][j]}, server ${expected[i][j]}`);
      }));
      expect(mismatches).toEqual([]);
    });
  }

  it('orders binary strings as unsigned bytes, shorter first, with no padding', async () => {
    const col = keyColumn({ dataType: 'varbinary', columnType: 'varbinary(8)', charset: null, collation: null });
    const values: Value[] = ['', '00', '0000', '20', '2020', '7f', '80', 'ff', 'ff00', '61'].map((h) => Buffer.from(h, 'hex'));
    const expected = await serverSigns(client, col, values, (lit) => `CAST(${lit} AS BINARY)`);
    const cmp = createKeyComparator([col]);
    expect(cmp.needsPrepare).toBe(false);
    expect(values.map((a) => values.map((b) => Math.sign(cmp.compare([a], [b]))))).toEqual(expected);
    expect(compareBytes(Buffer.from([1]), Buffer.from([1, 0]))).toBe(-1);
  });

  it('orders numbers, decimals, BIGINT UNSIGNED and temporal keys exactly, NULL first', () => {
    const u64 = keyColumn({ dataType: 'bigint', columnType: 'bigint(20) unsigned', unsigned: true, charset: null, collation: null });
    const dec = keyColumn({ dataType: 'decimal', columnType: 'decimal(30,10)', precision: 30, scale: 10, charset: null, collation: null });
    const cmp = createKeyComparator([u64, dec]);
    expect(cmp.compare(['18446744073709551615', '0.0000000000'], ['18446744073709551614', '9.0000000000'])).toBe(1);
    expect(cmp.compare(['9007199254740993', '1.0000000000'], ['9007199254740992', '1.0000000000'])).toBe(1);
    expect(cmp.compare(['1', '-0.0000000001'], ['1', '0.0000000000'])).toBe(-1);
    expect(cmp.compare([null, '1.0000000000'], ['0', '1.0000000000'])).toBe(-1);
    expect(cmp.compare(['5', '2.5000000000'], ['5', '2.5000000000'])).toBe(0);
    const enumCol = keyColumn({ dataType: 'enum', columnType: "enum('z','a')", labels: ['z', 'a'] });
    const e = createKeyComparator([enumCol]);
    expect(e.compare(['z'], ['a'])).toBe(-1); // ENUM sorts by index, not by label
    expect(e.compare([''], ['z'])).toBe(-1);
  });

  it('compares code points with and without PAD SPACE', () => {
    expect(compareCodePoints('a', 'a  ', true)).toBe(0);
    expect(compareCodePoints('a\t', 'a', true)).toBe(-1);
    expect(compareCodePoints('a', 'a ', false)).toBe(-1);
    expect(compareCodePoints('\uffff', '😀', true)).toBe(-1); // U+FFFF < U+1F600 although UTF-16 units say otherwise
  });
});

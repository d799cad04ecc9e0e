/**
 * The key comparator against the server under the collations MySQL 8 gives string keys by default
 * and on request: utf8mb4_0900_ai_ci (the default), _as_ci, _as_cs, utf8mb4_0900_bin (NO PAD, all
 * of them) and utf8mb4_bin (PAD SPACE). For every pair of tricky values the sign of
 * `comparator.compare(a, b)` must equal the server's own comparison, and sorting by the comparator
 * must give the server's `ORDER BY` of a real column. On MariaDB (no 0900 collations) the same runs
 * over its utf8mb4 collations.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { createKeyComparator, serverCollationWeigher } from '../../../../src/source/mysql/snapshot/key-compare.js';
import { keyLiteral } from '../../../../src/source/mysql/snapshot/key-sql.js';
import { createTestDatabase, sharedMysqlConfig } from '../../../support/shared-mysql.js';
import { serverKind } from '../../../support/servers.js';
import { keyColumn, serverSigns } from './key-compare-support.js';

const COLLATIONS =
  serverKind() === 'mysql'
    ? ['utf8mb4_0900_ai_ci', 'utf8mb4_0900_as_ci', 'utf8mb4_0900_as_cs', 'utf8mb4_0900_bin', 'utf8mb4_bin']
    : ['utf8mb4_general_ci', 'utf8mb4_unicode_520_ci', 'utf8mb4_bin', 'utf8mb4_nopad_bin'];

const TRICKY = ['', ' ', 'a', 'a ', 'a  ', 'a\t', 'A', 'á', 'Á', 'à', 'ä', 'ab', 'a b', 'b', 'ß', 'ss', 'SS', 'ẞ', 'æ', 'ae', 'Æ', 'œ', 'oe', '😀', '😁', '🀄', '한', '漢', 'z', 'Z', 'ž', '\u0000', 'ǅ', 'Ǆ', 'ǆ', 'ﬁ', 'fi', 'ａ', 'ª', '½', '-', '_', 'a-b', 'ab-'];

let client: MysqlClient;

beforeAll(async () => {
  client = await connectMysql(sharedMysqlConfig());
});
afterAll(async () => {
  await client?.close();
});

describe('key comparator under the server collations of string keys', () => {
  for (const collation of COLLATIONS) {
    it(`compares every pair as the server does under ${collation}`, async () => {
      const col = keyColumn({ collation });
      const cast = (lit: string) => `(CONVERT(${lit} USING utf8mb4) COLLATE ${collation})`;
      const server = await serverSigns(client, col, TRICKY, cast);
      const cmp = createKeyComparator([col], serverCollationWeigher(client));
      await cmp.prepare(TRICKY.map((v) => [v]));
      const mismatches: string[] = [];
      TRICKY.forEach((a, i) =>
        TRICKY.forEach((b, j) => {
          const floe = Math.sign(cmp.compare([a], [b]));
          const expected = server[i]![j];
          if (floe !== expected) mismatches.push(`${JSON.stringify(a)} vs ${JSON.stringify(b)}: floe ${floe}, server ${expected}`);
        }),
      );
      expect(mismatches).toEqual([]);
    });

    it(`sorts a ${collation} key column as ORDER BY does`, async () => {
      const db = await createTestDatabase('keycoll');
      await client.query(`CREATE TABLE \`${db}\`.t (k VARCHAR(40) CHARACTER SET utf8mb4 COLLATE ${collation} PRIMARY KEY)`);
      const col = keyColumn({ collation });
      // one value per collation class (the primary key keeps the first of equal ones)
      await client.query(`INSERT IGNORE INTO \`${db}\`.t VALUES ${TRICKY.map((v) => `(${keyLiteral(col, v)})`).join(', ')}`);
      const ordered = (await client.query(`SELECT k FROM \`${db}\`.t ORDER BY k`)).map((r) => String(r.k));
      const cmp = createKeyComparator([col], serverCollationWeigher(client));
      await cmp.prepare(ordered.map((v) => [v]));
      const shuffled = [...ordered].reverse();
      expect(shuffled.sort((a, b) => cmp.compare([a], [b]))).toEqual(ordered);
      await client.query(`DROP DATABASE \`${db}\``);
    });
  }
});

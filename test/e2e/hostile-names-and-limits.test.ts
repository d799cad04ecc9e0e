/**
 * MySQL identifiers and values at the edges, through the snapshot and the binlog: a database whose
 * name holds a backtick, quotes and a dot; tables named by a reserved word, by 64 characters, and
 * `../escape` (legal in MySQL, which encodes it in its own file name — floe must keep it inside the
 * warehouse); columns with dots, spaces, backticks, quotes, reserved words, 64 characters and
 * non-ASCII letters; a 16 MiB LONGBLOB, a 1 MiB JSON document, and 4-byte characters in every text
 * type. Rows are inserted before floe starts (snapshot) and while it streams (binlog), then updated.
 * The lake must equal MySQL, the large values must hash the same as MySQL's own SHA2() of them, and
 * no file may appear outside the warehouse.
 *
 * MySQL identifiers cannot hold characters outside the BMP ("Identifier Names": quoted identifiers
 * may contain any BMP character except U+0000); the test checks the server refuses one, so that the
 * day it does not, the test says so.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import { readTableRows } from '../../src/iceberg/scan/index.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { startMariaDb, type TestServer } from '../support/mariadb.js';
import { serverPosition, waitForCatchUp } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const JOB = 'hostile-names';
const DB = 'floe`odd"db\'s.x';
const T_RESERVED = 'select';
const T_LONG = 't'.repeat(60) + '_end'; // 64 characters
const T_ESCAPE = '../escape';
const T_BIG = 'big';
/** floe's namespace template splits the database name at dots: two levels here */
const NS = DB.split('.');
const icebergName = (t: string) => (t === T_ESCAPE ? 'escape_dotdot' : t);
const COL_LONG = 'c'.repeat(60) + '_col'; // 64 characters
const FOUR_BYTE = '😀𝄞𠜎'; // emoji, musical symbol, CJK extension B: all outside the BMP

const q = (name: string) => '`' + name.replace(/`/g, '``') + '`';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let server: TestServer | undefined;
const cleanup: string[] = [];
afterAll(async () => {
  await server?.stop();
  for (const p of cleanup) await rm(p, { recursive: true, force: true });
});

async function listAll(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) if (e.isFile()) out.push(join(e.parentPath, e.name));
  return out;
}

function sha256(v: unknown): string {
  const h = createHash('sha256');
  if (v instanceof Uint8Array) h.update(v);
  else h.update(String(v), 'utf8');
  return h.digest('hex');
}

describe('hostile names and values at MySQL limits', () => {
  it('replicates them through snapshot and binlog, inside the warehouse, equal to MySQL', async () => {
    server = await startMariaDb({ serverId: 31, extraArgs: ['--max-allowed-packet=256M'] });
    const conn = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password, charset: 'utf8mb4', supportBigNumbers: true, bigNumberStrings: true });
    try {
      // the server refuses a supplementary character in an identifier (BMP only)
      await expect(conn.query(`CREATE TABLE test.${q('t' + FOUR_BYTE)} (id INT PRIMARY KEY)`)).rejects.toThrow();

      await conn.query(`CREATE DATABASE ${q(DB)}`);
      await conn.query(`USE ${q(DB)}`);
      await conn.query(
        `CREATE TABLE ${q(T_RESERVED)} (${q('order')} INT PRIMARY KEY, ${q('from')} VARCHAR(20), ${q('a.b')} INT, ${q('col with space')} VARCHAR(20), ${q('tick`q"s\'')} VARCHAR(20), ${q(COL_LONG)} INT, ${q('한글 열')} VARCHAR(20))`,
      );
      await conn.query(`CREATE TABLE ${q(T_LONG)} (id BIGINT UNSIGNED PRIMARY KEY, v VARCHAR(10))`);
      await conn.query(`CREATE TABLE ${q(T_ESCAPE)} (id INT PRIMARY KEY, v VARCHAR(10))`);
      await conn.query(
        `CREATE TABLE ${q(T_BIG)} (id INT PRIMARY KEY, lb LONGBLOB, j JSON, c CHAR(8), vc VARCHAR(40), tt TINYTEXT, t TEXT, mt MEDIUMTEXT, lt LONGTEXT, e ENUM('a', '${FOUR_BYTE}'), s SET('x', '${FOUR_BYTE}'))`,
      );

      const insertRows = async (from: number) => {
        for (let i = from; i < from + 3; i++) {
          await conn.query(`INSERT INTO ${q(T_RESERVED)} VALUES (?, ?, ?, ?, ?, ?, ?)`, [i, `from-${i}`, i * 2, `sp ${i}`, `t\`"'${i}`, i * 3, `한글${i}`]);
          await conn.query(`INSERT INTO ${q(T_LONG)} VALUES (?, ?)`, [i === 1 ? '18446744073709551615' : String(i), `v${i}`]);
          await conn.query(`INSERT INTO ${q(T_ESCAPE)} VALUES (?, ?)`, [i, `e${i}`]);
        }
        // 16 MiB LONGBLOB (every byte value), a 1 MiB JSON document, 4-byte characters in every text type
        const blob = Buffer.alloc(16 * 1024 * 1024);
        for (let k = 0; k < blob.length; k++) blob[k] = (k * 31 + from) & 0xff;
        const doc = JSON.stringify({ id: from, text: FOUR_BYTE.repeat(1000), items: Array.from({ length: 40000 }, (_, k) => ({ k, v: `item-${k}` })) });
        expect(Buffer.byteLength(doc)).toBeGreaterThan(1024 * 1024 - 1);
        await conn.query(`INSERT INTO ${q(T_BIG)} VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
          from,
          blob,
          doc,
          FOUR_BYTE + 'ab',
          `${FOUR_BYTE} varchar`,
          `${FOUR_BYTE} tinytext`,
          FOUR_BYTE.repeat(100),
          FOUR_BYTE.repeat(10000),
          FOUR_BYTE.repeat(100000),
          FOUR_BYTE,
          `x,${FOUR_BYTE}`,
        ]);
      };
      await insertRows(1); // read by the snapshot

      const root = await mkdtemp(join(tmpdir(), 'floe-hostile-'));
      cleanup.push(root);
      const warehouse = join(root, 'warehouse');
      const configPath = join(root, 'floe.json');
      const config = (overrides: Record<string, unknown>) =>
        writeFile(
          configPath,
          JSON.stringify({
            job: { id: JOB },
            // a glob's * stops at '.', and '../escape' holds two: a regular expression over 'db.table'
            source: { host: server!.host, port: server!.port, user: server!.user, password: server!.password, serverId: 7301, include: [`/^${DB.replace(/[.]/g, '\\.')}\\./`] },
            warehouse: { location: warehouse },
            commit: { intervalMs: 300 },
            tables: { overrides },
          }),
        );

      // '../escape' cannot be a catalog name: floe says so before it creates anything, naming the
      // table and the way out (exit 2, a configuration problem)
      await config({});
      const refused = new FloeProcess(configPath);
      expect((await refused.exited).code, refused.tail()).toBe(2);
      const failure = String(refused.logs.find((r) => r.notification === 'failed')?.error);
      expect(failure).toContain(`table ${DB}.${T_ESCAPE}: its Iceberg identifier`);
      expect(failure).toContain('tables.overrides');
      expect(await listAll(root)).toEqual([configPath]);

      await config({ [`${DB}.${T_ESCAPE}`]: { name: 'escape_dotdot' } });
      const p = new FloeProcess(configPath);
      try {
        const streaming = await p.waitFor((r) => r.notification === 'streaming-started');
        expect(streaming, p.tail()).toBeDefined();
        await insertRows(10); // read from the binlog
        await conn.query(`UPDATE ${q(T_RESERVED)} SET ${q('a.b')} = ${q('a.b')} + 100, ${q('tick`q"s\'')} = 'upd' WHERE ${q('order')} IN (1, 10)`);
        await conn.query(`UPDATE ${q(T_BIG)} SET lt = CONCAT(lt, ?), lb = REVERSE(lb) WHERE id = 1`, [FOUR_BYTE]);
        await conn.query(`DELETE FROM ${q(T_ESCAPE)} WHERE id = 2`);
        await sleep(500);

        const target = await serverPosition({ host: server.host, port: server.port, user: server.user, password: server.password });
        const catalog = new FileSystemCatalog({ warehouse });
        const tables = [T_RESERVED, T_LONG, T_ESCAPE, T_BIG];
        await waitForCatchUp(
          catalog,
          tables.map((t) => ({ identifier: { namespace: NS, name: icebergName(t) }, sourceKey: `${DB}.${t}` })),
          JOB,
          target,
          {
            timeoutMs: 120_000,
            check: () => {
              if (p.hasExited) throw new Error(`floe exited:\n${p.tail()}`);
            },
          },
        );
        p.kill('SIGTERM');
        expect(await p.exited, p.tail()).toEqual({ code: 0, signal: null });

        // the large values, independently: MySQL's SHA2 of each column against a hash of the lake's value
        const cols = ['lb', 'j', 'c', 'vc', 'tt', 't', 'mt', 'lt', 'e', 's'];
        const [hashRows] = await conn.query(`SELECT id, LENGTH(lb) AS n, ${cols.map((c) => `SHA2(${c}, 256) AS ${c}`).join(', ')} FROM ${q(T_BIG)} ORDER BY id`);
        const byId = new Map((hashRows as Record<string, string | number>[]).map((h) => [Number(h.id), h]));
        const bigTable = await loadCatalogTable(catalog, { namespace: NS, name: T_BIG });
        const fields = bigTable.metadata.schemas.find((x) => x.schemaId === bigTable.metadata.currentSchemaId)!.fields.map((f) => f.name);
        const at = (name: string) => fields.indexOf(name);
        const lakeRows = await readTableRows(bigTable);
        expect(lakeRows.length).toBe(2);
        for (const row of lakeRows) {
          const id = Number(row[at('id')]);
          const h = byId.get(id)!;
          expect((row[at('lb')] as Uint8Array).length).toBe(Number(h.n));
          const differing = cols.filter((c) => sha256(row[at(c)]) !== h[c]);
          expect({ id, differing, sample: differing.map((c) => String(row[at(c)]).slice(0, 80)) }).toEqual({ id, differing: [], sample: [] });
        }

        const connection = { host: server.host, port: server.port, user: server.user, password: server.password };
        for (const t of tables) {
          const lake = await lakeTableRows(catalog, { namespace: NS, name: icebergName(t) });
          const expected = await mysqlTableRows(connection, DB, t, lake.columns);
          expect({ table: t, ...multisetDifference(expected, lake.rows, 2), rows: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });
        }
        // the reserved-word table kept every column name as MySQL spells it
        expect((await lakeTableRows(catalog, { namespace: NS, name: T_RESERVED })).columns).toEqual(['order', 'from', 'a.b', 'col with space', 'tick`q"s\'', COL_LONG, '한글 열']);

        // nothing outside the warehouse
        const outside = (await listAll(root)).filter((f) => f !== configPath && (relative(warehouse, f).startsWith('..') || !f.startsWith(warehouse + '/')));
        expect(outside).toEqual([]);
      } finally {
        p.kill();
      }
    } finally {
      await conn.end();
    }
  });
});

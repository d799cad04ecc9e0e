/**
 * MySQL 8's own schema features through the real pipeline (snapshot, binlog, Iceberg writer), on a
 * private server per binlog_row_metadata setting (FULL, then MINIMAL — a GLOBAL-only variable, so
 * not the shared server): for each feature a table whose rows floe copies by snapshot and then,
 * while streaming, again by binlog (the same values under new ids, `INSERT … SELECT`), with updates
 * and deletes after. The lake must equal MySQL's `SELECT` of every column, and each row that came by
 * the binlog must equal its snapshot twin value for value.
 *
 * - invisible columns (SELECT * omits them; the binlog and information_schema carry them: replicated);
 * - generated columns, VIRTUAL (the FULL row image holds their computed values) and STORED;
 * - functional indexes and a multi-valued index (hidden virtual columns `!hidden!…`, absent from the
 *   binlog's table map and from information_schema: no lake column, no shift of the others; MySQL);
 * - expression defaults `DEFAULT (expr)` (no Iceberg write-default, a note; the rows carry values);
 * - CHECK constraints (column and table level, NOT ENFORCED on MySQL, added/altered/dropped live);
 * - RENAME COLUMN (field id kept) and ALGORITHM=INSTANT ADD COLUMN at the end and AFTER a column and
 *   DROP COLUMN (MySQL 8.0.29 row versions: rows written before the ADD are updated after it), while
 *   floe streams and while it is stopped;
 * - string primary keys under the 0900 collations (ai_ci, as_cs, bin; MariaDB: general_ci,
 *   unicode_520_ci, bin), split into many chunks while a writer changes keys in every chunk, so
 *   the chunk bounds, the backfill windows and the hand-over compare keys as the server does.
 *
 * The file also runs against MariaDB (project `integration`), which has invisible and generated
 * columns, expression defaults, CHECK constraints, RENAME COLUMN and instant ADD/DROP too; the
 * MySQL-only parts (functional indexes, NOT ENFORCED, ALTER CHECK, the 0900 collations) are left out
 * there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import type mysql from 'mysql2/promise';
import type { LocalServer } from '../../src/demo/local-server.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { readTableRows } from '../../src/iceberg/scan/index.js';
import { createLogger } from '../../src/pipeline/observe/logger.js';
import type { Row } from '../../src/model/values.js';
import { serverKind, startTestServer } from '../support/servers.js';
import { openHarness, type Harness } from '../pipeline/schema-change/pipeline-harness.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { canonicalRow, multisetDifference, mysqlTableRows } from './support/lake-compare.js';
import { readIndependently } from '../iceberg/scan/independent-reader.js';

process.env.TZ ??= 'Asia/Seoul';

const MYSQL = serverKind() === 'mysql';
/** Rows copied by the snapshot; their binlog twins get ids + TWIN. */
const ROWS = 40;
const TWIN = 1000;

const COLLATIONS = MYSQL ? ['utf8mb4_0900_ai_ci', 'utf8mb4_0900_as_cs', 'utf8mb4_0900_bin'] : ['utf8mb4_general_ci', 'utf8mb4_unicode_520_ci', 'utf8mb4_bin'];
const collationTable = (collation: string) => `k_${collation.replace(/^utf8mb4_/, '')}`;

/** Feature tables: name → [DDL, the columns an INSERT names (invisible included, generated left out), a row's values for id i]. */
const FEATURES: Record<string, { ddl: string; columns: string; values: (i: number) => string }> = {
  inv: {
    // INVISIBLE (MySQL 8.0.23+, MariaDB 10.3+): SELECT * leaves them out, but they are table columns
    ddl: "CREATE TABLE inv (id INT PRIMARY KEY, a VARCHAR(20), secret VARCHAR(20) INVISIBLE DEFAULT 'hidden', n INT INVISIBLE, tail INT)",
    columns: 'id, a, secret, n, tail',
    values: (i) => `${i}, 'a${i}', ${i % 3 === 0 ? 'DEFAULT' : `'s${i}'`}, ${i % 4 === 0 ? 'NULL' : i * 7}, ${i}`,
  },
  gen: {
    ddl: `CREATE TABLE gen (id INT PRIMARY KEY, price DECIMAL(10,2), qty INT,
      total DECIMAL(12,2) AS (price * qty) VIRTUAL,
      label VARCHAR(40) AS (CONCAT('#', qty, '@', price)) STORED,
      j JSON,
      jk VARCHAR(20) AS (JSON_UNQUOTE(JSON_EXTRACT(j, '$.k'))) VIRTUAL,
      note VARCHAR(20))`,
    columns: 'id, price, qty, j, note',
    values: (i) => `${i}, ${i}.25, ${i % 5}, ${i % 6 === 0 ? 'NULL' : `'{"k": "v${i}", "n": ${i}}'`}, 'g${i}'`,
  },
  edef: {
    // expression defaults (MySQL 8.0.13+, MariaDB 10.2+): values per row, no Iceberg write-default
    ddl: `CREATE TABLE edef (id INT PRIMARY KEY,
      u VARCHAR(36) DEFAULT (UUID()),
      d DATE DEFAULT (CURRENT_DATE),
      n INT DEFAULT (1 + 1),
      j JSON DEFAULT (JSON_OBJECT('a', 1)),
      ts DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6),
      lit INT DEFAULT 7)`,
    columns: 'id, u, d, n, j, ts, lit',
    values: (i) => (i % 2 === 0 ? `${i}, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT` : `${i}, 'u${i}', '2024-01-0${1 + (i % 9)}', ${i}, '[${i}]', '2024-05-06 07:08:09.${String(i).padStart(6, '0')}', ${i}`),
  },
  chk: {
    ddl: `CREATE TABLE chk (id INT PRIMARY KEY, qty INT CHECK (qty >= 0), price DECIMAL(8,2),
      CONSTRAINT price_pos CHECK (price > 0)${MYSQL ? ', CONSTRAINT small CHECK (qty < 100000) NOT ENFORCED' : ''})`,
    columns: 'id, qty, price',
    values: (i) => `${i}, ${i * 3}, ${i}.75`,
  },
  ...(MYSQL
    ? {
        fidx: {
          // functional key parts (8.0.13+) and a multi-valued index (8.0.17+) are hidden virtual columns
          ddl: `CREATE TABLE fidx (id INT PRIMARY KEY, email VARCHAR(60), doc JSON, tail VARCHAR(10),
            INDEX by_lower ((LOWER(email))),
            INDEX by_n ((CAST(JSON_UNQUOTE(JSON_EXTRACT(doc, '$.n')) AS SIGNED))),
            INDEX by_tags ((CAST(doc->'$.tags' AS UNSIGNED ARRAY))))`,
          columns: 'id, email, doc, tail',
          values: (i: number) => `${i}, 'User${i}@Example.COM', '{"n": ${i}, "tags": [${i}, ${i + 1}]}', 't${i}'`,
        },
      }
    : {}),
};

const DDL_TABLES = ['live', 'stopped'];
const DDL_SCHEMA = (name: string) => `CREATE TABLE ${name} (id INT PRIMARY KEY, a VARCHAR(20), b INT, c VARCHAR(10) DEFAULT 'c')`;

/** Candidate keys: case, accents, ligatures, trailing spaces, 4-byte characters (INSERT IGNORE keeps one per collation class). */
function candidateKeys(): string[] {
  const stems = ['a', 'A', 'á', 'Á', 'ä', 'ae', 'æ', 'Æ', 'ss', 'ß', 'SS', 'o', 'ö', 'Ö', 'z', 'Z', 'ž', '😀', '한', 'ǆ', 'ǅ', 'Ǆ', 'e', 'é', 'è', 'E'];
  const keys: string[] = [];
  for (const s of stems) for (let n = 0; n < 12; n++) keys.push(`${s}${n}`, `${s.toUpperCase()}${n}x`, `${s} ${n}`);
  for (const s of stems) keys.push(s, `${s} `, `${s}\t`);
  return keys;
}

/** Updated by a client that turns binlog_row_value_options=PARTIAL_JSON (MySQL) and binlog_row_image=MINIMAL on. */
const SESSION_TABLES = ['pjson', 'plain'];

const ALL_TABLES = [...Object.keys(FEATURES), ...DDL_TABLES, ...COLLATIONS.map(collationTable), ...SESSION_TABLES];

function schema(): string[] {
  const out: string[] = [];
  for (const [name, f] of Object.entries(FEATURES)) {
    out.push(f.ddl);
    out.push(`INSERT INTO ${name} (${f.columns}) VALUES ${Array.from({ length: ROWS }, (_, i) => `(${f.values(i + 1)})`).join(', ')}`);
  }
  for (const t of DDL_TABLES) {
    out.push(DDL_SCHEMA(t));
    out.push(`INSERT INTO ${t} VALUES ${Array.from({ length: ROWS }, (_, i) => `(${i + 1}, 'a${i + 1}', ${i}, 'c${i % 3}')`).join(', ')}`);
  }
  out.push('CREATE TABLE pjson (id INT PRIMARY KEY, doc JSON, tags JSON, n INT)');
  out.push(
    `INSERT INTO pjson VALUES ${Array.from(
      { length: ROWS },
      (_, i) => `(${i + 1}, '{"n": ${i}, "name": "item ${i}", "list": [${i}, ${i + 1}, ${i + 2}], "nested": {"deep": {"x": ${i % 3 === 0 ? 'null' : `"v${i}"`}}}, "한": ${i}.5}', '["t${i % 4}"]', ${i})`,
    ).join(', ')}`,
  );
  out.push('CREATE TABLE plain (id INT PRIMARY KEY, v INT, w VARCHAR(10))');
  out.push(`INSERT INTO plain VALUES ${Array.from({ length: ROWS }, (_, i) => `(${i + 1}, ${i}, 'w${i}')`).join(', ')}`);
  for (const collation of COLLATIONS) {
    const t = collationTable(collation);
    out.push(`CREATE TABLE ${t} (k VARCHAR(40) CHARACTER SET utf8mb4 COLLATE ${collation} PRIMARY KEY, v INT NOT NULL, w VARCHAR(40))`);
    out.push(`INSERT IGNORE INTO ${t} VALUES ${candidateKeys().map((k, i) => `(${quote(k)}, ${i}, ${quote(k)})`).join(', ')}`);
  }
  return out;
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

async function lakeRows(h: Harness, table: string): Promise<{ names: string[]; rows: Row[] }> {
  const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: table });
  const names = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!.fields.map((f) => f.name);
  return { names, rows: await readTableRows(t) };
}

/** Lines the pipeline logs (JSON), for its notes. */
function recordingLogger(lines: string[]) {
  return createLogger({
    level: 'info',
    format: 'json',
    destination: new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    }),
  });
}

/** Changes keys of every chunk until stopped: updates through other spellings of a key, inserts, deletes. */
function keyChurn(conn: mysql.Connection, tables: readonly string[]): { stop: () => Promise<number> } {
  let running = true;
  let statements = 0;
  const keys = candidateKeys();
  const loop = (async () => {
    let i = 0;
    while (running) {
      const t = tables[i % tables.length]!;
      const k = keys[(i * 7919) % keys.length]!;
      switch (i % 4) {
        case 0:
          // another spelling of the key: under a _ci collation it finds the stored one
          await conn.query(`UPDATE ${t} SET v = v + 1, w = ${quote(`u${i}`)} WHERE k = ${quote(k.toUpperCase())}`);
          break;
        case 1:
          await conn.query(`INSERT IGNORE INTO ${t} VALUES (${quote(`${k}~${i}`)}, ${i}, 'new')`);
          break;
        case 2:
          await conn.query(`DELETE FROM ${t} WHERE k = ${quote(k)}`);
          break;
        default:
          await conn.query(`INSERT INTO ${t} VALUES (${quote(k)}, ${i}, 'back') ON DUPLICATE KEY UPDATE v = ${i}`);
      }
      statements++;
      i++;
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return statements;
    },
  };
}

describe.each(['FULL', 'MINIMAL'])('MySQL 8 schema features through snapshot and binlog (binlog_row_metadata=%s)', (metadata) => {
  let server: LocalServer;
  let h: Harness;
  const logLines: string[] = [];

  beforeAll(async () => {
    server = await startTestServer({ serverId: metadata === 'FULL' ? 41 : 42, extraArgs: [`--binlog-row-metadata=${metadata}`] });
    h = await openHarness(`feat_${metadata.toLowerCase()}`, `features-${metadata.toLowerCase()}`, ALL_TABLES, schema(), {}, server);
    const conn = await sql(server);
    try {
      const [rows] = (await conn.query('SELECT @@GLOBAL.binlog_row_metadata AS m')) as unknown as [{ m: string }[]];
      expect(rows[0]!.m).toBe(metadata);
    } finally {
      await conn.end();
    }
  });

  afterAll(async () => {
    await h?.close();
    await server?.stop();
  });

  it('copies every feature table by snapshot and by binlog into identical rows that equal MySQL', async () => {
    const churnConn = await sql(server);
    await churnConn.query(`USE \`${h.db}\``);
    const churn = keyChurn(churnConn, COLLATIONS.map(collationTable));
    const run = h.start({}, recordingLogger(logLines));
    let churned = 0;
    try {
      await h.untilStreaming(run);
      churned = await churn.stop();

      // the binlog twins: the same values under new ids
      for (const [name, f] of Object.entries(FEATURES)) {
        await h.exec(`INSERT INTO ${name} (${f.columns}) SELECT ${f.columns.replace(/^id\b/, `id + ${TWIN}`)} FROM ${name} WHERE id <= ${ROWS}`);
      }
      await h.catchUp(run, ALL_TABLES);
      for (const name of Object.keys(FEATURES)) await expectTwins(h, name);

      // updates (before images of every feature) and deletes, then new rows with defaults
      await h.exec(`UPDATE inv SET secret = CONCAT(secret, '+'), n = 1 WHERE id % 3 = 1`);
      await h.exec('UPDATE gen SET qty = qty + 10, j = JSON_SET(COALESCE(j, JSON_OBJECT()), \'$.k\', \'changed\') WHERE id % 4 = 0');
      await h.exec('UPDATE edef SET lit = lit + 100 WHERE id % 2 = 1');
      await h.exec("INSERT INTO edef (id) VALUES (500), (501)");
      await h.exec('UPDATE chk SET qty = qty + 1 WHERE id < 10');
      await h.exec('DELETE FROM inv WHERE id = 5');
      await h.exec('DELETE FROM gen WHERE id = 6');
      await h.exec('ALTER TABLE chk ADD CONSTRAINT not14 CHECK (qty <> 14)');
      if (MYSQL) {
        await h.exec("UPDATE fidx SET email = 'X@Y.Z', doc = JSON_ARRAY_APPEND(doc, '$.tags', 99) WHERE id = 2");
        await h.exec('ALTER TABLE fidx ADD INDEX by_tail ((UPPER(tail)))');
        await h.exec("INSERT INTO fidx VALUES (600, 'After@Index', '{\"n\": 600, \"tags\": []}', 'after')");
        await h.exec('ALTER TABLE chk ALTER CHECK price_pos NOT ENFORCED, DROP CHECK small');
        await h.exec('INSERT INTO chk VALUES (700, 5, -1.00)'); // price_pos no longer enforced
      }
      await h.exec('ALTER TABLE chk DROP CONSTRAINT not14');
      await h.exec('INSERT INTO chk VALUES (701, 14, 2.00)');
      await h.catchUp(run, ALL_TABLES);
      for (const name of [...Object.keys(FEATURES), ...COLLATIONS.map(collationTable)]) await h.expectLakeEqualsMysql(name);
      for (const name of Object.keys(FEATURES)) await expectIndependentlyReadEqualsMysql(h, name);
    } finally {
      await churn.stop();
      await churnConn.end();
      const result = await run.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }
    expect(churned).toBeGreaterThan(0);

    // no lake column for the hidden columns of functional indexes; invisible and generated ones are there
    const names = async (t: string) => (await lakeRows(h, t)).names;
    expect(await names('inv')).toEqual(['id', 'a', 'secret', 'n', 'tail']);
    expect(await names('gen')).toEqual(['id', 'price', 'qty', 'total', 'label', 'j', 'jk', 'note']);
    if (MYSQL) expect(await names('fidx')).toEqual(['id', 'email', 'doc', 'tail']);

    // values computed here, not by floe: invisible ones, virtual and stored generated ones
    const row = async (t: string, id: number) => {
      const { names: cols, rows } = await lakeRows(h, t);
      const r = rows.find((x) => x[cols.indexOf('id')] === id)!;
      return Object.fromEntries(cols.map((c, i) => [c, r[i]]));
    };
    expect(await row('inv', 3)).toMatchObject({ secret: 'hidden', n: 21 });
    expect(await row('inv', 3 + TWIN)).toMatchObject({ secret: 'hidden+', n: 1 }); // 1003 % 3 = 1: updated
    for (const id of [3, 3 + TWIN]) expect(await row('gen', id)).toMatchObject({ price: '3.25', qty: 3, total: '9.75', label: '#3@3.25', jk: 'v3' });
    // updated after the copy: qty 4 + 10, $.k changed; the twin (1004) kept its values
    expect(await row('gen', 4)).toMatchObject({ qty: 14, total: '59.50', label: '#14@4.25', jk: 'changed' });
    expect(await row('gen', 4 + TWIN)).toMatchObject({ qty: 14, total: '59.50', jk: 'changed' });

    // expression defaults: no write-default, a note; the literal default is one
    const edef = await loadCatalogTable(h.catalog, { namespace: [h.db], name: 'edef' });
    const fields = edef.metadata.schemas.find((s) => s.schemaId === edef.metadata.currentSchemaId)!.fields;
    expect(fields.filter((f) => f.writeDefault !== undefined).map((f) => [f.name, f.writeDefault])).toEqual([['lit', 7]]);
    const notes = logLines.map((l) => JSON.parse(l) as { msg: string; table?: string }).filter((l) => l.table === `${h.db}.edef`).map((l) => l.msg);
    for (const c of ['u', 'd', 'n', 'j', 'ts']) {
      expect(notes.filter((m) => m.startsWith(`column ${c}: `)), `the note for ${c}`).toEqual([expect.stringMatching(/: default not carried to Iceberg \(the default is the expression .+, evaluated per row\)$/)]);
    }
    expect(notes.filter((m) => m.startsWith('column lit: '))).toEqual([]);
  });

  it('applies RENAME COLUMN and INSTANT ADD (at the end, AFTER a column) and DROP while streaming, and the same while stopped', async () => {
    const fieldIds = async (t: string) => {
      const table = await loadCatalogTable(h.catalog, { namespace: [h.db], name: t });
      return Object.fromEntries(table.metadata.schemas.find((s) => s.schemaId === table.metadata.currentSchemaId)!.fields.map((f) => [f.name, f.id]));
    };
    const before = { live: await fieldIds('live'), stopped: await fieldIds('stopped') };
    // ALGORITHM=INSTANT: MySQL 8.0.29+ (AFTER and DROP: row versions), MariaDB 10.4+ (reordering, DROP)
    const instant = ', ALGORITHM=INSTANT';
    const changes = async (t: string) => {
      await h.exec(`INSERT INTO ${t} VALUES (100, 'x', 1, 'c')`);
      await h.exec(`ALTER TABLE ${t} RENAME COLUMN a TO a2`);
      await h.exec(`UPDATE ${t} SET a2 = CONCAT(a2, '!') WHERE id <= 3`);
      await h.exec(`ALTER TABLE ${t} ADD COLUMN tail VARCHAR(8) NOT NULL DEFAULT 'zz'${instant}`);
      await h.exec(`ALTER TABLE ${t} ADD COLUMN mid INT DEFAULT 5 AFTER id${instant}`);
      // rows written before the ADDs, updated after them (8.0.29 row versions), and new ones
      await h.exec(`UPDATE ${t} SET b = b + 100 WHERE id % 5 = 0`);
      await h.exec(`INSERT INTO ${t} (id, mid, a2, b, c, tail) VALUES (101, 55, 'y', 2, 'cc', 'yy')`);
      await h.exec(`ALTER TABLE ${t} DROP COLUMN b${instant}`);
      await h.exec(`UPDATE ${t} SET mid = mid * 2 WHERE id % 7 = 0`);
      await h.exec(`DELETE FROM ${t} WHERE id = 4`);
      await h.exec(`INSERT INTO ${t} (id, mid, a2, c, tail) VALUES (102, NULL, 'z', 'ccc', DEFAULT)`);
    };

    const run = h.start();
    try {
      await h.untilStreaming(run);
      await changes('live');
      await h.catchUp(run, ALL_TABLES);
      await h.expectLakeEqualsMysql('live');
    } finally {
      const result = await run.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }

    await changes('stopped');
    const again = h.start();
    try {
      await h.untilStreaming(again);
      await h.catchUp(again, ALL_TABLES);
      for (const t of DDL_TABLES) await h.expectLakeEqualsMysql(t);
    } finally {
      const result = await again.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }

    for (const t of DDL_TABLES) {
      const after = await fieldIds(t);
      expect(after.a2, `${t}: RENAME COLUMN keeps the field id`).toBe(before[t as 'live'].a);
      expect(after.id).toBe(before[t as 'live'].id);
      expect(after.c).toBe(before[t as 'live'].c);
      expect(Object.keys(after).sort()).toEqual(['a2', 'c', 'id', 'mid', 'tail']);
      // the added columns are new fields: the rows written before read their MySQL defaults
      expect(after.mid).toBeGreaterThan(Math.max(...Object.values(before[t as 'live'])));
    }
  });
  it('decodes the partial JSON updates of a client that turns PARTIAL_JSON on while floe streams, and stops at images without every column', async () => {
    const client = await sql(server);
    await client.query(`USE \`${h.db}\``);
    const run = h.start();
    try {
      await h.untilStreaming(run);
      // a session variable: any client allowed to set it can, whatever the server's global value
      if (MYSQL) await client.query("SET SESSION binlog_row_value_options = 'PARTIAL_JSON'");
      await client.query(`UPDATE pjson SET doc = JSON_SET(doc, '$.n', n + 100, '$.added', 'x', '$.list[1]', 'one', '$.list[9]', 'end') WHERE id % 2 = 0`);
      await client.query(`UPDATE pjson SET doc = JSON_REMOVE(doc, '$.list[0]', '$."한"'), n = n + 1 WHERE id % 3 = 0`);
      await client.query(`UPDATE pjson SET doc = JSON_REPLACE(doc, '$.nested.deep.x', JSON_OBJECT('k', 1.5), '$.list[last]', NULL), tags = JSON_SET(tags, '$[0]', 'T') WHERE id % 5 = 0`);
      await client.beginTransaction();
      await client.query(`UPDATE pjson SET doc = JSON_SET(doc, '$.name', CONCAT('renamed ', id)) WHERE id < 10`);
      await client.query('UPDATE plain SET v = v + 1 WHERE id < 20');
      await client.query(`UPDATE pjson SET n = n * 2 WHERE id > 30`);
      await client.commit();
      await h.catchUp(run, ALL_TABLES);
      for (const t of SESSION_TABLES) await h.expectLakeEqualsMysql(t);
      await expectIndependentlyReadEqualsMysql(h, 'pjson');
      if (MYSQL) expect(await partialUpdateEvents(server, 'pjson')).toBeGreaterThan(0);

      // binlog_row_image=MINIMAL in a session: the update's after image lacks the unchanged columns
      await client.query("SET SESSION binlog_row_image = 'MINIMAL'");
      await client.query("UPDATE plain SET w = 'minimal' WHERE id = 1");
      const ended = await Promise.race([run.result, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 30_000))]);
      expect(ended?.reason).toBe('failed');
      expect(String(ended?.error)).toMatch(
        new RegExp(`rows event of ${h.db}\\.plain: expected full row images, found update images without the columns id, v — the session that wrote them ran with binlog_row_image=MINIMAL or NOBLOB \\(or MariaDB's FULL_NODUP\\), .* Set binlog_row_image=FULL for that client \\(and globally\\), then re-snapshot the table`),
      );
    } finally {
      await client.end();
      await run.stop();
    }
  });
});

/** The lake read by the independent reader (avsc, hyparquet, its own delete rules) equals MySQL. */
async function expectIndependentlyReadEqualsMysql(h: Harness, table: string): Promise<void> {
  const t = await loadCatalogTable(h.catalog, { namespace: [h.db], name: table });
  const names = t.metadata.schemas.find((s) => s.schemaId === t.metadata.currentSchemaId)!.fields.map((f) => f.name);
  const rows = (await readIndependently(t.metadataLocation)).map(canonicalRow).sort();
  const expected = await mysqlTableRows(h.server, h.db, table, names);
  expect({ table, ...multisetDifference(expected, rows), count: rows.length }).toEqual({ table, missing: [], unexpected: [], count: expected.length });
}

/** Rows events of `table` logged as PARTIAL_UPDATE_ROWS_EVENT so far (SHOW BINLOG EVENTS: Update_rows_partial). */
async function partialUpdateEvents(server: LocalServer, table: string): Promise<number> {
  const conn = await sql(server);
  try {
    const [logs] = (await conn.query('SHOW BINARY LOGS')) as unknown as [{ Log_name: string }[]];
    let n = 0;
    for (const { Log_name } of logs) {
      const [events] = (await conn.query(`SHOW BINLOG EVENTS IN '${Log_name}'`)) as unknown as [{ Event_type: string; Info: string }[]];
      let mapped = false;
      for (const e of events) {
        // Info: 'table_id: 106 (db.t)'
        if (e.Event_type === 'Table_map') mapped = e.Info.endsWith(`.${table})`);
        else if (e.Event_type === 'Update_rows_partial' && mapped) n++;
      }
    }
    return n;
  } finally {
    await conn.end();
  }
}

/** Every binlog twin (id + TWIN) equals its snapshot row in every column but the id. */
async function expectTwins(h: Harness, table: string): Promise<void> {
  const { names, rows } = await lakeRows(h, table);
  const id = names.indexOf('id');
  const byId = new Map(rows.map((r) => [Number(r[id]), r]));
  const mismatches: string[] = [];
  for (let i = 1; i <= ROWS; i++) {
    const snap = byId.get(i);
    const twin = byId.get(i + TWIN);
    if (!snap || !twin) {
      mismatches.push(`${table} id ${i}: ${snap ? '' : 'snapshot row missing '}${twin ? '' : 'binlog twin missing'}`);
      continue;
    }
    const a = canonicalRow(snap.filter((_, k) => k !== id));
    const b = canonicalRow(twin.filter((_, k) => k !== id));
    if (a !== b) mismatches.push(`${table} id ${i}: snapshot ${a} ≠ binlog ${b}`);
  }
  expect(mismatches).toEqual([]);
}

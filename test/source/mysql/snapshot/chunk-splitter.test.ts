/**
 * Chunk splitting against the harness server: for every key shape, the chunks' SELECTs together return
 * every row exactly once, the chunk count is near rows / chunkSize, chunks survive serialization, and
 * ChunkLocator (the in-process / server-assisted key comparison H6 uses for backfill and hand-over)
 * places every row's key in the chunk whose SELECT returned it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectMysql, type MysqlClient } from '../../../../src/source/mysql/client.js';
import { detectDialect, type ServerFlavor } from '../../../../src/source/mysql/dialect.js';
import { captureTableSchema } from '../../../../src/source/mysql/schema/table-schema.js';
import { mapTable, type MappedTable } from '../../../../src/source/mysql/schema/type-mapping.js';
import { splitTable, planSplit, type SplitOptions } from '../../../../src/source/mysql/snapshot/chunk-splitter.js';
import { chunkSql, chunkKeyColumns, serializeChunk, parseChunk, ChunkLocator, type Chunk } from '../../../../src/source/mysql/snapshot/chunk.js';
import { createKeyComparator, serverCollationWeigher } from '../../../../src/source/mysql/snapshot/key-compare.js';
import { createSnapshotRowConverter, snapshotSelectList } from '../../../../src/source/mysql/snapshot/snapshot-values.js';
import type { Value } from '../../../../src/model/values.js';
import { toHex } from '../../../../src/model/values.js';
import { sharedMysqlConfig, createTestDatabase } from '../../../support/shared-mysql.js';
import { prng } from '../../../../src/util/prng.js';

let client: MysqlClient;
let flavor: ServerFlavor;
let db: string;


function randomU64(rand: () => number): bigint {
  const hi = BigInt(Math.floor(rand() * 2 ** 32));
  const lo = BigInt(Math.floor(rand() * 2 ** 32));
  return (hi << 32n) | lo;
}

async function insertMany(table: string, columns: string, rows: string[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500) {
    await client.query(`INSERT INTO ${table} (${columns}) VALUES ${rows.slice(i, i + 500).join(', ')}`);
  }
}

async function mapped(table: string): Promise<MappedTable> {
  flavor = (await detectDialect(client)).flavor;
  return mapTable(await captureTableSchema(client, { database: db, table }, flavor));
}

function rowKey(row: Value[]): string {
  return row.map((v) => (v instanceof Uint8Array ? 'x' + toHex(v) : typeof v === 'bigint' ? v.toString() + 'n' : JSON.stringify(v))).join('|');
}

interface Coverage {
  chunks: Chunk[];
  rows: number;
}

/**
 * Splits, then reads every chunk: asserts the union of chunk rows equals a full-table read (as a
 * multiset, and with no row in two chunks), round-trips every chunk through serialization, and checks
 * ChunkLocator puts each row's chunk key in the chunk that returned it.
 */
async function checkCoverage(table: string, options: SplitOptions): Promise<Coverage> {
  const t = await mapped(table);
  const convert = createSnapshotRowConverter(t);
  const chunks: Chunk[] = [];
  for await (const c of splitTable(client, t, flavor, options)) chunks.push(c);
  expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));

  const full = new Map<string, number>();
  for await (const raw of client.stream(`SELECT ${snapshotSelectList(t, flavor)} FROM \`${db}\`.\`${table}\``)) {
    const k = rowKey(convert(raw));
    full.set(k, (full.get(k) ?? 0) + 1);
  }

  const seen = new Map<string, number>();
  const keyColumns = chunks.length > 0 ? chunkKeyColumns(t, chunks[0]) : [];
  const keyIdx = keyColumns.map((k) => t.columns.indexOf(k));
  const comparator = createKeyComparator(keyColumns, serverCollationWeigher(client));
  const locator = new ChunkLocator(comparator, chunks);
  for (const chunk of chunks) {
    expect(parseChunk(serializeChunk(chunk))).toEqual(chunk);
    const keys: Value[][] = [];
    for await (const raw of client.stream(chunkSql(t, chunk, flavor))) {
      const row = convert(raw);
      const k = rowKey(row);
      seen.set(k, (seen.get(k) ?? 0) + 1);
      keys.push(keyIdx.map((i) => row[i]));
    }
    if (keyColumns.length > 0) {
      const located = await locator.locateMany(keys);
      const wrong = located.map((l, i) => [l, keys[i]] as const).filter(([l]) => l !== chunk.index);
      expect(wrong.slice(0, 3), `keys of chunk ${chunk.index} located elsewhere`).toEqual([]);
    }
  }
  expect(seen).toEqual(full);
  let rows = 0;
  for (const n of full.values()) rows += n;
  return { chunks, rows };
}

beforeAll(async () => {
  db = await createTestDatabase('split');
  client = await connectMysql({ ...sharedMysqlConfig(), database: db });
});

afterAll(async () => {
  await client?.query(`DROP DATABASE IF EXISTS \`${db}\``);
  await client?.close();
});

describe('chunk splitter', () => {
  it('walks BIGINT UNSIGNED keys spread over 0..2^64-1 without overflow', async () => {
    await client.query('CREATE TABLE u64 (id BIGINT UNSIGNED PRIMARY KEY, v INT)');
    const rand = prng(1);
    const keys = new Set<bigint>([0n, 1n, 2n ** 63n - 1n, 2n ** 63n, 2n ** 64n - 2n, 2n ** 64n - 1n]);
    while (keys.size < 2500) keys.add(randomU64(rand));
    await insertMany('u64', 'id, v', [...keys].map((k, i) => `(${k}, ${i})`));
    const plan = await planSplit(client, await mapped('u64'), { chunkSize: 100 });
    expect(plan.strategy).toBe('walk');
    const { chunks, rows } = await checkCoverage('u64', { chunkSize: 100 });
    expect(rows).toBe(2500);
    expect(chunks.length).toBe(25); // 24 chunks of exactly 100 rows and the open-ended last one
    expect(chunks[chunks.length - 1].lower).toBeDefined();
  });

  it('splits dense BIGINT UNSIGNED keys at the top of the range evenly, ending at 2^64-1', async () => {
    await client.query('CREATE TABLE u64_top (id BIGINT UNSIGNED PRIMARY KEY)');
    const top = 2n ** 64n - 1n;
    const rows: string[] = [];
    for (let i = 0n; i < 3000n; i++) if (i % 7n !== 3n) rows.push(`(${top - i})`);
    await insertMany('u64_top', 'id', rows);
    const plan = await planSplit(client, await mapped('u64_top'), { chunkSize: 256 });
    expect(plan.strategy).toBe('even');
    expect(plan.max).toBe(top);
    const { chunks } = await checkCoverage('u64_top', { chunkSize: 256 });
    const expected = Math.ceil(Number(plan.max! - plan.min! + 1n) / Number(plan.step!));
    expect(chunks.length).toBe(expected);
    expect(chunks.length).toBeGreaterThanOrEqual(Math.floor(rows.length / 256));
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(rows.length / 256) + 2);
    for (const c of chunks) for (const b of [c.lower, c.upper]) if (b) expect(BigInt(b[0] as string) <= top).toBe(true);
  });

  it('splits dense signed keys evenly and sparse ones by walking', async () => {
    await client.query('CREATE TABLE dense (id INT PRIMARY KEY, v VARCHAR(10))');
    await insertMany('dense', 'id, v', Array.from({ length: 4000 }, (_, i) => `(${i + 1}, 'r${i}')`));
    expect((await planSplit(client, await mapped('dense'), { chunkSize: 500 })).strategy).toBe('even');
    const dense = await checkCoverage('dense', { chunkSize: 500 });
    expect(dense.chunks.length).toBe(8);

    await client.query('CREATE TABLE sparse (id BIGINT PRIMARY KEY)');
    await insertMany('sparse', 'id', Array.from({ length: 3000 }, (_, i) => `(${BigInt(i - 1500) * 3_000_000_000_000n + BigInt(i % 13)})`));
    expect((await planSplit(client, await mapped('sparse'), { chunkSize: 250 })).strategy).toBe('walk');
    const sparse = await checkCoverage('sparse', { chunkSize: 250 });
    expect(sparse.chunks.length).toBe(12);
  });

  it('walks VARBINARY keys in byte order (no single giant chunk)', async () => {
    await client.query('CREATE TABLE vb (id VARBINARY(16) PRIMARY KEY, n INT)');
    const rand = prng(2);
    const keys = new Set<string>(['', '00', '0000', 'ff', 'ffff', '7f', '80']);
    while (keys.size < 2000) {
      const len = 1 + Math.floor(rand() * 12);
      keys.add(Array.from({ length: len }, () => Math.floor(rand() * 256).toString(16).padStart(2, '0')).join(''));
    }
    await insertMany('vb', 'id, n', [...keys].map((k, i) => `(X'${k}', ${i})`));
    const { chunks, rows } = await checkCoverage('vb', { chunkSize: 128 });
    expect(rows).toBe(2000);
    expect(chunks.length).toBe(Math.floor((2000 - 1) / 128) + 1);
  });

  it('walks string keys in the column collation (case-insensitive, accents, 4-byte characters)', async () => {
    await client.query('CREATE TABLE s_ci (k VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci PRIMARY KEY, n INT)');
    await client.query('CREATE TABLE s_bin (k VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PRIMARY KEY, n INT)');
    await client.query('CREATE TABLE s_uca (k VARCHAR(40) CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci PRIMARY KEY, n INT)');
    const rand = prng(3);
    const alphabet = ['a', 'B', 'c', 'Ä', 'é', 'ß', 'z', 'Z', '0', ' ', '-', '😀', '한', '\t', 'ǅ'];
    const values: string[] = [];
    const seenCi = new Set<string>();
    while (values.length < 1500) {
      const len = 1 + Math.floor(rand() * 8);
      let s = Array.from({ length: len }, () => alphabet[Math.floor(rand() * alphabet.length)]).join('');
      s = s.replace(/ +$/, '') || 'x'; // trailing spaces are insignificant under PAD SPACE
      // keep values distinct under the weakest collation used here
      const { rows } = await client.queryArrays(`SELECT HEX(WEIGHT_STRING(CONVERT(_utf8mb4 X'${Buffer.from(s).toString('hex')}' USING utf8mb4) COLLATE utf8mb4_general_ci)), HEX(WEIGHT_STRING(CONVERT(_utf8mb4 X'${Buffer.from(s).toString('hex')}' USING utf8mb4) COLLATE utf8mb4_unicode_ci))`);
      const w = `${rows[0][0]}/${rows[0][1]}`;
      const wci = String(rows[0][0]);
      const wuca = String(rows[0][1]);
      if (seenCi.has('g' + wci) || seenCi.has('u' + wuca) || seenCi.has(w)) continue;
      seenCi.add('g' + wci);
      seenCi.add('u' + wuca);
      values.push(s);
    }
    const literal = (s: string) => `_utf8mb4 X'${Buffer.from(s).toString('hex')}'`;
    for (const t of ['s_ci', 's_bin', 's_uca']) {
      await insertMany(t, 'k, n', values.map((s, i) => `(${literal(s)}, ${i})`));
      const { chunks, rows } = await checkCoverage(t, { chunkSize: 100 });
      expect(rows).toBe(1500);
      expect(chunks.length).toBe(15);
    }
  });

  it('walks composite keys lexicographically', async () => {
    await client.query('CREATE TABLE comp (a INT NOT NULL, b VARCHAR(10) NOT NULL, c BINARY(2) NOT NULL, v INT, PRIMARY KEY (a, b, c))');
    const rows: string[] = [];
    for (let a = 0; a < 5; a++) for (let b = 0; b < 20; b++) for (let c = 0; c < 30; c++) rows.push(`(${a * 1000}, 'k${String.fromCharCode(97 + (b % 26))}${b}', X'${c.toString(16).padStart(4, '0')}', ${rows.length})`);
    await insertMany('comp', 'a, b, c, v', rows);
    const { chunks, rows: n } = await checkCoverage('comp', { chunkSize: 64 });
    expect(n).toBe(3000);
    expect(chunks.length).toBe(Math.floor((3000 - 1) / 64) + 1);
    expect(chunks[1].keyColumns).toEqual(['a', 'b', 'c']);
    expect(chunks[1].lower).toHaveLength(3);
  });

  it('walks keys holding zero dates (which read as null) without losing them', async () => {
    await client.query('CREATE TABLE zd (d DATETIME NOT NULL, n INT NOT NULL, PRIMARY KEY (d, n))');
    await client.query("SET SESSION sql_mode = ''");
    await insertMany('zd', 'd, n', Array.from({ length: 600 }, (_, i) => `('${i < 250 ? '0000-00-00 00:00:00' : `2020-01-${String(1 + (i % 28)).padStart(2, '0')} 00:00:00`}', ${i})`));
    await client.query("SET SESSION sql_mode = 'NO_ENGINE_SUBSTITUTION'");
    const { chunks, rows } = await checkCoverage('zd', { chunkSize: 50 });
    expect(rows).toBe(600);
    expect(chunks.length).toBe(12);
    expect(chunks[2].lower![0]).toBeNull();
  });

  it('splits on a configured non-unique chunk key column, keeping equal values together', async () => {
    await client.query('CREATE TABLE cfg (id INT PRIMARY KEY, grp INT NOT NULL, KEY (grp))');
    // group 7 alone has 600 rows, more than a chunk
    await insertMany('cfg', 'id, grp', Array.from({ length: 2000 }, (_, i) => `(${i}, ${i < 600 ? 7 : 7 + (i % 50) * 11})`));
    const { chunks, rows } = await checkCoverage('cfg', { chunkSize: 100, chunkKeyColumn: 'grp' });
    expect(rows).toBe(2000);
    expect(chunks[0].keyColumns).toEqual(['grp']);
    expect(chunks.length).toBeGreaterThan(5);
    expect(chunks.length).toBeLessThanOrEqual(21);
  });

  it('walks a non-unique DOUBLE chunk key whose repeated value needs 16 digits', async () => {
    // mysql2 parsed the key 939.3362034233481 as 939.336203423348, just below the stored value: the
    // bound never equalled the repeated value, and the walk yielded empty chunks at it forever. Keys are
    // now read as the server's text (snapshotSelectExpression), which parses back to the stored value.
    await client.query('CREATE TABLE dbl (id INT PRIMARY KEY, v DOUBLE NOT NULL, KEY (v))');
    await insertMany('dbl', 'id, v', Array.from({ length: 1000 }, (_, i) => `(${i}, ${i < 300 ? '939.3362034233481e0' : (i * 1.1).toExponential(16)})`));
    const t = await mapped('dbl');
    const chunks: Chunk[] = [];
    for await (const c of splitTable(client, t, flavor, { chunkSize: 100, chunkKeyColumn: 'v' })) {
      chunks.push(c);
      if (chunks.length > 50) break;
    }
    expect(chunks.length).toBeLessThanOrEqual(15);
    expect(chunks.some((c) => c.lower?.[0] === 939.3362034233481)).toBe(true);
    const { rows } = await checkCoverage('dbl', { chunkSize: 100, chunkKeyColumn: 'v' });
    expect(rows).toBe(1000);
  });

  it('splits a table without primary key on its first index, NULLs included, chunks flagged keyless', async () => {
    await client.query('CREATE TABLE nopk (tag VARCHAR(10) NULL, payload INT, KEY (tag))');
    await insertMany('nopk', 'tag, payload', Array.from({ length: 1500 }, (_, i) => `(${i % 5 === 0 ? 'NULL' : `'t${i % 97}'`}, ${i})`));
    // duplicates of whole rows are legal without a key
    await insertMany('nopk', 'tag, payload', [`('t1', 1)`, `('t1', 1)`, `(NULL, 0)`]);
    const { chunks, rows } = await checkCoverage('nopk', { chunkSize: 100 });
    expect(rows).toBe(1503);
    expect(chunks.every((c) => c.keyless === true)).toBe(true);
    expect(chunks[0].keyColumns).toEqual(['tag']);
    expect(chunks.length).toBeGreaterThan(10);
    expect(chunks.length).toBeLessThanOrEqual(Math.ceil(1503 / 100) + 1); // near rows / chunkSize (300 NULLs stay together)

    await client.query('CREATE TABLE heap (a INT, b TEXT)');
    await insertMany('heap', 'a, b', Array.from({ length: 300 }, (_, i) => `(${i % 3}, 'x${i}')`));
    const heap = await checkCoverage('heap', { chunkSize: 100 });
    expect(heap.chunks).toHaveLength(1);
    expect(heap.chunks[0]).toMatchObject({ keyColumns: [], keyless: true });
    expect(heap.chunks[0].lower).toBeUndefined();
    // … unless a column is chosen for it (source.snapshot.chunkKeys): then it splits like any key.
    const chosen = await checkCoverage('heap', { chunkSize: 100, chunkKeyColumn: 'b' });
    expect(chosen.rows).toBe(300);
    expect(chosen.chunks.every((c) => c.keyless === true && c.keyColumns.length === 1 && c.keyColumns[0] === 'b')).toBe(true);
    expect(chosen.chunks.length).toBe(3);
  });

  it('handles an empty table and a table smaller than one chunk', async () => {
    await client.query('CREATE TABLE empty_t (id INT PRIMARY KEY)');
    expect((await checkCoverage('empty_t', {})).chunks).toHaveLength(1);
    await client.query('CREATE TABLE small_t (id VARCHAR(5) PRIMARY KEY)');
    await client.query("INSERT INTO small_t VALUES ('a'), ('b')");
    expect((await checkCoverage('small_t', {})).chunks).toHaveLength(1);
  });
});

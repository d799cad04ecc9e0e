/**
 * The tables the interop suites have floe replicate (from MariaDB, and from MySQL 8 in
 * mysql8-source.test.ts), and the changes they stream through them.
 *
 * Each table carries a set of features an engine must read right; the matrix in README names them
 * (`features`), together with what the lake table turned out to hold (partition spec, delete kinds —
 * read from the table, not claimed here):
 *
 * - `typed`: unpartitioned; values at the edges of long, decimal, double, float, timestamp,
 *   timestamptz, date, binary, string; rows of earlier checkpoints updated and deleted (v2 equality
 *   deletes, v3 deletion vectors through floe's key index), rows inserted, updated and deleted within
 *   one transaction (v2 position deletes, v3 DVs), an UPDATE of the primary key;
 * - `parted`: the same, partitioned by day(happened) and bucket(8, id), and an UPDATE that moves a
 *   row to another day and bucket;
 * - `hourly`: the same, partitioned by hour(happened), truncate(4, name) (code points, not UTF-16
 *   units: names with astral characters), truncate(10, id) and identity(day) (with nulls), and an
 *   UPDATE that moves a row to another hour and truncated name;
 * - `fresh`: no primary key, bucket(4, id); rows change only within the transaction that inserted
 *   them, so the table has position deletes / DVs and no equality delete;
 * - `keyless`: no primary key, unpartitioned; rows of earlier checkpoints updated and deleted, which
 *   floe writes as whole-row equality deletes in v2, and in v3 as deletion vectors of one copy each
 *   (the row index);
 * - `evolved`: schema changes by DDL while floe streams — columns added (v3: with literal defaults,
 *   so that rows written before read the initial-default; v2 cannot hold defaults, so its added
 *   column has none), a column renamed, a column dropped — then rows inserted and updated in the new
 *   layout;
 * - `all_types`: every MySQL type in README's type mapping (test/e2e/support/all-types.ts);
 * - `café-목록`: a table name with a dash and non-ASCII letters (Latin and Hangul), through every
 *   catalog's paths and URLs;
 * - `cascade_parent` with two `ON DELETE CASCADE` children, `cascade_lines` (primary key starting with
 *   the foreign key) and `cascade_notes` (its own key, the foreign key another column): parents of
 *   earlier checkpoints are deleted, and InnoDB logs no row of the children it removes, so floe
 *   deletes them itself (README, "Foreign keys") — by equality deletes on the foreign-key columns in
 *   v2 and, until deletion vectors reach cascades, in v3 too. The matrix shows what each child holds,
 *   read from the lake.
 */
import { ALL_TYPES_COLUMNS, ALL_TYPES_DDL, ALL_TYPES_SESSION, ALL_TYPES_VALUES } from '../../e2e/support/all-types.js';

export const ODD_NAME = 'café-목록';

export interface InteropTable {
  name: string;
  /** Partition transforms (floe's tables.overrides partitionBy). */
  partitionBy?: string[];
  /** Table properties floe creates the table with (tables.overrides properties). */
  properties?: Record<string, string>;
  /** What the table exercises, beyond what the lake table shows by itself (spec, delete kinds). */
  features: (formatVersion: 2 | 3) => string[];
}

export const INTEROP_TABLES: InteropTable[] = [
  { name: 'typed', features: () => ['updates and deletes of committed rows', 'same-transaction insert + update + delete', 'primary-key change'] },
  { name: 'parted', partitionBy: ['day(happened)', 'bucket(8, id)'], features: () => ['row moved to another partition', 'primary-key change'] },
  {
    name: 'hourly',
    partitionBy: ['hour(happened)', 'truncate(4, name)', 'truncate(10, id)', 'day'],
    properties: { 'write.parquet.compression-codec': 'snappy' },
    features: () => ['row moved to another partition', 'astral characters in a truncated string', 'Parquet in snappy (write.parquet.compression-codec)'],
  },
  {
    name: 'fresh',
    partitionBy: ['bucket(4, id)'],
    properties: { 'write.parquet.compression-codec': 'uncompressed' },
    features: () => ['no primary key', 'same-transaction changes only', 'Parquet uncompressed (write.parquet.compression-codec)'],
  },
  {
    name: 'keyless',
    properties: { 'write.parquet.compression-codec': 'gzip', 'write.delete.parquet.compression-codec': 'snappy' },
    features: (v) => ['no primary key', `updates and deletes of committed rows (${v === 3 ? 'deletion vectors through the row index' : 'whole-row equality deletes'})`, `Parquet in gzip${v === 2 ? ', deletes in snappy (write.delete.parquet.compression-codec)' : ' (write.parquet.compression-codec)'}`],
  },
  {
    name: 'evolved',
    features: (v) => (v === 3 ? ['columns added with literal defaults (old rows read the initial-default)', 'column renamed', 'column dropped'] : ['column added (v2: no defaults)', 'column renamed', 'column dropped']),
  },
  { name: 'all_types', features: () => ['every MySQL type floe maps', 'TIME as Iceberg time (S3 columns: long microseconds, source.timeAs: micros)'] },
  { name: ODD_NAME, features: () => ['table name with a dash and non-ASCII letters'] },
  { name: 'cascade_parent', features: () => ['parent of ON DELETE CASCADE children, parents deleted'] },
  { name: 'cascade_lines', features: () => ['ON DELETE CASCADE child, primary key starting with the foreign key', 'rows removed by cascade'] },
  { name: 'cascade_notes', features: () => ['ON DELETE CASCADE child, foreign key outside the primary key', 'rows removed by cascade'] },
];

/** floe's `tables.overrides` for the suite's tables in database `db`: their partitioning and properties. */
export function interopOverrides(db: string): Record<string, { partitionBy?: string[]; properties?: Record<string, string> }> {
  return Object.fromEntries(INTEROP_TABLES.filter((t) => t.partitionBy || t.properties).map((t) => [`${db}.${t.name}`, { ...(t.partitionBy ? { partitionBy: t.partitionBy } : {}), ...(t.properties ? { properties: t.properties } : {}) }]));
}

/** The cascade children (their rows go when a parent is deleted, without a binlog row of their own). */
export const CASCADE_CHILDREN = ['cascade_lines', 'cascade_notes'];

export const TIME_AS_MICROS_COLUMN = 'all_types.dur';

const q = (name: string) => `\`${name.replace(/`/g, '``')}\``;

const TYPED_DDL = (name: string) => `CREATE TABLE ${q(name)} (
  id BIGINT PRIMARY KEY, amount DECIMAL(12,2), ratio DOUBLE, f FLOAT, happened DATETIME(6) NOT NULL,
  stamped TIMESTAMP(6) NULL DEFAULT NULL, day DATE, payload VARBINARY(16), name VARCHAR(60))`;

const NAMES = ["plain", "quote '' and \\\" dq", 'tab\\there', 'line\\nbreak', '한글 ü €', '😀 astral', '', 'back\\\\slash', '😀😁😂🤣 four astral'];

/** A deterministic row of the TYPED_DDL tables for id `i` (values at the edges of each type). */
function typedRow(i: number): string {
  const amount = i % 7 === 0 ? 'NULL' : ((i % 2 === 0 ? 1 : -1) * (i * 13.37)).toFixed(2);
  const ratio = ['0.1', '1e21', '-2.5e-7', '3.141592653589793', '123456789012345680000', '-0', '1', 'NULL'][i % 8];
  const f = ['0.1', '3.4028235e38', '-1.5', '16777217', 'NULL', '1e-10', '7', '0.3'][i % 8];
  const day = 1 + (i % 28);
  const happened = `'${1999 + (i % 30)}-${String(1 + (i % 12)).padStart(2, '0')}-${String(day).padStart(2, '0')} ${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}:07.${String((i * 7919) % 1_000_000).padStart(6, '0')}'`;
  const stamped = i % 5 === 0 ? 'NULL' : `'20${String(10 + (i % 20)).padStart(2, '0')}-03-0${1 + (i % 9)} 0${i % 10}:30:00.${String(i).padStart(6, '0')}'`;
  const date = ["'1969-12-31'", "'1000-01-01'", "'9999-12-31'", "'2024-02-29'", 'NULL', "'1970-01-01'"][i % 6];
  const payload = i % 6 === 0 ? 'NULL' : i % 6 === 1 ? "X''" : `X'${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}00ff'`;
  const name = i % 11 === 10 ? 'NULL' : `'${NAMES[i % NAMES.length]} ${i}'`;
  return `(${i}, ${amount}, ${ratio}, ${f}, ${happened}, ${stamped}, ${date}, ${payload}, ${name})`;
}

type Exec = (statement: string) => Promise<void>;

/** Creates and fills every table of the suite in the current database. */
export async function createInteropTables(exec: Exec): Promise<void> {
  for (const s of ALL_TYPES_SESSION) await exec(s);
  const rows = (n: number) => Array.from({ length: n }, (_, i) => typedRow(i)).join(', ');
  for (const t of ['typed', 'parted', 'hourly']) {
    await exec(TYPED_DDL(t));
    await exec(`INSERT INTO ${t} VALUES ${rows(120)}`);
  }
  // no primary key: floe appends; changes of earlier rows become whole-row equality deletes (v2) or
  // deletion vectors of one copy each (v3)
  for (const t of ['fresh', 'keyless']) await exec(TYPED_DDL(t).replace('id BIGINT PRIMARY KEY', 'id BIGINT NOT NULL'));
  await exec(`INSERT INTO keyless VALUES ${rows(80)}`);
  await exec(`CREATE TABLE evolved (id INT PRIMARY KEY, a INT, old_name VARCHAR(30), gone VARCHAR(30), amount DECIMAL(8,2))`);
  await exec(`INSERT INTO evolved VALUES ${Array.from({ length: 60 }, (_, i) => `(${i}, ${i % 4 === 0 ? 'NULL' : i * 3}, 'before ${i}', 'gone ${i}', ${(i * 1.25).toFixed(2)})`).join(', ')}`);
  await exec(ALL_TYPES_DDL('all_types'));
  await exec(`INSERT INTO all_types (${ALL_TYPES_COLUMNS}) VALUES ${ALL_TYPES_VALUES.map((v, i) => `(${i + 1}, ${v})`).join(', ')}`);
  await exec(`CREATE TABLE ${q(ODD_NAME)} (id INT PRIMARY KEY, label VARCHAR(40) NOT NULL, qty INT)`);
  await exec(`INSERT INTO ${q(ODD_NAME)} VALUES ${Array.from({ length: 50 }, (_, i) => `(${i}, 'étiquette ${i} 목록', ${i % 3 === 0 ? 'NULL' : i})`).join(', ')}`);
  await exec(`CREATE TABLE cascade_parent (id INT PRIMARY KEY, name VARCHAR(30) NOT NULL)`);
  await exec(`CREATE TABLE cascade_lines (parent_id INT NOT NULL, line INT NOT NULL, sku VARCHAR(20), qty INT, PRIMARY KEY (parent_id, line),
    CONSTRAINT fk_lines_parent FOREIGN KEY (parent_id) REFERENCES cascade_parent (id) ON DELETE CASCADE)`);
  await exec(`CREATE TABLE cascade_notes (id BIGINT PRIMARY KEY, parent_id INT, note VARCHAR(40), KEY (parent_id),
    CONSTRAINT fk_notes_parent FOREIGN KEY (parent_id) REFERENCES cascade_parent (id) ON DELETE CASCADE)`);
  await exec(`INSERT INTO cascade_parent VALUES ${Array.from({ length: 40 }, (_, i) => `(${i}, 'parent ${i}')`).join(', ')}`);
  await exec(`INSERT INTO cascade_lines VALUES ${Array.from({ length: 120 }, (_, i) => `(${i % 40}, ${Math.floor(i / 40)}, 'SKU-${i}', ${i % 5})`).join(', ')}`);
  await exec(`INSERT INTO cascade_notes VALUES ${Array.from({ length: 80 }, (_, i) => `(${10_000 + i}, ${i % 8 === 7 ? 'NULL' : i % 40}, 'note ${i}')`).join(', ')}`);
}

/**
 * Changes streamed after the snapshot; rounds 0 and 1 land in different checkpoints (the suite waits
 * for floe to catch up in between). `transaction` runs statements in one MySQL transaction.
 */
export async function applyChanges(exec: Exec, transaction: (statements: string[]) => Promise<void>, round: number, formatVersion: 2 | 3): Promise<void> {
  const base = 1000 + round * 100;
  // One transaction: rows inserted, then updated and deleted in the same checkpoint → position
  // deletes (v2) / deletion vectors (v3) on the data file just written.
  for (const t of ['typed', 'parted', 'hourly', 'fresh']) {
    await transaction([
      `INSERT INTO ${t} VALUES ${Array.from({ length: 30 }, (_, i) => typedRow(base + i)).join(', ')}`,
      `UPDATE ${t} SET name = CONCAT('same-tx ', id), amount = amount * 2 WHERE id BETWEEN ${base} AND ${base + 9}`,
      `DELETE FROM ${t} WHERE id BETWEEN ${base + 20} AND ${base + 24}`,
    ]);
  }
  // Rows of earlier checkpoints: updated and deleted by key → equality deletes (v2) / DVs (v3).
  for (const t of ['typed', 'parted', 'hourly']) {
    await exec(`UPDATE ${t} SET ratio = ratio / 3, stamped = '2001-02-03 04:05:06.000007', name = 'updated ${round}' WHERE id % 10 = ${round}`);
    await exec(`DELETE FROM ${t} WHERE id % 17 = ${round + 3}`);
    await exec(`UPDATE ${t} SET id = id + 100000 WHERE id = ${40 + round}`); // primary key change
  }
  // Another partition for one row.
  await exec(`UPDATE parted SET happened = '2031-07-0${1 + round} 00:00:00' WHERE id = ${50 + round}`);
  await exec(`UPDATE hourly SET happened = '2031-07-01 0${3 + round}:59:59.999999', name = '😀moved ${round}', day = NULL WHERE id = ${52 + round}`);
  // keyless rows of earlier checkpoints: whole-row equality deletes (v2), deletion vectors (v3)
  await exec(`UPDATE keyless SET name = 'updated ${round}', amount = 1.5 WHERE id % 9 = ${round}`);
  await exec(`DELETE FROM keyless WHERE id % 13 = ${round + 2}`);
  await exec(`INSERT INTO keyless VALUES ${Array.from({ length: 10 }, (_, i) => typedRow(base + i)).join(', ')}`);
  await exec(`UPDATE all_types SET vc = 'changed ${round}', dtm6 = '2001-02-03 04:05:06.7' WHERE id = ${2 + round}`);
  await exec(`UPDATE ${q(ODD_NAME)} SET label = 'mis à jour ${round} 수정', qty = qty * 10 WHERE id % 5 = ${round}`);
  await exec(`DELETE FROM ${q(ODD_NAME)} WHERE id % 7 = ${round + 1}`);
  await exec(`UPDATE ${q(ODD_NAME)} SET id = id + 1000 WHERE id = ${20 + round}`);
  await exec(`INSERT INTO ${q(ODD_NAME)} VALUES (${500 + round}, 'nouveau ${round}', NULL)`);
  // Parents of earlier checkpoints deleted: their children go by cascade (no binlog row of their
  // own); a child row is changed first, and a new child added to a surviving parent.
  await exec(`UPDATE cascade_lines SET qty = qty + 100 WHERE parent_id = ${5 + round * 10} AND line = 0`);
  await exec(`DELETE FROM cascade_parent WHERE id IN (${5 + round * 10}, ${6 + round * 10}, ${7 + round * 10})`);
  await exec(`INSERT INTO cascade_lines VALUES (${1 + round}, ${10 + round}, 'added ${round}', 1)`);
  await exec(`INSERT INTO cascade_notes VALUES (${20_000 + round}, ${2 + round}, 'added ${round}')`);
  if (round === 0) await exec(`UPDATE evolved SET old_name = CONCAT('renamed-to-be ', id), gone = 'x' WHERE id % 6 = 0`);
  else {
    // after evolveSchema: the new layout
    const added = ADDED_COLUMNS[formatVersion];
    const names = added.map((c) => `, ${c.name}`).join('');
    await exec(`INSERT INTO evolved (id, a, new_name, amount${names}) VALUES (500, 5, 'after 500', 9.99${added.map((c) => `, ${c.value}`).join('')}), (501, NULL, 'after 501', NULL${added.map(() => ', DEFAULT').join('')})`);
    await exec(`UPDATE evolved SET new_name = CONCAT('after ', id) WHERE id % 10 = 1`);
    await exec(`DELETE FROM evolved WHERE id % 10 = 2`);
  }
}

/** The columns evolveSchema adds, with a value for a new row. */
const ADDED_COLUMNS: Record<2 | 3, { name: string; definition: string; value: string }[]> = {
  3: [
    { name: 'n_default', definition: 'INT NOT NULL DEFAULT 42', value: '7' },
    { name: 's_default', definition: "VARCHAR(20) DEFAULT 'hello, 세계'", value: "'set'" },
    { name: 'd_default', definition: "DATE DEFAULT '2024-02-29'", value: "'2000-01-01'" },
    { name: 'dec_default', definition: 'DECIMAL(6,2) DEFAULT 3.25', value: '-1.50' },
  ],
  2: [{ name: 'added', definition: 'VARCHAR(20) NULL', value: "'set'" }],
};

/**
 * The DDL of `evolved`, run while floe streams (between the rounds). Format v3: columns added with
 * literal defaults (MySQL gives the existing rows the default; the lake's initial-default must give
 * them the same). Format v2 tables cannot hold defaults, so their added column has none (rows
 * written before read null, as in MySQL).
 */
export async function evolveSchema(exec: Exec, formatVersion: 2 | 3): Promise<void> {
  for (const c of ADDED_COLUMNS[formatVersion]) await exec(`ALTER TABLE evolved ADD COLUMN ${c.name} ${c.definition}`);
  await exec(`ALTER TABLE evolved RENAME COLUMN old_name TO new_name`);
  await exec(`ALTER TABLE evolved DROP COLUMN gone`);
}

/**
 * The crash test's source schema and its random writer.
 *
 * Tables: `accounts` (composite key), `ledger` (BIGINT UNSIGNED key, values near 2^64), `all_types`
 * (every supported type, edge values), `events` (no primary key; rows stay distinct through a unique
 * `uid`, and carry no float column, so an equality delete of a whole row removes exactly that row),
 * `dups` (no primary key, many identical rows: the writer deletes and updates one copy at a time,
 * `… LIMIT 1`, which a format-v3 lake must follow copy for copy), `parent` / `child` (FOREIGN KEY …
 * ON DELETE CASCADE), `notes` (a grandchild referencing `child` by its primary key, ON DELETE CASCADE:
 * a parent's delete removes its children and, through their keys, their notes — none of it logged)
 * and `tags` (a keyless child of `parent`, ON DELETE CASCADE, holding identical copies: a parent's
 * delete removes all of its copies and none of another parent's).
 *
 * The writer applies random inserts, updates (including primary-key changes and moves of a child to
 * another parent) and deletes in small transactions until stopped. MySQL is the truth: it tracks
 * nothing, and a statement that hits no row is as good as any other.
 *
 * `CASCADE_DELETES` (on; FLOE_CRASH_CASCADES=0 turns it off): the writer also deletes parents, and
 * the server deletes their children without logging them — the pipeline reproduces those deletes
 * (source cascade.ts, pipeline cascade.ts). Off, parents are never deleted (the FK table then only
 * takes ordinary changes). Parent ids are never re-used, so the documented hand-over edge case of
 * cascades (a parent key deleted and re-inserted with a child inside a chunk window) cannot occur.
 */
import type mysql from 'mysql2/promise';
import { RandomTransactionWriter } from '../../support/random-writer.js';
import { ALL_TYPES_COLUMNS, ALL_TYPES_DDL, ALL_TYPES_SESSION, ALL_TYPES_VALUES } from './all-types.js';
import { prng } from '../../../src/util/prng.js';
export { prng };

export const CASCADE_DELETES = process.env.FLOE_CRASH_CASCADES !== '0';

export const CRASH_TABLES = ['accounts', 'ledger', 'all_types', 'events', 'dups', 'parent', 'child', 'notes', 'tags'] as const;

const TOP = 18446744073709551615n;

const SIZES = { accounts: 7000, ledger: 5000, allTypes: 40, events: 3000, dups: 600, parents: 500, children: 2500, notes: 2000, tags: 1000 };
/** `dups` rows are drawn from 20 × 3 distinct rows: ten copies of each on average. */
const DUP_GROUPS = 20;
const DUP_TAGS = ['a', 'b', 'c'];
const TAG_NAMES = ['x', 'y'];

export async function createCrashSchema(conn: mysql.Connection): Promise<void> {
  for (const s of ALL_TYPES_SESSION) await conn.query(s);
  await conn.query(`CREATE TABLE accounts (tenant SMALLINT NOT NULL, id INT NOT NULL, balance DECIMAL(14,2) NOT NULL, status ENUM('new','active','closed') NOT NULL DEFAULT 'new',
    updated DATETIME(6) NOT NULL, note VARCHAR(100), PRIMARY KEY (tenant, id))`);
  await conn.query(`CREATE TABLE ledger (id BIGINT UNSIGNED PRIMARY KEY, amount BIGINT NOT NULL, memo VARCHAR(60), at TIMESTAMP(6) NULL)`);
  await conn.query(ALL_TYPES_DDL('all_types'));
  await conn.query(`CREATE TABLE events (uid CHAR(12) NOT NULL, kind VARCHAR(10) NOT NULL, n INT, at DATETIME NULL)`);
  await conn.query(`CREATE TABLE dups (g SMALLINT NOT NULL, tag VARCHAR(4) NOT NULL, amount DECIMAL(8,2), at DATE NULL)`);
  await conn.query(`CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(40) NOT NULL)`);
  await conn.query(`CREATE TABLE child (id INT PRIMARY KEY, parent_id INT NOT NULL, qty INT NOT NULL,
    CONSTRAINT child_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE)`);
  await conn.query(`CREATE TABLE notes (id INT PRIMARY KEY, child_id INT NOT NULL, body VARCHAR(20) NOT NULL,
    CONSTRAINT notes_child FOREIGN KEY (child_id) REFERENCES child (id) ON DELETE CASCADE)`);
  await conn.query(`CREATE TABLE tags (parent_id INT NOT NULL, tag VARCHAR(8) NOT NULL,
    CONSTRAINT tags_parent FOREIGN KEY (parent_id) REFERENCES parent (id) ON DELETE CASCADE)`);

  const batch = async (table: string, rows: string[]) => {
    for (let i = 0; i < rows.length; i += 1000) await conn.query(`INSERT INTO ${table} VALUES ${rows.slice(i, i + 1000).join(', ')}`);
  };
  await batch(
    'accounts',
    Array.from({ length: SIZES.accounts }, (_, i) => `(${1 + (i % 7)}, ${i}, ${((i * 37) % 100000) / 100}, '${['new', 'active', 'closed'][i % 3]}', '2024-0${1 + (i % 9)}-0${1 + (i % 9)} 12:00:00.${String(i).padStart(6, '0')}', ${i % 4 === 0 ? 'NULL' : `'note ${i}'`})`),
  );
  await batch(
    'ledger',
    Array.from({ length: SIZES.ledger }, (_, i) => `(${i % 2 === 0 ? BigInt(i) : TOP - BigInt(i)}, ${(i % 2 === 0 ? -1 : 1) * i * 1_000_003}, 'm${i}', ${i % 5 === 0 ? 'NULL' : `'2023-03-0${1 + (i % 9)} 0${i % 10}:00:00.${String(i).padStart(6, '0')}'`})`),
  );
  await conn.query(`INSERT INTO all_types (${ALL_TYPES_COLUMNS}) VALUES ${Array.from({ length: SIZES.allTypes }, (_, i) => `(${i + 1}, ${ALL_TYPES_VALUES[i % ALL_TYPES_VALUES.length]})`).join(', ')}`);
  await batch('events', Array.from({ length: SIZES.events }, (_, i) => `('e${String(i).padStart(11, '0')}', '${['click', 'view', 'buy'][i % 3]}', ${i % 11 === 0 ? 'NULL' : i % 97}, ${i % 6 === 0 ? 'NULL' : `'2024-06-0${1 + (i % 9)} 10:00:00'`})`));
  await batch('dups', Array.from({ length: SIZES.dups }, (_, i) => `(${i % DUP_GROUPS}, '${DUP_TAGS[i % 3]}', ${i % 7 === 0 ? 'NULL' : `${(i % DUP_GROUPS) + 0.5}`}, ${i % 5 === 0 ? 'NULL' : "'2024-02-29'"})`));
  await batch('parent', Array.from({ length: SIZES.parents }, (_, i) => `(${i + 1}, 'parent ${i + 1}')`));
  await batch('child', Array.from({ length: SIZES.children }, (_, i) => `(${i + 1}, ${1 + (i % SIZES.parents)}, ${i % 13})`));
  await batch('notes', Array.from({ length: SIZES.notes }, (_, i) => `(${i + 1}, ${1 + ((i * 7) % SIZES.children)}, 'note ${i % 17}')`));
  // rows i and i + 500 are identical: two copies of one tag per parent
  await batch('tags', Array.from({ length: SIZES.tags }, (_, i) => `(${1 + (i % SIZES.parents)}, '${TAG_NAMES[i % SIZES.parents % 2]}')`));
}


export class RandomWriter extends RandomTransactionWriter {
  /** DELETEs of parent rows issued (each may cascade to children). */
  parentDeletes = 0;
  private next = { account: SIZES.accounts, ledger: BigInt(SIZES.ledger), allTypes: SIZES.allTypes + 1, event: SIZES.events, parent: SIZES.parents + 1, child: SIZES.children + 1, note: SIZES.notes + 1 };

  constructor(conn: mysql.Connection, random: () => number, pauseMs = 8) {
    super(conn, random, pauseMs);
  }

  protected override async prepare(): Promise<void> {
    for (const s of ALL_TYPES_SESSION) await this.conn.query(s);
  }

  protected statement(): string {
    const r = this.random();
    const op = this.int(10);
    if (r < 0.3) return this.accounts(op);
    if (r < 0.5) return this.ledger(op);
    if (r < 0.57) return this.allTypes(op);
    if (r < 0.67) return this.events(op);
    if (r < 0.75) return this.dups(op);
    if (r < 0.8) return this.parents(op);
    if (r < 0.88) return this.children(op);
    if (r < 0.94) return this.notes(op);
    return this.tags(op);
  }

  private accounts(op: number): string {
    const tenant = 1 + this.int(7);
    const id = this.int(this.next.account);
    if (op < 3) return `INSERT INTO accounts VALUES (${1 + this.int(9)}, ${this.next.account++}, ${this.int(1_000_000) / 100}, 'new', '2025-01-0${1 + this.int(9)} 0${this.int(10)}:00:00.${this.int(999999)}', 'ins')`;
    if (op < 6) return `UPDATE accounts SET balance = balance + ${this.int(10000) / 100}, status = '${['new', 'active', 'closed'][this.int(3)]}', note = ${this.int(4) === 0 ? 'NULL' : `'upd ${this.int(1000)}'`}, updated = '2025-02-0${1 + this.int(9)} 01:02:03.${this.int(999999)}' WHERE tenant = ${tenant} AND id = ${id}`;
    if (op < 8) return `UPDATE accounts SET id = ${this.next.account++} WHERE tenant = ${tenant} AND id = ${id}`; // key change
    return `DELETE FROM accounts WHERE tenant = ${tenant} AND id = ${id}`;
  }

  private ledgerKey(): bigint {
    const i = BigInt(this.int(Number(this.next.ledger)));
    return this.int(2) === 0 ? i : TOP - i;
  }

  private ledger(op: number): string {
    if (op < 3) {
      const i = this.next.ledger++;
      return `INSERT INTO ledger VALUES (${this.int(2) === 0 ? i : TOP - i}, ${this.int(2_000_000_000) - 1_000_000_000}, 'new', '2025-03-04 05:06:07.${this.int(999999)}')`;
    }
    if (op < 7) return `UPDATE ledger SET amount = amount ${this.int(2) ? '+' : '-'} ${this.int(1000)}, memo = 'u${this.int(100)}', at = ${this.int(3) === 0 ? 'NULL' : 'at'} WHERE id = ${this.ledgerKey()}`;
    if (op < 8) return `UPDATE ledger SET id = ${TOP - this.next.ledger++} WHERE id = ${this.ledgerKey()}`;
    return `DELETE FROM ledger WHERE id = ${this.ledgerKey()}`;
  }

  private allTypes(op: number): string {
    const id = 1 + this.int(this.next.allTypes - 1);
    const from = 1 + this.int(5);
    if (op < 3) return `INSERT INTO all_types (${ALL_TYPES_COLUMNS}) SELECT ${this.next.allTypes++}, ${ALL_TYPES_COLUMNS.split(', ').slice(1).join(', ')} FROM all_types WHERE id = ${from}`;
    if (op < 8) {
      // copy a few columns' edge values from another row
      const cols = ALL_TYPES_COLUMNS.split(', ').slice(1);
      const picked = Array.from({ length: 4 }, () => cols[this.int(cols.length)]);
      return `UPDATE all_types t JOIN all_types s ON s.id = ${from} SET ${[...new Set(picked)].map((c) => `t.${c} = s.${c}`).join(', ')} WHERE t.id = ${id}`;
    }
    return `DELETE FROM all_types WHERE id = ${id} AND id > 5`;
  }

  private events(op: number): string {
    const uid = `e${String(this.int(this.next.event)).padStart(11, '0')}`;
    if (op < 4) return `INSERT INTO events VALUES ('e${String(this.next.event++).padStart(11, '0')}', '${['click', 'view', 'buy'][this.int(3)]}', ${this.int(5) === 0 ? 'NULL' : this.int(1000)}, '2025-0${1 + this.int(9)}-01 00:00:0${this.int(10)}')`;
    if (op < 7) return `UPDATE events SET n = ${this.int(3) === 0 ? 'NULL' : this.int(1000)}, kind = 'upd' WHERE uid = '${uid}'`;
    return `DELETE FROM events WHERE uid = '${uid}'`;
  }

  /** One copy at a time among identical rows (`LIMIT 1`: MySQL logs the one row it took). */
  private dups(op: number): string {
    const g = this.int(DUP_GROUPS);
    const tag = DUP_TAGS[this.int(3)];
    if (op < 4) return `INSERT INTO dups SELECT g, tag, amount, at FROM dups WHERE g = ${g} AND tag = '${tag}' LIMIT 1`;
    if (op < 5) return `INSERT INTO dups VALUES (${g}, '${tag}', ${g + 0.5}, '2024-02-29')`;
    if (op < 7) return `UPDATE dups SET amount = ${this.int(3) === 0 ? 'NULL' : `${g + 0.5}`}, at = ${this.int(2) === 0 ? 'NULL' : "'2024-02-29'"} WHERE g = ${g} AND tag = '${tag}' LIMIT 1`;
    return `DELETE FROM dups WHERE g = ${g} AND tag = '${tag}' LIMIT 1`;
  }

  private parents(op: number): string {
    if (op < 4) return `INSERT INTO parent VALUES (${this.next.parent++}, 'p new')`;
    if (op < 9 || !CASCADE_DELETES) return `UPDATE parent SET name = 'renamed ${this.int(1000)}' WHERE id = ${1 + this.int(this.next.parent - 1)}`;
    this.parentDeletes++;
    return `DELETE FROM parent WHERE id = ${1 + this.int(this.next.parent - 1)}`;
  }

  private children(op: number): string {
    const id = 1 + this.int(this.next.child - 1);
    const parent = 1 + this.int(this.next.parent - 1);
    // Parents may be gone (CASCADE_DELETES): reference one only if it exists.
    if (op < 3) return `INSERT INTO child SELECT ${this.next.child++}, id, ${this.int(100)} FROM parent WHERE id = ${parent}`;
    if (op < 6) return `UPDATE child SET qty = qty + 1 WHERE id = ${id}`;
    if (op < 8) return `UPDATE child SET parent_id = ${parent} WHERE id = ${id} AND EXISTS (SELECT 1 FROM parent WHERE id = ${parent})`;
    return `DELETE FROM child WHERE id = ${id}`;
  }

  /** The grandchild by the child's key: added to, moved between and removed from children that exist. */
  private notes(op: number): string {
    const id = 1 + this.int(this.next.note - 1);
    const child = 1 + this.int(this.next.child - 1);
    if (op < 4) return `INSERT INTO notes SELECT ${this.next.note++}, id, 'new ${this.int(100)}' FROM child WHERE id = ${child}`;
    if (op < 6) return `UPDATE notes SET body = 'upd ${this.int(100)}' WHERE id = ${id}`;
    if (op < 8) return `UPDATE notes SET child_id = ${child} WHERE id = ${id} AND EXISTS (SELECT 1 FROM child WHERE id = ${child})`;
    return `DELETE FROM notes WHERE id = ${id}`;
  }

  /** The keyless child: copies added, updated and deleted one at a time (`LIMIT 1`), and by the cascade. */
  private tags(op: number): string {
    const parent = 1 + this.int(this.next.parent - 1);
    const tag = TAG_NAMES[this.int(2)];
    if (op < 4) return `INSERT INTO tags SELECT id, '${tag}' FROM parent WHERE id = ${parent}`;
    if (op < 6) return `UPDATE tags SET tag = '${TAG_NAMES[this.int(2)]}' WHERE parent_id = ${parent} AND tag = '${tag}' LIMIT 1`;
    return `DELETE FROM tags WHERE parent_id = ${parent} AND tag = '${tag}' LIMIT 1`;
  }
}

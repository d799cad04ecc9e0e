/**
 * ON DELETE CASCADE through the real pipeline: neither MariaDB nor MySQL 8.0 logs the child rows a
 * parent delete removes (test/source/mysql/binlog foreign-key test), so floe reproduces them. After parent deletes whose
 * children were committed in earlier checkpoints, inserted in the same transaction (same
 * checkpoint), moved to the parent in the same checkpoint, or attached to a re-created parent after
 * the delete, the lake equals MySQL for the parent, the child, a grandchild whose FK includes the
 * child's FK column (from the binlog alone), a grandchild and a great-grandchild that reference the
 * level above by its primary key (from the keys of the rows removed: a child re-created with a
 * removed key in the same transaction keeps the note attached after), a grandchild that references
 * a unique child column (its values read from the removed rows' data files), and a self-referencing tree
 * whose subtree goes level by level; a delete run with foreign_key_checks=0 cascades nothing in
 * MySQL and nothing in the lake.
 *
 * A KEYLESS child (no primary key) in format v3: after a restart (its row index and FK index built
 * from the lake again), parent deletes remove its committed rows by deletion vectors on their places
 * — duplicates included, each copy once, an identical child of another parent kept — and the
 * indexes follow those commits (a later binlog DELETE of a re-inserted identical row, and a second
 * cascade of a re-created parent, find only live copies). A keyless child referenced by a unique
 * column passes its removed rows' values on to the grandchild that references it (read from their
 * data files). No snapshot of them holds an equality delete.
 * Run twice: the indexes in memory, and on disk (a memory bound of 0 bytes: sqlite-value-index.ts).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../src/pipeline/observe/logger.js';
import { silentLogger } from '../../../src/pipeline/observe/logger.js';
import { openHarness, type Harness } from '../schema-change/pipeline-harness.js';
import { loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { addedDeleteFiles } from '../../support/lake-integrity.js';

process.env.TZ ??= 'Asia/Seoul';

let h: Harness;
const TABLES = ['parent', 'child', 'line', 'note', 'memo', 'tree', 'child_tag', 'extra'];

beforeAll(async () => {
  const children = Array.from({ length: 60 }, (_, i) => `(${i}, ${1 + (i % 6)}, 'c${i}')`);
  h = await openHarness('fk_cascade', 'fk-cascade', TABLES, [
    'CREATE TABLE parent (id INT PRIMARY KEY, name VARCHAR(20))',
    'CREATE TABLE child (id INT PRIMARY KEY, pid INT, label VARCHAR(20), KEY (pid), CONSTRAINT fk_child FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE)',
    // grandchild by (pid, cid): its rows go with the parent exactly (the FK includes child.pid)
    'ALTER TABLE child ADD UNIQUE KEY uk (pid, id)',
    'CREATE TABLE line (id INT PRIMARY KEY, pid INT, cid INT, CONSTRAINT fk_line FOREIGN KEY (pid, cid) REFERENCES child (pid, id) ON DELETE CASCADE)',
    // grandchild by the child's primary key: found through the keys of the child rows removed
    'CREATE TABLE note (id INT PRIMARY KEY, cid INT, CONSTRAINT fk_note FOREIGN KEY (cid) REFERENCES child (id) ON DELETE CASCADE)',
    // and its own child, by the grandchild's primary key
    'CREATE TABLE memo (id INT PRIMARY KEY, nid INT, CONSTRAINT fk_memo FOREIGN KEY (nid) REFERENCES note (id) ON DELETE CASCADE)',
    // a self-reference: deeper levels follow from the keys of the level above
    'CREATE TABLE tree (id INT PRIMARY KEY, up INT, CONSTRAINT fk_tree FOREIGN KEY (up) REFERENCES tree (id) ON DELETE CASCADE)',
    // a grandchild by another child column (a unique key): its values read from the removed rows
    'ALTER TABLE child ADD UNIQUE KEY ul (label)',
    'CREATE TABLE child_tag (id INT PRIMARY KEY, label VARCHAR(20), CONSTRAINT fk_ct FOREIGN KEY (label) REFERENCES child (label) ON DELETE CASCADE)',
    // gets its foreign key while floe streams
    'CREATE TABLE extra (id INT PRIMARY KEY, pid INT)',
    'INSERT INTO extra VALUES (1, 6), (2, 3)',
    `INSERT INTO parent VALUES ${Array.from({ length: 6 }, (_, i) => `(${i + 1}, 'p${i + 1}')`).join(', ')}`,
    `INSERT INTO child VALUES ${children.join(', ')}`,
    `INSERT INTO line VALUES ${Array.from({ length: 30 }, (_, i) => `(${i}, ${1 + (i % 6)}, ${i})`).join(', ')}`,
    `INSERT INTO note VALUES ${Array.from({ length: 40 }, (_, i) => `(${i}, ${i})`).join(', ')}`,
    `INSERT INTO memo VALUES ${Array.from({ length: 20 }, (_, i) => `(${i}, ${i * 2})`).join(', ')}`,
    `INSERT INTO child_tag VALUES ${Array.from({ length: 30 }, (_, i) => `(${i}, 'c${i * 2}')`).join(', ')}`,
    `INSERT INTO tree VALUES (1, NULL), ${Array.from({ length: 14 }, (_, i) => `(${i + 2}, ${Math.floor((i + 2) / 2)})`).join(', ')}`,
  ]);
});

afterAll(async () => {
  await h?.close();
});

function recordingLogger(lines: string[]): Logger {
  const record = (msg: string, fields?: Record<string, unknown>) => lines.push(`${msg} ${fields ? JSON.stringify(fields) : ''}`);
  return { ...silentLogger, warn: record, info: record, child: () => recordingLogger(lines) } as Logger;
}

describe('ON DELETE CASCADE', () => {
  it('removes the cascaded child rows in the lake: committed earlier, same checkpoint, and not those attached after', async () => {
    const lines: string[] = [];
    const run = h.start({ commit: { intervalMs: 5000, idleCheckpoints: 1 } }, recordingLogger(lines));
    await h.untilStreaming(run);
    const log = lines.join('\n');
    expect(log).not.toMatch(/\[fk_note\]|\[fk_memo\]|\[fk_tree\]|\[fk_ct\]/);

    // children committed in the snapshot: equality delete on child.pid (and line.pid)
    await h.exec('DELETE FROM parent WHERE id = 1');
    // a child inserted and its parent deleted in one transaction: removed by position
    await h.conn.beginTransaction();
    await h.exec("INSERT INTO child VALUES (100, 2, 'same txn')");
    await h.exec('INSERT INTO line VALUES (100, 2, 100)');
    await h.exec('INSERT INTO note VALUES (100, 100), (103, 8)');
    await h.exec('INSERT INTO memo VALUES (100, 100), (101, 103), (102, 3)');
    await h.exec("INSERT INTO child_tag VALUES (100, 'same txn')");
    await h.exec('DELETE FROM parent WHERE id = 2');
    await h.conn.commit();
    // a child moved to parent 4 in this checkpoint, then parent 4 deleted
    await h.exec('DELETE FROM line WHERE cid = 5');
    await h.exec('UPDATE child SET pid = 4 WHERE id = 5'); // child 5 (parent 6) → parent 4
    await h.exec('DELETE FROM parent WHERE id = 4');
    // parent 3 deleted and re-created, a child attached after the delete: stays
    await h.conn.beginTransaction();
    await h.exec('DELETE FROM parent WHERE id = 3');
    await h.exec("INSERT INTO parent VALUES (3, 'p3 again')");
    await h.exec("INSERT INTO child VALUES (101, 3, 'after the delete')");
    await h.exec('INSERT INTO note VALUES (101, 101)');
    // child 2 (parent 3) went with it; re-created with its key, a note attached to it stays
    await h.exec("INSERT INTO child VALUES (2, 3, 're-created')");
    await h.exec('INSERT INTO note VALUES (102, 2)');
    await h.conn.commit();
    // a subtree: the direct children by the binlog, the levels below by the keys removed
    await h.exec('DELETE FROM tree WHERE id = 2');
    // a constraint added while streaming: planned again, the child's writer indexes the new FK
    await h.exec('ALTER TABLE extra ADD CONSTRAINT ex FOREIGN KEY (pid) REFERENCES parent (id) ON DELETE CASCADE');
    await h.conn.beginTransaction();
    await h.exec('INSERT INTO extra VALUES (3, 6)');
    await h.exec('DELETE FROM line WHERE pid = 6');
    await h.exec('DELETE FROM parent WHERE id = 6');
    await h.conn.commit();
    // with foreign_key_checks=0 the server cascades nothing (the rows event says so): children stay
    await h.exec('SET SESSION foreign_key_checks = 0');
    await h.exec('DELETE FROM parent WHERE id = 5');
    await h.exec('SET SESSION foreign_key_checks = 1');
    await h.catchUp(run, TABLES);
    expect((await run.stop()).reason).toBe('stopped');

    for (const t of ['parent', 'child', 'line', 'note', 'memo', 'tree', 'child_tag', 'extra']) await h.expectLakeEqualsMysql(t);
    const [tags] = (await h.conn.query('SELECT COUNT(*) AS n FROM child_tag')) as unknown as [{ n: number }[]];
    expect(Number(tags[0].n)).toBeLessThan(31); // the server removed tags of removed children
    const [memos] = (await h.conn.query('SELECT id FROM memo ORDER BY id')) as unknown as [{ id: number }[]];
    expect(memos.map((r) => r.id)).not.toContain(0); // memo 0 → note 0 → child 0 → parent 1: gone in MySQL
    const [trees] = (await h.conn.query('SELECT id FROM tree ORDER BY id')) as unknown as [{ id: number }[]];
    expect(trees.map((r) => r.id)).toEqual([1, 3, 6, 7, 12, 13, 14, 15]);
    const [notes] = (await h.conn.query('SELECT id FROM note WHERE id IN (102, 2) ORDER BY id')) as unknown as [{ id: number }[]];
    expect(notes.map((r) => r.id)).toEqual([102]);
    const [extra] = (await h.conn.query('SELECT id FROM extra ORDER BY id')) as unknown as [{ id: number }[]];
    expect(extra.map((r) => r.id)).toEqual([2]);
    const [rows] = (await h.conn.query('SELECT COUNT(*) AS n FROM child WHERE pid IN (1, 2, 4)')) as unknown as [{ n: number }[]];
    expect(Number(rows[0].n)).toBe(0); // the server did cascade
    const [orphans] = (await h.conn.query('SELECT COUNT(*) AS n FROM child WHERE pid = 5')) as unknown as [{ n: number }[]];
    expect(Number(orphans[0].n)).toBeGreaterThan(0); // …but not with foreign_key_checks=0

    // format v3: the cascaded child rows went by deletion vectors, found through the children's FK
    // indexes — no table's history holds an equality delete (read from every snapshot's manifests)
    for (const t of TABLES) {
      const table = await loadCatalogTable(h.catalog, { namespace: [h.db], name: t });
      const { equality, dvs } = await addedDeleteFiles(table);
      expect({ t, formatVersion: table.metadata.formatVersion, equality }).toEqual({ t, formatVersion: 3, equality: 0 });
      if (['child', 'line', 'note', 'memo', 'tree', 'child_tag'].includes(t)) expect(dvs).toBeGreaterThan(0);
    }
  });
});

describe.each(['memory', 'disk'] as const)('ON DELETE CASCADE into a keyless child (format v3), its indexes in %s', (tier) => {
  let k: Harness;
  let stateDir: string;
  const KTABLES = ['kparent', 'kchild', 'kcode', 'kgrand'];
  const count = async (where: string): Promise<number> => {
    const [rows] = (await k.conn.query(`SELECT COUNT(*) AS n FROM kchild WHERE ${where}`)) as unknown as [{ n: number }[]];
    return Number(rows[0].n);
  };

  beforeAll(async () => {
    // on disk: a memory bound of 0 bytes moves the row and FK indexes to SQLite under the state directory
    stateDir = await mkdtemp(join(tmpdir(), 'floe-fk-kcascade-state-'));
    const extra = tier === 'disk' ? { stateDir, iceberg: { keyIndex: { memoryMaxBytes: 0 } } } : {};
    k = await openHarness(`fk_kcascade_${tier}`, 'fk-kcascade', KTABLES, [
      'CREATE TABLE kparent (id INT PRIMARY KEY, name VARCHAR(20))',
      // no primary key: InnoDB's hidden row id is not in the binlog, the whole row is the identity
      'CREATE TABLE kchild (pid INT, label VARCHAR(20), qty INT, CONSTRAINT fk_kchild FOREIGN KEY (pid) REFERENCES kparent (id) ON DELETE CASCADE)',
      `INSERT INTO kparent VALUES ${Array.from({ length: 8 }, (_, i) => `(${i + 1}, 'p${i + 1}')`).join(', ')}`,
      // two identical children of parent 1, and the identical child of parent 2 (differs only in pid)
      "INSERT INTO kchild VALUES (1, 'dup', 7), (1, 'dup', 7), (1, 'one', 1), (2, 'dup', 7), (2, 'two', 2), (3, 'twin', 3), (3, 'twin', 3), (NULL, 'orphan', 0)",
      `INSERT INTO kchild VALUES ${Array.from({ length: 40 }, (_, i) => `(${5 + (i % 4)}, 'bulk', ${i})`).join(', ')}`,
      // a keyless child referenced by its unique column, and the grandchild that references it
      'CREATE TABLE kcode (pid INT, code INT, UNIQUE KEY (code), CONSTRAINT fk_kcode FOREIGN KEY (pid) REFERENCES kparent (id) ON DELETE CASCADE)',
      'CREATE TABLE kgrand (id INT PRIMARY KEY, code INT, CONSTRAINT fk_kgrand FOREIGN KEY (code) REFERENCES kcode (code) ON DELETE CASCADE)',
      'INSERT INTO kcode VALUES (1, 10), (1, 11), (2, 20), (5, 50), (6, 60), (7, 70), (NULL, 99)',
      'INSERT INTO kgrand VALUES (1, 10), (2, 10), (3, 11), (4, 20), (5, 50), (6, 60), (7, 70), (8, 99)',
    ], extra);
  });

  afterAll(async () => {
    await k?.close();
    await rm(stateDir, { recursive: true, force: true });
  });

  it('removes the committed child rows by deletion vectors, each copy once, through a restart', async () => {
    // run 1: the snapshot, then children committed by streaming checkpoints (their own data files)
    let run = k.start();
    await k.untilStreaming(run);
    await k.exec("INSERT INTO kchild VALUES (1, 'dup', 7), (5, 'streamed', 1), (6, 'streamed', 1)");
    await k.catchUp(run, KTABLES);
    expect((await run.stop()).reason).toBe('stopped');
    const child = { namespace: [k.db], name: 'kchild' };
    const before = await loadCatalogTable(k.catalog, child);
    expect({ formatVersion: before.metadata.formatVersion, key: before.metadata.schemas.at(-1)!.identifierFieldIds }).toEqual({ formatVersion: 3, key: [] });

    // run 2, a new process: the row index and the FK index are built from the lake
    run = k.start();
    await k.untilStreaming(run);
    await k.exec('DELETE FROM kparent WHERE id = 1'); // three copies of (1,'dup',7), from the snapshot and a streaming file
    await k.exec('DELETE FROM kchild WHERE pid = 3 LIMIT 1'); // one twin of two
    // a child inserted and its parent deleted in one transaction: by position, with the committed ones
    await k.conn.beginTransaction();
    await k.exec("INSERT INTO kchild VALUES (5, 'same txn', 9), (5, 'same txn', 9)");
    await k.exec('INSERT INTO kcode VALUES (5, 55)');
    await k.exec('INSERT INTO kgrand VALUES (9, 55)');
    await k.exec('DELETE FROM kparent WHERE id = 5');
    await k.conn.commit();
    await k.catchUp(run, KTABLES);
    // the indexes followed that commit: parent 1 re-created with an identical child, one copy of it
    // deleted by the binlog (the row index must not offer the dead copies), then a second child
    // cascaded with parent 1 again (the FK index holds the new rows, not the dead ones)
    await k.exec("INSERT INTO kparent VALUES (1, 'p1 again')");
    await k.exec("INSERT INTO kchild VALUES (1, 'dup', 7), (1, 'dup', 7), (1, 'new', 1)");
    await k.catchUp(run, KTABLES);
    await k.exec("DELETE FROM kchild WHERE pid = 1 AND label = 'dup' LIMIT 1");
    await k.exec("UPDATE kchild SET qty = 8 WHERE pid = 6 AND label = 'streamed'");
    await k.catchUp(run, KTABLES);
    await k.exec('DELETE FROM kparent WHERE id IN (1, 6)');
    await k.catchUp(run, KTABLES);
    if (tier === 'disk') {
      const files = (await readdir(join(stateDir, 'fk-kcascade'))).filter((f) => f.endsWith('.valueindex.sqlite'));
      expect(new Set(files.map((f) => f.replace(/^[0-9a-f-]+\./, '')))).toEqual(new Set(['fk-1.valueindex.sqlite', 'fk-2.valueindex.sqlite', 'rows-row.valueindex.sqlite']));
    }
    expect((await run.stop()).reason).toBe('stopped');

    for (const t of KTABLES) await k.expectLakeEqualsMysql(t);
    // what MySQL holds: the identical child of parent 2 stayed, one twin stayed, the orphan stayed
    expect(await count("pid = 2 AND label = 'dup'")).toBe(1);
    expect(await count('pid = 3')).toBe(1);
    expect(await count('pid IN (1, 5, 6)')).toBe(0);
    expect(await count('pid IS NULL')).toBe(1);
    const [grand] = (await k.conn.query('SELECT id FROM kgrand ORDER BY id')) as unknown as [{ id: number }[]];
    expect(grand.map((r) => r.id)).toEqual([4, 7, 8]); // parents 1, 5 and 6 took their codes with them
    const after = await loadCatalogTable(k.catalog, child);
    const deletes = await addedDeleteFiles(after);
    expect(deletes.equality).toBe(0);
    expect(deletes.dvs).toBeGreaterThan(0);
    for (const name of ['kcode', 'kgrand']) {
      const d = await addedDeleteFiles(await loadCatalogTable(k.catalog, { namespace: [k.db], name }));
      expect({ name, equality: d.equality, dv: d.dvs > 0 }).toEqual({ name, equality: 0, dv: true });
    }
  });
});

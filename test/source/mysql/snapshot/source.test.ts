/**
 * The SourceStream facade end to end on the harness server: plan → chunk rows → hand-over →
 * streaming in one ordered stream; replaying it gives the table; a resume from persisted progress
 * continues exactly after the last committed transaction without re-reading chunks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../../support/shared-mysql.js';
import { openSourceControl, replicaId, sourceConfig, sql } from '../binlog/helpers.js';
import { SourceStream, type SourceControl, type SourceResume } from '../../../../src/source/mysql/source-stream.js';
import type { SourceEvent } from '../../../../src/source/mysql/events.js';
import { keyText } from '../../../../src/source/mysql/snapshot/snapshot-reader.js';
import { serializeOffset, type BinlogOffset } from '../../../../src/source/mysql/offset/offset.js';
import type { Row } from '../../../../src/model/values.js';
import { splitTable } from '../../../../src/source/mysql/snapshot/chunk-splitter.js';
import type { Chunk } from '../../../../src/source/mysql/snapshot/chunk.js';

let db: string;
let conn: mysql.Connection;
/** The control connection every source of this file streams over, as an opened source's sessions do. */
let control: SourceControl;
beforeAll(async () => {
  db = await createTestDatabase('source');
  conn = await sql();
  control = await openSourceControl();
  await conn.query(`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, v VARCHAR(20))`);
  const values = Array.from({ length: 1000 }, (_, i) => [i + 1, `v${i + 1}`]);
  await conn.query(`INSERT INTO \`${db}\`.t VALUES ?`, [values]);
});
afterAll(async () => {
  await conn?.end();
  await control?.client.close();
});

function source(resume?: SourceResume): SourceStream {
  return new SourceStream({ connection: sourceConfig(), tables: [{ database: db, table: 't' }], serverIdBase: replicaId() + 200, snapshot: { parallelism: 3, chunkSize: 100 }, resume }, control);
}

describe('SourceStream', () => {
  it('emits plan, chunk rows, hand-over and streaming in order; replay equals the table; resume continues exactly', async () => {
    const src = source();
    const events: SourceEvent[] = [];
    const replay = new Map<string, Row>();
    const plans: Record<string, string[]> = {};
    const finished: Record<string, string> = {};
    let lastOffset: BinlogOffset | undefined;
    let wrote = false;
    for await (const e of src.events()) {
      events.push(e);
      if (e.kind === 'snapshot-plan') plans[`${e.table.database}.${e.table.table}`] = e.chunks.map((c) => c.range);
      if (e.kind === 'snapshot-rows') {
        finished[e.chunk.id] = serializeOffset(e.highWatermark);
        for (const r of e.rows) replay.set(keyText([r[0]]), r);
        if (!wrote) {
          wrote = true;
          // writes racing the snapshot
          await conn.query(`UPDATE \`${db}\`.t SET v = 'changed' WHERE id IN (5, 505, 995)`);
          await conn.query(`DELETE FROM \`${db}\`.t WHERE id = 7`);
          await conn.query(`INSERT INTO \`${db}\`.t VALUES (2000, 'new')`);
        }
      }
      if (e.kind === 'phase' && e.phase === 'handover') await conn.query(`INSERT INTO \`${db}\`.t VALUES (3000, 'end')`);
      if (e.kind === 'transaction') {
        lastOffset = e.offset;
        for (const c of e.changes) {
          if (c.before) replay.delete(keyText([c.before[0]]));
          if (c.after) replay.set(keyText([c.after[0]]), c.after);
        }
        if (e.changes.some((c) => c.after?.[0] === 3000)) break;
      }
    }
    const kinds = events.map((e) => (e.kind === 'phase' ? `phase:${e.phase}` : e.kind));
    expect(kinds[0]).toBe('snapshot-plan');
    expect(kinds.indexOf('phase:snapshot')).toBeLessThan(kinds.indexOf('snapshot-rows'));
    expect(kinds.filter((k) => k === 'snapshot-rows').length).toBeGreaterThanOrEqual(9); // ~1000/100 chunks
    expect(kinds.lastIndexOf('snapshot-rows')).toBeLessThan(kinds.indexOf('phase:handover'));
    const [rows] = (await conn.query(`SELECT id, v FROM \`${db}\`.t`)) as unknown as [{ id: number; v: string }[]];
    expect(replay.size).toBe(rows.length);
    for (const r of rows) expect(replay.get(keyText([r.id]))).toEqual([r.id, r.v]);

    // resume from the persisted progress: no chunk is read again, the next transaction follows
    await conn.query(`INSERT INTO \`${db}\`.t VALUES (4000, 'after resume')`);
    const again: SourceEvent[] = [];
    for await (const e of source({ plans, finished, offset: lastOffset }).events()) {
      again.push(e);
      if (e.kind === 'transaction') break;
    }
    expect(again.some((e) => e.kind === 'snapshot-rows')).toBe(false);
    const first = again.find((e) => e.kind === 'transaction');
    expect(first?.kind === 'transaction' && first.changes.map((c) => c.after)).toEqual([[4000, 'after resume']]);
  });

  it("beforeImages 'key': before images carry the primary key and the chunk key only, except keyless tables and cascading parents", async () => {
    await conn.query(`CREATE TABLE \`${db}\`.k (id INT PRIMARY KEY, ck INT NOT NULL, v VARCHAR(20), d DECIMAL(10,2), j JSON, KEY (ck))`);
    await conn.query(`CREATE TABLE \`${db}\`.nokey (a INT, b VARCHAR(20))`);
    await conn.query(`CREATE TABLE \`${db}\`.parent (id INT PRIMARY KEY, code INT NOT NULL UNIQUE, name VARCHAR(20))`);
    await conn.query(`CREATE TABLE \`${db}\`.child (id INT PRIMARY KEY, pcode INT, FOREIGN KEY (pcode) REFERENCES parent (code) ON DELETE CASCADE)`);
    const rows = Array.from({ length: 300 }, (_, i) => [i + 1, 1000 - i, `v${i + 1}`, `${i}.25`, JSON.stringify({ i })]);
    await conn.query(`INSERT INTO \`${db}\`.k VALUES ?`, [rows]);
    await conn.query(`INSERT INTO \`${db}\`.nokey VALUES (1, 'x'), (2, 'y')`);
    await conn.query(`INSERT INTO \`${db}\`.parent VALUES (1, 71, 'p1'), (2, 72, 'p2')`);
    await conn.query(`INSERT INTO \`${db}\`.child VALUES (10, 71), (11, 72)`);
    const tables = ['k', 'nokey', 'parent', 'child'].map((table) => ({ database: db, table }));
    const src = new SourceStream({
      connection: sourceConfig(),
      tables,
      serverIdBase: replicaId() + 260,
      beforeImages: 'key',
      snapshot: {
        parallelism: 2,
        chunkSize: 50,
        // k is split by a column that is not its key: the hand-over places a before image by it
        splitter: async (client, table, flavor) => {
          const chunks: Chunk[] = [];
          for await (const c of splitTable(client, table, flavor, { chunkSize: 50, chunkKeyColumn: table.schema.id.table === 'k' ? 'ck' : undefined })) chunks.push(c);
          return chunks;
        },
      },
    }, control);
    const replay = new Map<string, Row>();
    const changes: { table: string; op: string; before?: Row; after?: Row }[] = [];
    let wrote = false;
    for await (const e of src.events()) {
      if (e.kind === 'snapshot-rows' && e.table.table === 'k') {
        for (const r of e.rows) replay.set(keyText([r[0]]), r);
        if (!wrote) {
          wrote = true;
          // changes racing the snapshot: the hand-over filters them by their chunk key
          await conn.query(`UPDATE \`${db}\`.k SET v = 'raced', d = d + 1 WHERE id IN (3, 150, 290)`);
          await conn.query(`DELETE FROM \`${db}\`.k WHERE id IN (4, 151)`);
        }
      }
      if (e.kind === 'phase' && e.phase === 'handover') {
        await conn.query(`UPDATE \`${db}\`.k SET v = 'later', j = '{"later": true}' WHERE id = 10`);
        await conn.query(`UPDATE \`${db}\`.k SET id = 1010 WHERE id = 11`);
        await conn.query(`DELETE FROM \`${db}\`.k WHERE id = 12`);
        await conn.query(`UPDATE \`${db}\`.nokey SET b = 'z' WHERE a = 1`);
        await conn.query(`DELETE FROM \`${db}\`.nokey WHERE a = 2`);
        await conn.query(`DELETE FROM \`${db}\`.parent WHERE id = 1`);
        await conn.query(`UPDATE \`${db}\`.parent SET name = 'p2b' WHERE id = 2`);
        await conn.query(`INSERT INTO \`${db}\`.nokey VALUES (99, 'end')`);
      }
      if (e.kind !== 'transaction') continue;
      for (const c of e.changes) {
        if (c.op === 'delete-matching') {
          changes.push({ table: c.table.table, op: c.op });
          continue;
        }
        changes.push({ table: c.table.table, op: c.op, before: c.before, after: c.after });
        if (c.table.table !== 'k') continue;
        if (c.before) replay.delete(keyText([c.before[0]]));
        if (c.after) replay.set(keyText([c.after[0]]), c.after);
      }
      if (e.changes.some((c) => c.table.table === 'nokey' && c.after?.[0] === 99)) break;
    }
    // the replay is the table: the hand-over kept or dropped every raced change by its chunk key
    const [now] = (await conn.query(`SELECT id, ck, v, d, j FROM \`${db}\`.k`)) as unknown as [{ id: number; ck: number; v: string; d: string; j: unknown }[]];
    expect(replay.size).toBe(now.length);
    for (const r of now) expect(replay.get(keyText([r.id]))?.slice(0, 4)).toEqual([r.id, r.ck, r.v, r.d]);
    const streamed = (table: string) => changes.filter((c) => c.table === table);
    expect(streamed('k').filter((c) => c.before?.[0] === 10 || c.before?.[0] === 11 || c.before?.[0] === 12)).toEqual([
      { table: 'k', op: 'update', before: [10, 991, null, null, null], after: [10, 991, 'later', '9.25', '{"later": true}'] },
      { table: 'k', op: 'update', before: [11, 990, null, null, null], after: [1010, 990, 'v11', '10.25', '{"i":10}'] },
      { table: 'k', op: 'delete', before: [12, 989, null, null, null], after: undefined },
    ]);
    // keyless: the whole row is the key; a cascading parent: its other columns find the child rows
    expect(streamed('nokey').slice(0, 2)).toEqual([
      { table: 'nokey', op: 'update', before: [1, 'x'], after: [1, 'z'] },
      { table: 'nokey', op: 'delete', before: [2, 'y'], after: undefined },
    ]);
    expect(streamed('parent')).toEqual([
      { table: 'parent', op: 'delete', before: [1, 71, 'p1'], after: undefined },
      { table: 'parent', op: 'update', before: [2, 72, 'p2'], after: [2, 72, 'p2b'] },
    ]);
    expect(streamed('child').map((c) => c.op)).toEqual(['delete-matching']);
  });
});

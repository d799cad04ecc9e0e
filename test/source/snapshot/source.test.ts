/**
 * The MySqlSource facade end to end on the harness server: plan → chunk rows → hand-over →
 * streaming in one ordered stream; replaying it gives the table; a resume from persisted progress
 * continues exactly after the last committed transaction without re-reading chunks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { createTestDatabase } from '../../support/shared-mysql.js';
import { replicaId, sourceConfig, sql } from '../binlog/helpers.js';
import { MySqlSource, type SourceResume } from '../../../src/source/mysql/source.js';
import type { SourceEvent } from '../../../src/source/mysql/events.js';
import { keyText } from '../../../src/source/mysql/snapshot/snapshot-reader.js';
import { serializeOffset, type BinlogOffset } from '../../../src/source/mysql/offset/offset.js';
import type { Row } from '../../../src/model/values.js';

let db: string;
let conn: mysql.Connection;
beforeAll(async () => {
  db = await createTestDatabase('source');
  conn = await sql();
  await conn.query(`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, v VARCHAR(20))`);
  const values = Array.from({ length: 1000 }, (_, i) => [i + 1, `v${i + 1}`]);
  await conn.query(`INSERT INTO \`${db}\`.t VALUES ?`, [values]);
});
afterAll(async () => {
  await conn?.end();
});

function source(resume?: SourceResume): MySqlSource {
  return new MySqlSource({ connection: sourceConfig(), tables: [{ database: db, table: 't' }], serverIdBase: replicaId() + 200, snapshot: { parallelism: 3, chunkSize: 100 }, resume });
}

describe('MySqlSource', () => {
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
});

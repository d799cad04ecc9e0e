/**
 * The change workload applied after the snapshot: M random row changes — four updates for every
 * delete — of random existing rows, in transactions of 100 changes (one multi-row UPDATE and one
 * DELETE each, so the binlog holds row events of several rows, as OLTP batches write them). Every
 * update changes the row (the binlog logs only changed rows), every delete removes a row that
 * exists, so the binlog holds exactly M row changes. Rows may be updated several times (hot keys:
 * the upsert writer then replaces a row written earlier in the same checkpoint by position).
 */
import mysql from 'mysql2/promise';
import type { MysqlConnectionConfig } from '../src/source/mysql/client.js';
import { prng, TABLE } from './dataset.js';

export interface WorkloadResult {
  updates: number;
  deletes: number;
  transactions: number;
  elapsedMs: number;
}

const CHANGES_PER_TRANSACTION = 100;

export async function applyWorkload(connection: MysqlConnectionConfig, database: string, rows: number, changes: number, seed: number): Promise<WorkloadResult> {
  const rand = prng(seed * 7919 + 17);
  const deleted = new Uint8Array(rows + 1);
  const conn = await mysql.createConnection({ host: connection.host, port: connection.port, user: connection.user, password: connection.password, database });
  const started = performance.now();
  let updates = 0;
  let deletes = 0;
  let transactions = 0;
  try {
    await conn.query("SET SESSION time_zone = '+00:00'");
    const pick = (taken: Set<number>): number => {
      for (;;) {
        const id = 1 + Math.floor(rand() * rows);
        if (!deleted[id] && !taken.has(id)) return id;
      }
    };
    for (let done = 0; done < changes; ) {
      const n = Math.min(CHANGES_PER_TRANSACTION, changes - done);
      const nDelete = Math.floor(n / 5);
      const taken = new Set<number>();
      const updateIds: number[] = [];
      const deleteIds: number[] = [];
      for (let i = 0; i < n - nDelete; i++) {
        const id = pick(taken);
        taken.add(id);
        updateIds.push(id);
      }
      for (let i = 0; i < nDelete; i++) {
        const id = pick(taken);
        taken.add(id);
        deleteIds.push(id);
      }
      await conn.query('START TRANSACTION');
      if (updateIds.length) {
        const [r] = await conn.query(
          `UPDATE ${TABLE} SET quantity = quantity % 20 + 1, status = (status + 1) % 5, amount = amount + 0.01, updated_at = CURRENT_TIMESTAMP(6) WHERE id IN (${updateIds.join(',')})`,
        );
        const changed = (r as mysql.ResultSetHeader).changedRows;
        if (changed !== updateIds.length) throw new Error(`bench: an UPDATE changed ${changed} rows, expected ${updateIds.length}`);
      }
      if (deleteIds.length) {
        const [r] = await conn.query(`DELETE FROM ${TABLE} WHERE id IN (${deleteIds.join(',')})`);
        const affected = (r as mysql.ResultSetHeader).affectedRows;
        if (affected !== deleteIds.length) throw new Error(`bench: a DELETE removed ${affected} rows, expected ${deleteIds.length}`);
        for (const id of deleteIds) deleted[id] = 1;
      }
      await conn.query('COMMIT');
      updates += updateIds.length;
      deletes += deleteIds.length;
      transactions++;
      done += n;
    }
  } finally {
    await conn.end();
  }
  return { updates, deletes, transactions, elapsedMs: performance.now() - started };
}

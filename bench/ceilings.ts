/**
 * The two raw ceilings floe cannot beat on this machine:
 * - A: the table's full read through mysql2 — one streamed `SELECT`, rows as arrays, with the same
 *   value-shaping options floe's sessions use (dateStrings, jsonStrings, supportBigNumbers /
 *   bigNumberStrings, exact decimals as text), rows counted and dropped;
 * - B: zongji's decode of the workload's binlog range with no sink (`drainRawBinlog`: same session
 *   and connection options as floe's binlog reader, no transaction assembly, no value conversion).
 * Both run in this (the benchmark's) process, one after the other, with nothing else of ours running.
 */
import mysql from 'mysql2';
import { drainRawBinlog } from './binlog-raw.js';
import { VALUE_SHAPING_OPTIONS, type MysqlConnectionConfig } from '../src/source/mysql/client.js';
import type { BinlogOffset } from '../src/source/mysql/offset/offset.js';
import { TABLE } from './dataset.js';

export interface RateResult {
  count: number;
  elapsedMs: number;
  cpuMs: number;
}

function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since);
  return (d.user + d.system) / 1000;
}

/** Ceiling A: rows/s of a streamed full-table read. */
export async function rawTableRead(connection: MysqlConnectionConfig, database: string): Promise<RateResult> {
  const conn = mysql.createConnection({
    host: connection.host,
    port: connection.port,
    user: connection.user,
    password: connection.password,
    database,
    ...VALUE_SHAPING_OPTIONS,
  });
  try {
    await new Promise<void>((resolve, reject) => conn.query("SET time_zone = '+00:00'", (e) => (e ? reject(e) : resolve())));
    const cpu = process.cpuUsage();
    const started = performance.now();
    const count = await new Promise<number>((resolve, reject) => {
      let n = 0;
      const stream = conn.query({ sql: `SELECT * FROM ${TABLE}`, rowsAsArray: true }).stream({ highWaterMark: 1024 });
      stream.on('data', () => n++);
      stream.on('end', () => resolve(n));
      stream.on('error', reject);
    });
    return { count, elapsedMs: performance.now() - started, cpuMs: cpuMs(cpu) };
  } finally {
    await new Promise<void>((resolve) => conn.end(() => resolve()));
  }
}

/** Ceiling B: row changes/s of zongji decoding the binlog from `from` to `to`, with no sink. */
export async function rawBinlogDecode(connection: MysqlConnectionConfig, database: string, from: BinlogOffset, to: BinlogOffset): Promise<RateResult & { events: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const stats = await drainRawBinlog({ connection, serverId: 4_000_001, from, to, databases: [database] });
  return { count: stats.rows, events: stats.events, elapsedMs: performance.now() - started, cpuMs: cpuMs(cpu) };
}

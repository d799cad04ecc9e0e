/**
 * Access to the run's shared MySQL-compatible server (see global-setup.ts), and a fresh database in
 * it per test file so that files never see each other's tables.
 */
import { inject } from 'vitest';
import mysql from 'mysql2/promise';
import { parseMysqlUrl } from './mariadb.js';

function sharedMysqlUrl(): string {
  return inject('mysqlUrl');
}

export function sharedMysqlConfig(): { host: string; port: number; user: string; password: string } {
  return parseMysqlUrl(sharedMysqlUrl());
}

/** The login of `server` for the `source:` section of a floe config (which takes no other connection field). */
export function sourceLogin(server: { host: string; port: number; user: string; password: string }): { host: string; port: number; user: string; password: string } {
  return { host: server.host, port: server.port, user: server.user, password: server.password };
}

/**
 * A job's `source:` section on the shared server: its login, a replica server id in `idBase`'s range
 * that no other test process uses (a run and its snapshot workers take that id and the next seven),
 * the tables `db`.`tables`, and the test's own settings `more`.
 */
export function sharedSource(idBase: number, db: string, tables: readonly string[], more: Record<string, unknown> = {}): Record<string, unknown> {
  return { ...sourceLogin(sharedMysqlConfig()), serverId: idBase + (process.pid % 5000) * 8, include: tables.map((t) => `${db}.${t}`), ...more };
}

let counter = 0;

/** Creates a uniquely named database (in the shared server, or in `server`) and returns its name. */
export async function createTestDatabase(prefix: string, server = sharedMysqlConfig()): Promise<string> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter++}`.replace(/[^A-Za-z0-9_]/g, '_');
  const conn = await mysql.createConnection(server);
  try {
    await conn.query(`CREATE DATABASE \`${name}\``);
  } finally {
    await conn.end();
  }
  return name;
}

/**
 * A fresh database (`createTestDatabase`) and a connection to the shared server that uses it, with
 * BIGINT and DECIMAL values as exact text.
 */
export async function openTestDatabase(prefix: string): Promise<{ db: string; conn: mysql.Connection }> {
  const db = await createTestDatabase(prefix);
  const { host, port, user, password } = sharedMysqlConfig();
  const conn = await mysql.createConnection({ host, port, user, password, supportBigNumbers: true, bigNumberStrings: true });
  await conn.query(`USE \`${db}\``);
  return { db, conn };
}

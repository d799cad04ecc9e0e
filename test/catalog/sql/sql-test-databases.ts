/**
 * Databases for the SQL catalog tests: a fresh database on the harness MariaDB, a fresh schema in the
 * machine's PostgreSQL (127.0.0.1:5432, user postgres, database test, trust auth — override with
 * FLOE_TEST_PG_URL), and a fresh SQLite file. Each returns the catalog URL and a cleanup.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { createTestDatabase, sharedMysqlConfig } from '../../support/shared-mysql.js';
import type { TestS3Server } from '../../support/s3-server.js';

export interface TestSqlDatabase {
  url: string;
  dispose(): Promise<void>;
}

export const POSTGRES_URL = process.env.FLOE_TEST_PG_URL ?? 'postgresql://postgres@127.0.0.1:5432/test';

/** Whether the PostgreSQL server answers; the reason when not (tests skip with it). */
export async function postgresStatus(): Promise<{ available: boolean; reason: string }> {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return { available: true, reason: POSTGRES_URL };
  } catch (e) {
    return { available: false, reason: `PostgreSQL at ${POSTGRES_URL.replace(/:[^:@/]*@/, ':***@')} is not reachable (${e instanceof Error ? e.message : String(e)}); start it or set FLOE_TEST_PG_URL` };
  } finally {
    await client.end().catch(() => {});
  }
}

export async function freshPostgresSchema(): Promise<TestSqlDatabase> {
  const schema = `floe_test_${process.pid}_${randomUUID().slice(0, 8)}`;
  const sep = POSTGRES_URL.includes('?') ? '&' : '?';
  return {
    url: `${POSTGRES_URL}${sep}currentSchema=${schema}`,
    async dispose() {
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      try {
        await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      } finally {
        await client.end();
      }
    },
  };
}

export async function freshMariaDbDatabase(): Promise<TestSqlDatabase> {
  const name = await createTestDatabase('floe_sqlcat');
  const c = sharedMysqlConfig();
  return {
    url: `mysql://${encodeURIComponent(c.user)}:${encodeURIComponent(c.password)}@${c.host}:${c.port}/${name}`,
    async dispose() {
      const conn = await mysql.createConnection(c);
      try {
        await conn.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await conn.end();
      }
    },
  };
}

export async function freshSqliteFile(): Promise<TestSqlDatabase & { dir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'floe-sqlite-catalog-'));
  return { dir, url: `sqlite:${path.join(dir, 'catalog.db')}`, dispose: () => rm(dir, { recursive: true, force: true }) };
}

async function onPostgresAdmin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/**
 * A fresh database `<prefix>_<pid>_<time>` on the test PostgreSQL, for a test that needs a whole
 * database (an engine's catalog), not a schema; its name and its URL.
 */
export async function createPostgresDatabase(prefix: string): Promise<{ name: string; url: string }> {
  const name = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  await onPostgresAdmin(`CREATE DATABASE ${name}`);
  return { name, url: POSTGRES_URL.replace(/\/[^/?]*(\?|$)/, `/${name}$1`) };
}

export async function dropPostgresDatabase(name: string): Promise<void> {
  await onPostgresAdmin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}

/** Runs `body` on a fresh catalog database and a started S3 server, then stops and disposes of both. */
export async function withCatalogDbAndStorage(
  freshDb: () => Promise<TestSqlDatabase>,
  startStorage: () => Promise<TestS3Server>,
  body: (db: TestSqlDatabase, storage: TestS3Server) => Promise<void>,
): Promise<void> {
  const db = await freshDb();
  const storage = await startStorage();
  try {
    await body(db, storage);
  } finally {
    await storage.stop();
    await db.dispose();
  }
}

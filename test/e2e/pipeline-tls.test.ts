/**
 * `floe run` (a real child process, its binlog session in the worker thread as by default) against
 * Oracle MySQL 8 started with --require-secure-transport=ON (the mysql8 project only,
 * test/mysql8-suites.ts), as a caching_sha2_password user with a password and `source.tls.mode:
 * required`: the snapshot and the streamed changes reach the lake, which then equals MySQL row for
 * row; the server reports floe's Binlog Dump thread, and every other session of floe's, encrypted.
 * `floe status` reads the source's position over the same TLS, and `floe demo` runs on the server
 * as a configured source with `verify-ca`.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import type { LocalServer } from '../../src/demo/local-server.js';
import type { MysqlConnectionConfig } from '../../src/source/mysql/client.js';
import { runFloe } from '../cli/run-floe.js';
import { startTestServer } from '../support/servers.js';
import { serverPosition, waitForCatchUp } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

const JOB = 'tls-e2e';
const DB = 'tls_shop';
const TABLES = ['orders', 'notes'];
const USER = 'floe_tls';
const PASSWORD = 'tls-E2e-pass-5521';

let server: LocalServer;
let dir: string;
let conn: mysql.Connection;

/** How the test reads the server: as root, over TLS (the server accepts nothing else). */
const rootConnection = (): MysqlConnectionConfig => ({ host: server.host, port: server.port, user: 'root', password: '', tls: { mode: 'required' } });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-e2e-tls-'));
  server = await startTestServer({ extraArgs: ['--require-secure-transport=ON'], serverId: 41 });
  conn = await mysql.createConnection({ host: server.host, port: server.port, user: 'root', password: '', ssl: { rejectUnauthorized: false }, supportBigNumbers: true, bigNumberStrings: true });
  await conn.query(`CREATE USER '${USER}'@'%' IDENTIFIED WITH caching_sha2_password BY '${PASSWORD}'`);
  await conn.query(`GRANT SELECT, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO '${USER}'@'%'`);
  await conn.query(`CREATE DATABASE ${DB}`);
  await conn.query(`CREATE TABLE ${DB}.orders (id BIGINT UNSIGNED PRIMARY KEY, amount DECIMAL(14,4) NOT NULL, customer VARCHAR(40), created DATETIME(6) NOT NULL, meta JSON)`);
  await conn.query(`CREATE TABLE ${DB}.notes (k VARCHAR(20) PRIMARY KEY, body TEXT, blob_data VARBINARY(64))`);
  for (let base = 0; base < 3000; base += 500) {
    const rows = Array.from({ length: 500 }, (_, i) => {
      const id = base + i + 1;
      return `(${id}, ${(id * 3.1415).toFixed(4)}, 'customer ${id % 97} ü', '2024-0${1 + (id % 9)}-1${id % 10} 0${id % 10}:30:00.${String(id).padStart(6, '0')}', '{"n": ${id}, "tags": ["a", "b"]}')`;
    });
    await conn.query(`INSERT INTO ${DB}.orders VALUES ${rows.join(', ')}`);
  }
  await conn.query(`INSERT INTO ${DB}.notes VALUES ${Array.from({ length: 40 }, (_, i) => `('note-${i}', 'body ${i} 😀', X'${(i + 16).toString(16)}00ff')`).join(', ')}`);
  // the caching_sha2_password cache is empty: floe's first login takes the full authentication, over TLS
  await conn.query('FLUSH PRIVILEGES');
});

afterAll(async () => {
  await conn?.end();
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function changes(): Promise<void> {
  await conn.query(`INSERT INTO ${DB}.orders VALUES (18446744073709551615, 1.0001, 'last', '2030-01-01 00:00:00', NULL), (5000, 2, NULL, '2025-05-05 05:05:05.5', '[]')`);
  await conn.query(`UPDATE ${DB}.orders SET amount = amount * 2, customer = 'updated' WHERE id % 7 = 0`);
  await conn.query(`DELETE FROM ${DB}.orders WHERE id % 11 = 0`);
  await conn.query(`UPDATE ${DB}.orders SET id = id + 100000 WHERE id BETWEEN 100 AND 110`);
  await conn.beginTransaction();
  await conn.query(`INSERT INTO ${DB}.notes VALUES ('in-tx', 'one transaction, two tables', NULL)`);
  await conn.query(`UPDATE ${DB}.orders SET meta = JSON_SET(meta, '$.tx', true) WHERE id = 1`);
  await conn.query(`DELETE FROM ${DB}.notes WHERE k = 'note-3'`);
  await conn.commit();
  await conn.query(`UPDATE ${DB}.notes SET body = REPEAT('x', 2000), blob_data = X'00' WHERE k = 'note-5'`);
}

interface SessionCipher {
  command: string;
  cipher: string;
}

describe('floe run under source.tls.mode required', () => {
  it('snapshots and streams over TLS: the lake equals MySQL, and the binlog stream is encrypted', async () => {
    const warehouse = join(dir, 'warehouse');
    const configPath = join(dir, 'floe.yaml');
    await writeFile(
      configPath,
      [
        `job: { id: ${JOB} }`,
        'source:',
        `  host: ${server.host}`,
        `  port: ${server.port}`,
        `  user: ${USER}`,
        '  password: ${FLOE_TLS_E2E_PASSWORD}',
        '  serverId: 9141',
        `  include: ["${DB}.*"]`,
        '  snapshot: { chunkSize: 400, parallelism: 2 }',
        '  tls:',
        '    mode: ${FLOE_TLS_MODE:-required}',
        `warehouse: { location: ${JSON.stringify(warehouse)} }`,
        'commit: { intervalMs: 300, idleCheckpoints: 2 }',
        '',
      ].join('\n'),
    );
    const floe = new FloeProcess(configPath, { env: { FLOE_TLS_E2E_PASSWORD: PASSWORD } });
    try {
      const streaming = await floe.waitFor((r) => r.notification === 'streaming-started');
      expect(streaming, floe.tail()).toBeDefined();
      await changes();
      const catalog = new FileSystemCatalog({ warehouse });
      const watched = TABLES.map((t) => ({ identifier: { namespace: [DB], name: t }, sourceKey: `${DB}.${t}` }));
      await waitForCatchUp(catalog, watched, JOB, await serverPosition(rootConnection()), {
        timeoutMs: 60_000,
        check: () => {
          if (floe.hasExited) throw new Error(`floe exited:\n${floe.tail()}`);
        },
      });

      // the server's view of floe's sessions while it streams: the dump thread and the rest
      const [sessions] = (await conn.query(
        "SELECT t.PROCESSLIST_COMMAND AS command, s.VARIABLE_VALUE AS cipher FROM performance_schema.threads t JOIN performance_schema.status_by_thread s ON s.THREAD_ID = t.THREAD_ID AND s.VARIABLE_NAME = 'Ssl_cipher' WHERE t.PROCESSLIST_USER = ?",
        [USER],
      )) as unknown as [SessionCipher[]];
      const dumps = sessions.filter((s) => s.command.startsWith('Binlog Dump'));
      expect(dumps, JSON.stringify(sessions)).toHaveLength(1);
      for (const s of sessions) expect(s.cipher, JSON.stringify(s)).toMatch(/^[A-Z0-9_-]+$/);

      for (const t of TABLES) {
        const lake = await lakeTableRows(catalog, { namespace: [DB], name: t });
        const expected = await mysqlTableRows(rootConnection(), DB, t, lake.columns);
        expect({ table: t, ...multisetDifference(expected, lake.rows), count: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], count: expected.length });
      }
    } finally {
      floe.kill('SIGTERM');
      const exit = await floe.exited;
      expect(exit.code, floe.tail()).toBe(0);
    }
    expect(floe.logs.filter((r) => r.level === 'error'), floe.tail()).toEqual([]);
    expect(floe.logs.map((r) => JSON.stringify(r)).join('\n')).not.toContain(PASSWORD);

    // floe status reads where the source stands over the same TLS (it warns when it cannot)
    const status = await runFloe(['status', '-c', configPath, '--json', '--log-format', 'json'], { env: { FLOE_TLS_E2E_PASSWORD: PASSWORD } });
    expect(status.code, status.stderr).toBe(0);
    expect(status.stderr).not.toContain('cannot read the source binlog position');
    const plain = await runFloe(['status', '-c', configPath, '--json', '--log-format', 'json'], { env: { FLOE_TLS_E2E_PASSWORD: PASSWORD, FLOE_TLS_MODE: 'disabled' } });
    expect(plain.stderr).toContain('ER_SECURE_TRANSPORT_REQUIRED (3159)');
  });

  it('floe demo with a configured source that requires TLS', async () => {
    const configPath = join(dir, 'demo.yaml');
    await writeFile(configPath, `source: { host: ${server.host}, port: ${server.port}, user: root, serverId: 9142, tls: { mode: verify-ca, ca: ${JSON.stringify(join(server.dataDir!, 'ca.pem'))} } }\n`);
    const demo = await runFloe(['demo', '-c', configPath], { cwd: dir, timeoutMs: 180_000 });
    expect(demo.code, `${demo.stdout}\n${demo.stderr.slice(-4000)}`).toBe(0);
    expect(demo.stdout.match(/✓ same rows as MySQL/g)).toHaveLength(4);
  });
});

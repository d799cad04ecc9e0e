/**
 * The demo's local server (src/demo/local-server.ts, also the test harness's; run on MariaDB and MySQL 8): a persistent home is
 * initialised once and reused, a server left running by a killed process is adopted, and without
 * mariadbd or Docker `floe demo` says what to install.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import mysql from 'mysql2/promise';
import { startTestServer } from '../support/servers.js';
import { dockerMaybeReachable } from '../../src/demo/demo-server.js';
import { runFloe } from '../cli/run-floe.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-local-mariadb-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function query(port: number, sql: string): Promise<unknown[]> {
  const conn = await mysql.createConnection({ host: '127.0.0.1', port, user: 'root', password: '' });
  try {
    return (await conn.query(sql))[0] as unknown[];
  } finally {
    await conn.end();
  }
}

describe('a local server with a persistent home', () => {
  it('keeps its data across restarts, adopts a server it finds running, and records where it runs', async () => {
    const home = join(dir, 'home');
    const first = await startTestServer({ home, serverId: 3 });
    await query(first.port, 'CREATE DATABASE kept');
    await query(first.port, 'CREATE TABLE kept.t (id INT PRIMARY KEY)');
    await query(first.port, 'INSERT INTO kept.t VALUES (42)');
    const record = JSON.parse(await readFile(join(home, 'server.json'), 'utf8')) as { pid: number; port: number };
    expect(record.port).toBe(first.port);

    // A second start while the first still runs (its process was "killed" before it could stop the
    // server): the running server is adopted, not fought over.
    const adopted = await startTestServer({ home, serverId: 3 });
    expect(adopted.port).toBe(first.port);
    await adopted.stop();
    expect(existsSync(join(home, 'server.json'))).toBe(false);
    await expect(query(first.port, 'SELECT 1')).rejects.toThrow();

    // Started again on the same home: same data, binlog on.
    const again = await startTestServer({ home, serverId: 3 });
    try {
      expect(await query(again.port, 'SELECT id FROM kept.t')).toEqual([{ id: 42 }]);
      expect(await query(again.port, "SHOW GLOBAL VARIABLES LIKE 'binlog_format'")).toEqual([{ Variable_name: 'binlog_format', Value: 'ROW' }]);
    } finally {
      await again.stop();
    }
    expect(existsSync(join(home, 'data', 'mysql'))).toBe(true); // a persistent home is not removed
  });
});

describe('floe demo without any server', () => {
  it.skipIf(dockerMaybeReachable())('says what to install when neither mariadbd nor Docker is available (exit 1)', async () => {
    const cwd = join(dir, 'no-server');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(cwd);
    // Only node itself on the PATH (no docker), and MariaDB looked for in an empty directory only.
    const run = await runFloe(['demo'], { cwd, env: { PATH: dirname(process.execPath), FLOE_MARIADB_DIRS: cwd } });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('no MySQL-compatible server for the demo');
    expect(run.stderr).toContain('mariadb');
    expect(run.stderr).toContain('Docker');
    expect(existsSync(join(cwd, '.floe', 'demo-mysql', 'data'))).toBe(false);
  });
});

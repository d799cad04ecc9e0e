/**
 * `floe check` as a real child process against real, reconfigured MariaDB servers: each
 * misconfiguration is named on its own line (by check name and the setting or grant to change), the
 * storage and catalog probes run against a real warehouse directory, and the exit code is 3 exactly
 * when a required check fails.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { startMariaDb, type TestServer } from '../support/mariadb.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { logLines, runFloe } from './run-floe.js';

interface Line {
  check: string;
  ok: boolean;
  severity: string;
  message: string;
}

let dir: string;
let database: string;
let noBinlog: TestServer;
let badFormat: TestServer;

async function admin(server: { host: string; port: number; user: string; password: string }, sql: string[]): Promise<void> {
  const conn = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password });
  try {
    for (const s of sql) await conn.query(s);
  } finally {
    await conn.end();
  }
}

async function check(name: string, source: Record<string, unknown>, extra = ''): Promise<{ code: number | null; lines: Line[]; stdout: string; stderr: string }> {
  const file = join(dir, `${name}.yaml`);
  await writeFile(file, `source:\n${Object.entries(source).map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`).join('\n')}\nwarehouse:\n  location: ${JSON.stringify(join(dir, `wh-${name}`))}\n${extra}`);
  const run = await runFloe(['check', '-c', file], { cwd: dir });
  const lines = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
  return { code: run.code, lines, stdout: run.stdout, stderr: run.stderr };
}

function line(lines: Line[], name: string): Line {
  const found = lines.find((l) => l.check === name);
  if (!found) throw new Error(`no line ${name} in ${lines.map((l) => l.check).join(', ')}`);
  return found;
}

const conn = (s: TestServer) => ({ host: s.host, port: s.port, user: s.user, password: s.password });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-check-'));
  database = await createTestDatabase('clicheck');
  await admin(sharedMysqlConfig(), [`CREATE TABLE \`${database}\`.items (id INT PRIMARY KEY, name VARCHAR(20))`]);
  [noBinlog, badFormat] = await Promise.all([
    startMariaDb({ noBinlog: true, serverId: 21 }),
    startMariaDb({ extraArgs: ['--binlog-format=STATEMENT', '--binlog-row-image=MINIMAL'], serverId: 22 }),
  ]);
});

afterAll(async () => {
  await Promise.all([noBinlog?.stop(), badFormat?.stop()]);
  await rm(dir, { recursive: true, force: true });
});

describe('floe check', () => {
  it('passes on a well-configured server: one JSON line per check, source, storage and catalog, exit 0', async () => {
    const { code, lines } = await check('good', { ...sharedMysqlConfig(), serverId: 4711, include: [`${database}.*`] });
    expect(lines.filter((l) => !l.ok && l.severity === 'error')).toEqual([]);
    expect(code).toBe(0);
    expect(line(lines, 'source.connection').ok).toBe(true);
    expect(line(lines, 'source.tables').message).toContain(`${database}.items`);
    expect(line(lines, 'source.log_bin')).toMatchObject({ ok: true, message: 'binary log is on' });
    expect(line(lines, 'source.binlog_format')).toMatchObject({ ok: true, message: 'binlog_format=ROW' });
    expect(line(lines, 'source.server_id').ok).toBe(true);
    for (const name of ['storage.write', 'storage.read', 'storage.delete', 'storage.atomic-create', 'catalog.connect', 'catalog.namespaces']) {
      expect(line(lines, name).ok).toBe(true);
    }
    // The storage probe leaves nothing behind in the warehouse.
    expect(await readdir(join(dir, 'wh-good'))).toEqual([]);
  });

  it('names each captured table Spark cannot read (a TIME column stored as Iceberg time), with the setting that fixes it', async () => {
    const db = await createTestDatabase('clichecktime');
    await admin(sharedMysqlConfig(), [
      `CREATE TABLE \`${db}\`.shifts (id INT PRIMARY KEY, starts TIME, ends TIME(3))`,
      `CREATE TABLE \`${db}\`.durations (id INT PRIMARY KEY, took TIME)`,
      `CREATE TABLE \`${db}\`.plain (id INT PRIMARY KEY, at DATETIME)`,
    ]);
    const source = { ...sharedMysqlConfig(), serverId: 4711, include: [`${db}.*`] };
    const { code, lines } = await check('time', source);
    expect(code).toBe(0); // a warning: floe replicates the tables; Spark cannot read them
    expect(line(lines, 'source.spark-time')).toEqual({
      check: 'source.spark-time',
      ok: false,
      severity: 'warning',
      message: `2 captured tables have TIME columns stored as Iceberg time, which Spark cannot read (the whole table fails there): ${db}.durations (took); ${db}.shifts (starts, ends); set source.timeAs: micros to store every TIME column as long microseconds (or list the columns in source.timeAsMicros), then re-snapshot the tables already in the lake`,
    });
    // the per-column list fixes the tables it covers whole
    const listed = await check('time-listed', { ...source, timeAsMicros: [`${db}.durations.took`, `${db}.shifts.ends`] });
    expect(line(listed.lines, 'source.spark-time').message).toMatch(new RegExp(`^1 captured table has TIME columns .*: ${db}\\.shifts \\(starts\\); set source\\.timeAs: micros`));
    const micros = await check('time-micros', { ...source, timeAs: 'micros' });
    expect(line(micros.lines, 'source.spark-time')).toEqual({ check: 'source.spark-time', ok: true, severity: 'info', message: 'no captured column is stored as Iceberg time: Spark reads every table' });
  });

  it('names each captured table with a column floe cannot replicate, and exits 3', async () => {
    const db = await createTestDatabase('clichecktypes');
    await admin(sharedMysqlConfig(), [
      `CREATE TABLE \`${db}\`.places (id INT PRIMARY KEY, at POINT)`,
      `CREATE TABLE \`${db}\`.legacy (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET dec8)`,
      `CREATE TABLE \`${db}\`.fine (id INT PRIMARY KEY, name VARCHAR(20) CHARACTER SET gbk)`,
    ]);
    const { code, lines } = await check('types', { ...sharedMysqlConfig(), serverId: 4711, include: [`${db}.*`] });
    expect(code).toBe(3);
    expect(line(lines, 'source.column-types')).toEqual({
      check: 'source.column-types',
      ok: false,
      severity: 'error',
      message:
        `2 captured tables with a column floe cannot replicate: column ${db}.legacy.name (varchar(20)) has the character set dec8, which floe cannot decode from the binlog (dec8, geostd8, hp8, keybcs2 and swe7 have no decoder); convert the column to utf8mb4 (ALTER TABLE … MODIFY … CHARACTER SET utf8mb4), or exclude the table (source.exclude); ` +
        `column ${db}.places.at has the spatial type point: floe does not map spatial types to Iceberg; exclude the table (source.exclude)`,
    });
    const excluded = await check('types-excluded', { ...sharedMysqlConfig(), serverId: 4711, include: [`${db}.*`], exclude: [`${db}.places`, `${db}.legacy`] });
    expect(line(excluded.lines, 'source.column-types')).toEqual({ check: 'source.column-types', ok: true, severity: 'error', message: 'floe maps every column of the captured tables' });
  });

  it('names a server without a binary log and exits 3', async () => {
    const { code, lines } = await check('nobinlog', { ...conn(noBinlog), serverId: 4711 });
    expect(code).toBe(3);
    const logBin = line(lines, 'source.log_bin');
    expect(logBin).toMatchObject({ ok: false, severity: 'error' });
    expect(logBin.message).toMatch(/binary log is off/);
    expect(logBin.message).toMatch(/log-bin/);
  });

  it('names binlog_format=STATEMENT and binlog_row_image=MINIMAL, each with the setting to change', async () => {
    const { code, lines } = await check('format', { ...conn(badFormat), serverId: 4711 });
    expect(code).toBe(3);
    expect(line(lines, 'source.log_bin').ok).toBe(true);
    const format = line(lines, 'source.binlog_format');
    expect(format).toMatchObject({ ok: false, severity: 'error' });
    expect(format.message).toContain('binlog_format is STATEMENT');
    expect(format.message).toContain("binlog_format='ROW'");
    const image = line(lines, 'source.binlog_row_image');
    expect(image).toMatchObject({ ok: false, severity: 'error' });
    expect(image.message).toContain('binlog_row_image is MINIMAL');
    expect(image.message).toContain('FULL');
  });

  it('names the missing replication privileges of a user that can only SELECT, without printing its password', async () => {
    const user = `floe_ro_${process.pid}`;
    const password = 'not-in-any-output-3141';
    await admin(sharedMysqlConfig(), [
      `DROP USER IF EXISTS '${user}'@'%'`,
      `CREATE USER '${user}'@'%' IDENTIFIED BY '${password}'`,
      `GRANT SELECT ON \`${database}\`.* TO '${user}'@'%'`,
    ]);
    try {
      const shared = sharedMysqlConfig();
      const { code, lines, stdout, stderr } = await check('grants', { host: shared.host, port: shared.port, user, password, serverId: 4711, include: [`${database}.*`] });
      expect(code).toBe(3);
      const privileges = line(lines, 'source.privileges');
      expect(privileges).toMatchObject({ ok: false, severity: 'error' });
      expect(privileges.message).toContain('REPLICATION SLAVE');
      expect(privileges.message).toMatch(/BINLOG MONITOR|REPLICATION CLIENT/);
      expect(privileges.message).toContain('GRANT');
      expect(stdout + stderr).not.toContain(password);
    } finally {
      await admin(sharedMysqlConfig(), [`DROP USER IF EXISTS '${user}'@'%'`]);
    }
  });

  it('names an unreachable source, an unwritable warehouse and a missing source section', async () => {
    await writeFile(join(dir, 'not-a-dir'), 'a file where the warehouse should be');
    const { code, lines } = await check('unreachable', { host: '127.0.0.1', port: 1, user: 'nobody', password: 'pw-secret-2718' }, '');
    expect(code).toBe(3);
    expect(line(lines, 'source.connection')).toMatchObject({ ok: false, severity: 'error' });
    expect(line(lines, 'source.connection').message).toContain('nobody@127.0.0.1:1');
    expect(JSON.stringify(lines)).not.toContain('pw-secret-2718');

    const file = join(dir, 'nosource.yaml');
    await writeFile(file, `warehouse:\n  location: ${JSON.stringify(join(dir, 'not-a-dir', 'warehouse'))}\n`);
    const run = await runFloe(['check', '-c', file], { cwd: dir });
    expect(run.code).toBe(3);
    const noSource = run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line);
    expect(line(noSource, 'source.config')).toMatchObject({ ok: false, severity: 'error' });
    expect(line(noSource, 'storage.write')).toMatchObject({ ok: false, severity: 'error' });
    expect(line(noSource, 'storage.write').message).toContain('not-a-dir');
  });

  it('floe run exits 3 without starting when a required check fails, naming it in the log', async () => {
    const file = join(dir, 'run-nobinlog.yaml');
    await writeFile(file, `source: { host: ${noBinlog.host}, port: ${noBinlog.port}, user: ${noBinlog.user}, serverId: 4711 }\nwarehouse: { location: ${JSON.stringify(join(dir, 'wh-run'))} }\n`);
    const done = await runFloe(['run', '-c', file], { cwd: dir });
    expect(done.code).toBe(3);
    const errors = logLines(done.stderr).filter((l) => l.level === 'error');
    expect(errors.some((l) => l.check === 'source.log_bin' && String(l.msg).includes('binary log is off'))).toBe(true);
  });

  it('exits 2 on an invalid configuration, naming the offending path', async () => {
    const file = join(dir, 'invalid.yaml');
    await writeFile(file, 'source:\n  port: "three thousand"\nschemaChanges: sometimes\n');
    const run = await runFloe(['check', '-c', file], { cwd: dir });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('source.port');
    expect(run.stderr).toContain('schemaChanges');
    expect(run.stdout).toBe('');
  });
});

/**
 * Pre-flight against real, reconfigured harness servers: each misconfiguration yields its own failed
 * check whose message names the setting or grant to change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import mysql from 'mysql2/promise';
import { checkSource, preflightPassed, type PreflightCheck } from '../../../src/source/mysql/preflight.js';
import { dialectFor, parseServerVersion } from '../../../src/source/mysql/dialect.js';
import { parseGrants, canSelectTable, grantPatternMatches, hasGlobal } from '../../../src/source/mysql/grants.js';
import { startMariaDb, type TestServer } from '../../support/mariadb.js';
import { sharedMysqlConfig } from '../../support/shared-mysql.js';

function check(checks: PreflightCheck[], name: string): PreflightCheck {
  const c = checks.find((x) => x.check === name);
  if (!c) throw new Error(`no check ${name} in ${checks.map((x) => x.check).join(', ')}`);
  return c;
}

async function admin(server: TestServer, sql: string[]): Promise<void> {
  const conn = await mysql.createConnection({ host: server.host, port: server.port, user: server.user, password: server.password });
  try {
    for (const s of sql) await conn.query(s);
  } finally {
    await conn.end();
  }
}

const config = (s: TestServer) => ({ host: s.host, port: s.port, user: s.user, password: s.password });

describe('pre-flight on a well-configured server', () => {
  it('passes every blocking check on the harness server', async () => {
    const report = await checkSource(sharedMysqlConfig(), { serverId: 4242 });
    const failed = report.checks.filter((c) => !c.ok && c.severity === 'error');
    expect(failed).toEqual([]);
    expect(preflightPassed(report.checks)).toBe(true);
    expect(check(report.checks, 'log_bin').ok).toBe(true);
    expect(check(report.checks, 'binlog_format').message).toBe('binlog_format=ROW');
    expect(check(report.checks, 'server').message).toMatch(/^(MySQL|MariaDB) /);
  });

  it('reports an unreachable server as a failed connection check', async () => {
    const report = await checkSource({ host: '127.0.0.1', port: 1, user: 'nobody', password: 'secret-pw', connectTimeoutMs: 2000 });
    expect(report.checks).toHaveLength(1);
    expect(report.checks[0]).toMatchObject({ check: 'connection', ok: false, severity: 'error' });
    expect(report.checks[0].message).toContain('nobody@127.0.0.1:1');
    expect(report.checks[0].message).not.toContain('secret-pw');
  });
});

describe('pre-flight on misconfigured servers', () => {
  let noBinlog: TestServer;
  let server: TestServer;

  beforeAll(async () => {
    [noBinlog, server] = await Promise.all([
      startMariaDb({ noBinlog: true, serverId: 11 }),
      startMariaDb({ extraArgs: ['--binlog-format=STATEMENT'], serverId: 12 }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([noBinlog?.stop(), server?.stop()]);
  });

  it('binlog off: log_bin fails and says to enable log-bin', async () => {
    const { checks } = await checkSource(config(noBinlog));
    const c = check(checks, 'log_bin');
    expect(c.ok).toBe(false);
    expect(c.severity).toBe('error');
    expect(c.message).toMatch(/binary log is off \(log_bin=OFF\): start the server with log-bin/);
    expect(preflightPassed(checks)).toBe(false);
  });

  it('STATEMENT format: binlog_format fails and says to set ROW', async () => {
    const { checks } = await checkSource(config(server));
    const c = check(checks, 'binlog_format');
    expect(c).toMatchObject({ ok: false, severity: 'error' });
    expect(c.message).toMatch(/^binlog_format is STATEMENT: set binlog_format=ROW/);
    expect(check(checks, 'log_bin').ok).toBe(true);
    expect(check(checks, 'binlog_row_image').ok).toBe(true);
  });

  it('MINIMAL row image: binlog_row_image fails and says to set FULL', async () => {
    await server.restart!(['--binlog-row-image=MINIMAL']);
    const { checks } = await checkSource(config(server));
    const c = check(checks, 'binlog_row_image');
    expect(c).toMatchObject({ ok: false, severity: 'error' });
    expect(c.message).toMatch(/^binlog_row_image is MINIMAL: set binlog_row_image=FULL/);
    expect(check(checks, 'binlog_format').ok).toBe(true);
  });

  it('a user without replication privileges: privileges fails naming each missing grant', async () => {
    await server.restart!([]);
    await admin(server, [
      'CREATE DATABASE shop',
      'CREATE TABLE shop.orders (id INT PRIMARY KEY)',
      'CREATE TABLE shop.secret (id INT PRIMARY KEY)',
      "CREATE USER 'reader'@'%' IDENTIFIED BY 'pw-1'",
      "GRANT SELECT ON shop.orders TO 'reader'@'%'",
      "CREATE USER 'repl'@'%' IDENTIFIED BY 'pw-2'",
      "GRANT SELECT, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'repl'@'%'",
    ]);
    const tables = [{ database: 'shop', table: 'orders' }, { database: 'shop', table: 'secret' }];
    const reader = await checkSource({ ...config(server), user: 'reader', password: 'pw-1' }, { tables });
    const p = check(reader.checks, 'privileges');
    expect(p).toMatchObject({ ok: false, severity: 'error' });
    expect(p.message).toContain('REPLICATION SLAVE');
    expect(p.message).toContain('BINLOG MONITOR');
    expect(p.message).toContain('shop.secret');
    expect(p.message).not.toContain('pw-1');
    expect(p.message).not.toContain('shop.orders,');

    const repl = await checkSource({ ...config(server), user: 'repl', password: 'pw-2' }, { tables });
    expect(check(repl.checks, 'privileges').ok).toBe(true);
  });

  it('server id clashes with the source or a registered replica', async () => {
    const own = await checkSource(config(server), { serverId: 12 });
    expect(check(own.checks, 'server_id')).toMatchObject({ ok: false, severity: 'error' });
    expect(check(own.checks, 'server_id').message).toMatch(/source server's own server_id: set the source option serverId/);

    const replica = await startMariaDb({ serverId: 77, extraArgs: ['--report-host=127.0.0.1'] });
    try {
      await admin(replica, [`CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=${server.port}, MASTER_USER='root', MASTER_PASSWORD=''`, 'START SLAVE']);
      let clash: PreflightCheck | undefined;
      for (let i = 0; i < 100; i++) {
        clash = check((await checkSource(config(server), { serverId: 77 })).checks, 'server_id');
        if (!clash.ok) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(clash).toMatchObject({ ok: false, severity: 'error' });
      expect(clash!.message).toMatch(/replica 127\.0\.0\.1:\d+ already uses server id 77/);
      expect(check((await checkSource(config(server), { serverId: 78 })).checks, 'server_id').ok).toBe(true);
    } finally {
      await admin(replica, ['STOP SLAVE']).catch(() => undefined);
      await replica.stop();
    }
  });

  it('binlog retention shorter than the expected snapshot fails, with the value to set', async () => {
    await admin(server, ['SET GLOBAL binlog_expire_logs_seconds = 86400']);
    const short = await checkSource(config(server), { expectedSnapshotSeconds: 3 * 86400 });
    const r = check(short.checks, 'binlog_retention');
    expect(r).toMatchObject({ ok: false, severity: 'error' });
    expect(r.message).toMatch(/kept for 24 h \(binlog_expire_logs_seconds=86400\).*estimated to take 3 d.*raise binlog_expire_logs_seconds to at least 518400/);
    const tight = check((await checkSource(config(server), { expectedSnapshotSeconds: 18 * 3600 })).checks, 'binlog_retention');
    expect(tight).toMatchObject({ ok: false, severity: 'warning' });
    const fine = check((await checkSource(config(server), { expectedSnapshotSeconds: 3600 })).checks, 'binlog_retention');
    expect(fine.ok).toBe(true);
    await admin(server, ['SET GLOBAL binlog_expire_logs_seconds = 0']);
    expect(check((await checkSource(config(server), {})).checks, 'binlog_retention').message).toMatch(/not purged automatically/);
  });
});

describe('dialect and grant parsing', () => {
  it('picks the statements per flavour and version', () => {
    expect(dialectFor('8.4.3').binlogStatusSql).toBe('SHOW BINARY LOG STATUS');
    expect(dialectFor('8.0.36').binlogStatusSql).toBe('SHOW MASTER STATUS');
    expect(dialectFor('8.0.36').replicasSql).toBe('SHOW REPLICAS');
    expect(dialectFor('5.7.44-log').replicasSql).toBe('SHOW SLAVE HOSTS');
    expect(dialectFor('5.7.44-log').hasRowValueOptions).toBe(false);
    expect(dialectFor('8.0.20').hasTransactionCompression).toBe(true);
    const maria = dialectFor('10.11.19-MariaDB-0+deb12u1');
    expect(maria).toMatchObject({ flavor: 'mariadb', binlogStatusSql: 'SHOW MASTER STATUS', gtidExecutedSql: 'SELECT @@GLOBAL.gtid_binlog_pos AS gtids' });
    expect(parseServerVersion('5.5.5-10.6.12-MariaDB')).toEqual({ flavor: 'mariadb', version: { major: 10, minor: 6, patch: 12 } });
  });

  it('reads SHOW GRANTS lines, LIKE patterns and column grants', () => {
    const g = parseGrants([
      "GRANT REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `floe`@`%` IDENTIFIED BY PASSWORD '*ABC'",
      'GRANT SELECT ON `shop\\_%`.* TO `floe`@`%`',
      'GRANT SELECT (`a`, `b`), INSERT ON `crm`.`people` TO `floe`@`%`',
      'GRANT `analyst`@`%` TO `floe`@`%`',
    ]);
    expect(hasGlobal(g, 'REPLICATION SLAVE')).toBe(true);
    expect(hasGlobal(g, 'SELECT')).toBe(false);
    expect(canSelectTable(g, 'shop_eu', 'orders')).toBe(true);
    expect(canSelectTable(g, 'shopXeu', 'orders')).toBe(false);
    expect(canSelectTable(g, 'crm', 'people')).toBe(true);
    expect(canSelectTable(g, 'crm', 'other')).toBe(false);
    expect(g.roles).toEqual(['`analyst`@`%`']);
    expect(grantPatternMatches('a_c', 'abc')).toBe(true);
    expect(grantPatternMatches('a\\_c', 'abc')).toBe(false);
  });
});

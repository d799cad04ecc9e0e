/**
 * `floe check` (a real child process) on TLS, against Oracle MySQL 8 (the mysql8 project only,
 * test/mysql8-suites.ts): a private server with --require-secure-transport=ON and the certificates
 * it generated, and the run's shared server (TLS offered, not required). The `source.tls` line says
 * whether the session is encrypted, with the protocol and cipher the server reports and what the
 * mode checked; a refused or unverifiable connection is one `source.connection` line naming the
 * server's error or the certificate, the reason and the setting; a private key given as PEM text
 * through `${VAR}` appears nowhere in the output of `floe check` or `floe snapshot`.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServer } from '../../src/demo/local-server.js';
import { startTestServer } from '../support/servers.js';
import { sharedMysqlConfig } from '../support/shared-mysql.js';
import { makeCertificateAuthority, type CertificateFiles } from '../support/tls-certificates.js';
import { logLines, runFloe } from './run-floe.js';

interface Line {
  check: string;
  ok: boolean;
  severity: string;
  message: string;
}

let server: LocalServer;
let dir: string;
let otherCa: CertificateFiles;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-check-tls-'));
  server = await startTestServer({ extraArgs: ['--require-secure-transport=ON'], serverId: 31 });
  otherCa = await makeCertificateAuthority(dir, 'Check Test CA');
});

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A config file for `source` with `source.tls` as given (and `source.include`, when given). */
async function configFile(name: string, source: { host: string; port: number; user: string; password?: string }, tls: Record<string, string>, include?: string): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  const tlsYaml = Object.entries(tls).map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`).join('\n');
  await writeFile(
    file,
    `source:\n  host: ${source.host}\n  port: ${source.port}\n  user: ${source.user}\n  password: ${JSON.stringify(source.password ?? '')}\n  serverId: 4712\n` +
      (include ? `  include: [${JSON.stringify(include)}]\n` : '') +
      `  tls:\n${tlsYaml}\nwarehouse:\n  location: ${JSON.stringify(join(dir, `wh-${name}`))}\n`,
  );
  return file;
}

async function check(name: string, source: { host: string; port: number; user: string; password?: string }, tls: Record<string, string>, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; lines: Line[]; output: string }> {
  const run = await runFloe(['check', '-c', await configFile(name, source, tls)], { cwd: dir, env });
  return { code: run.code, lines: run.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as Line), output: run.stdout + run.stderr };
}

function line(lines: Line[], name: string): Line {
  const found = lines.find((l) => l.check === name);
  if (!found) throw new Error(`no line ${name} in ${lines.map((l) => l.check).join(', ')}`);
  return found;
}

const root = () => ({ host: server.host, port: server.port, user: 'root' });

describe('floe check on TLS', () => {
  it('encrypted: the protocol and cipher the server reports, and what the mode checked', async () => {
    const required = await check('required', root(), { mode: 'required' });
    expect(required.code).toBe(0);
    expect(line(required.lines, 'source.connection')).toMatchObject({ ok: true, message: `connected to root@127.0.0.1:${server.port}` });
    const unchecked = line(required.lines, 'source.tls');
    expect(unchecked).toMatchObject({ ok: true, severity: 'info' });
    expect(unchecked.message).toMatch(/^encrypted \(TLSv1\.[23], [A-Z0-9_-]+\); the server certificate is not checked \(mode required\): set source\.tls\.mode: verify-identity \(or verify-ca\) and source\.tls\.ca/);

    const verified = await check('verify-ca', root(), { mode: 'verify-ca', ca: join(server.dataDir!, 'ca.pem') });
    expect(verified.code).toBe(0);
    expect(line(verified.lines, 'source.tls').message).toMatch(/^encrypted \(TLSv1\.[23], [A-Z0-9_-]+\); the server certificate chains to source\.tls\.ca \(its name is not checked: mode verify-identity also checks it\)$/);
  });

  it('plain: a warning that says what crosses the network and what to set', async () => {
    const shared = sharedMysqlConfig();
    const { code, lines } = await check('plain', shared, { mode: 'disabled' });
    expect(code).toBe(0);
    expect(line(lines, 'source.connection').ok).toBe(true);
    expect(line(lines, 'source.tls')).toEqual({
      check: 'source.tls',
      ok: false,
      severity: 'warning',
      message: 'not encrypted (source.tls.mode: disabled): the password and the rows cross the network readable; set source.tls.mode: required (or verify-identity) unless the network is trusted',
    });
  });

  it('refused for want of TLS: one line with the server error and the setting, exit 3', async () => {
    const { code, lines } = await check('disabled', root(), { mode: 'disabled' });
    expect(code).toBe(3);
    expect(line(lines, 'source.connection')).toEqual({
      check: 'source.connection',
      ok: false,
      severity: 'error',
      message:
        `cannot connect to root@127.0.0.1:${server.port}: server error ER_SECURE_TRANSPORT_REQUIRED (3159): Connections using insecure transport are prohibited while --require_secure_transport=ON; ` +
        'the server accepts only encrypted connections: set source.tls.mode: required (or verify-ca / verify-identity with source.tls.ca, which also check its certificate)',
    });
  });

  it('a certificate that does not verify: which one, why, and the setting that changes it', async () => {
    const wrongCa = await check('wrong-ca', root(), { mode: 'verify-ca', ca: otherCa.cert });
    expect(wrongCa.code).toBe(3);
    expect(line(wrongCa.lines, 'source.connection').message).toMatch(
      /^cannot connect to root@127\.0\.0\.1:\d+: the server's certificate "CN=MySQL_Server_[\d.]+_Auto_Generated_Server_Certificate" \(issued by "CN=MySQL_Server_[\d.]+_Auto_Generated_CA_Certificate"\) does not verify against source\.tls\.ca: SELF_SIGNED_CERT_IN_CHAIN \(self-signed certificate in certificate chain\); set source\.tls\.ca to the certificate of the CA that issued it/,
    );

    const wrongName = await check('wrong-name', root(), { mode: 'verify-identity', ca: join(server.dataDir!, 'ca.pem') });
    expect(wrongName.code).toBe(3);
    const message = line(wrongName.lines, 'source.connection').message;
    expect(message).toContain("is not for 127.0.0.1: ERR_TLS_CERT_ALTNAME_INVALID (Hostname/IP does not match certificate's altnames: IP: 127.0.0.1 is not in the cert's list: )");
    expect(message).toContain('or source.tls.mode: verify-ca to check only that it chains to source.tls.ca');
  });

  it('a client certificate with its key as PEM text in ${VAR}: floe check and floe snapshot connect, and the key is in none of their output', async () => {
    const conn = await mysql.createConnection({ ...root(), password: '', ssl: { rejectUnauthorized: false } });
    const db = `tls_check_${process.pid}`;
    try {
      await conn.query("CREATE USER 'floe_cert'@'%' REQUIRE X509");
      await conn.query("GRANT ALL PRIVILEGES ON *.* TO 'floe_cert'@'%'");
      await conn.query(`CREATE DATABASE ${db}`);
      await conn.query(`CREATE TABLE ${db}.t (id INT PRIMARY KEY, v VARCHAR(10))`);
      await conn.query(`INSERT INTO ${db}.t VALUES (1, 'a'), (2, 'b')`);
    } finally {
      await conn.end();
    }
    // MySQL writes its PEM files with a trailing NUL byte, which no environment variable can hold (a shell drops it too)
    const key = (await readFile(join(server.dataDir!, 'client-key.pem'), 'utf8')).replace(/\0+$/, '');
    const env = { FLOE_TLS_KEY: key };
    const tls = { mode: 'verify-ca', ca: join(server.dataDir!, 'ca.pem'), cert: join(server.dataDir!, 'client-cert.pem'), key: '${FLOE_TLS_KEY}' };
    const checked = await check('client-cert', { ...root(), user: 'floe_cert' }, tls, env);
    expect(line(checked.lines, 'source.connection')).toMatchObject({ ok: true, message: `connected to floe_cert@127.0.0.1:${server.port}` });
    expect(line(checked.lines, 'source.tls').ok).toBe(true);

    // floe snapshot copies the table and exits; its log carries the (redacted) config
    const file = await configFile('client-cert-snapshot', { ...root(), user: 'floe_cert' }, tls, `${db}.*`);
    const snapshot = await runFloe(['snapshot', '-c', file, '--no-progress', '--log-format', 'json'], { cwd: dir, env });
    expect(snapshot.code, snapshot.stderr).toBe(0);
    const starting = logLines(snapshot.stderr).find((l) => String(l.msg).includes('starting'));
    expect((starting?.config as { source: { tls: unknown } }).source.tls).toMatchObject({ mode: 'verify-ca', key: '***' });
    for (const body of key.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'))) {
      expect(checked.output).not.toContain(body);
      expect(snapshot.stdout + snapshot.stderr).not.toContain(body);
    }
  });
});

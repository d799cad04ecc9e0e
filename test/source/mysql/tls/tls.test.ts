/**
 * TLS to the source against real Oracle MySQL 8 servers (the mysql8 project only,
 * test/mysql8-suites.ts): a server started with --require-secure-transport=ON and the certificates
 * `mysqld --initialize` generated (ca.pem, client-cert.pem, client-key.pem in its data directory),
 * the same server restarted with a certificate of the test's own CA naming 127.0.0.1 and localhost,
 * and again without TLS; the run's shared server (TLS offered, not required) for a password user and
 * the binlog connection.
 *
 * Each mode connects or fails as the MySQL client's --ssl-mode would, the server itself reports the
 * session encrypted (Ssl_version, Ssl_cipher), a failure is one line that names the certificate, the
 * reason (Node's code) and the setting to change, and a private key given as PEM text appears in no
 * error and no log line.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalServer } from '../../../../src/demo/local-server.js';
import { BinlogReader } from '../../../../src/source/mysql/binlog/binlog-reader.js';
import { connectMysql, type MysqlClient, type MysqlConnectionConfig } from '../../../../src/source/mysql/client.js';
import { readSessionTls } from '../../../../src/source/mysql/tls/session-tls.js';
import type { TlsSettings } from '../../../../src/source/mysql/tls/tls-settings.js';
import { createLogger } from '../../../../src/pipeline/observe/logger.js';
import { FloeError, isFloeError } from '../../../../src/util/errors.js';
import { startTestServer } from '../../../support/servers.js';
import { createTestDatabase, sharedMysqlConfig } from '../../../support/shared-mysql.js';
import { makeCertificateAuthority, makeServerCertificate, type CertificateFiles } from '../../../support/tls-certificates.js';
import { decodingFor, replicaId } from '../binlog/helpers.js';

let server: LocalServer;
let dir: string;
/** The CA that generated the server's certificates (its data directory's ca.pem). */
let serverCa: string;
let otherCa: CertificateFiles;

const AUTO_SERVER_CERT = /CN=MySQL_Server_[\d.]+_Auto_Generated_Server_Certificate/;
const AUTO_CA_CERT = /CN=MySQL_Server_[\d.]+_Auto_Generated_CA_Certificate/;

function on(tls: TlsSettings, extra: Partial<MysqlConnectionConfig> = {}): MysqlConnectionConfig {
  return { host: server.host, port: server.port, user: 'root', password: '', tls, ...extra };
}

async function failure(config: MysqlConnectionConfig): Promise<FloeError> {
  const e = await connectMysql(config).then(
    async (c) => {
      await c.close();
      return undefined;
    },
    (err: unknown) => err,
  );
  if (!(e instanceof FloeError)) throw new Error(`expected a FloeError, found ${String(e)}`);
  return e;
}

async function admin(config: { host: string; port: number; user: string; password: string }, statements: string[], ssl = true): Promise<unknown[]> {
  const { host, port, user, password } = config;
  const conn = await mysql.createConnection({ host, port, user, password, ...(ssl ? { ssl: { rejectUnauthorized: false } } : {}) });
  try {
    const results: unknown[] = [];
    for (const s of statements) results.push((await conn.query(s))[0]);
    return results;
  } finally {
    await conn.end();
  }
}

async function withClient<T>(config: MysqlConnectionConfig, use: (c: MysqlClient) => Promise<T>): Promise<T> {
  const c = await connectMysql(config);
  try {
    return await use(c);
  } finally {
    await c.close();
  }
}

/** Every text an error carries: message, stack, causes, and the line the logger writes for it. */
function everyText(e: Error): string {
  let out = '';
  for (let c: unknown = e; c instanceof Error; c = c.cause) out += `${c.message}\n${c.stack ?? ''}\n`;
  let logged = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged += chunk.toString();
      done();
    },
  });
  createLogger({ destination: sink, format: 'json' }).error('connection failed', { err: e });
  return out + logged;
}

/** The base64 body lines of a PEM text (what must never appear). */
function pemBody(pem: string): string[] {
  return pem.split('\n').filter((l) => l.length > 20 && !l.startsWith('-----'));
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'floe-tls-'));
  server = await startTestServer({ extraArgs: ['--require-secure-transport=ON'] });
  serverCa = join(server.dataDir!, 'ca.pem');
  otherCa = await makeCertificateAuthority(dir, 'Another Test CA');
});

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('source.tls against MySQL 8 with require_secure_transport=ON and its generated certificates', () => {
  it('disabled: refused in one line with the server error and the setting to change, no statement', async () => {
    const e = await failure(on({ mode: 'disabled' }));
    expect(e.message).toBe(
      `source.mysql: cannot connect to root@127.0.0.1:${server.port}: server error ER_SECURE_TRANSPORT_REQUIRED (3159): ` +
        'Connections using insecure transport are prohibited while --require_secure_transport=ON; ' +
        'the server accepts only encrypted connections: set source.tls.mode: required (or verify-ca / verify-identity with source.tls.ca, which also check its certificate)',
    );
    expect(isFloeError(e, 'source')).toBe(true);
    expect(e.retryable).toBe(false);
    expect(e.context.code).toBe('ER_SECURE_TRANSPORT_REQUIRED');
  });

  it('preferred, required and verify-ca (ca as a path and as PEM text) give sessions the server reports encrypted', async () => {
    const caText = await readFile(serverCa, 'utf8');
    for (const tls of [{ mode: 'preferred' }, { mode: 'required' }, { mode: 'verify-ca', ca: serverCa }, { mode: 'verify-ca', ca: caText }] as TlsSettings[]) {
      await withClient(on(tls), async (c) => {
        expect(c.encrypted, tls.mode).toBe(true);
        const session = await readSessionTls(c);
        expect(session?.version, tls.mode).toMatch(/^TLSv1\.[23]$/);
        expect(session?.cipher, tls.mode).toMatch(/^[A-Z0-9_-]+$/);
        expect(await c.query('SELECT CURRENT_USER() AS u')).toEqual([{ u: 'root@127.0.0.1' }]);
      });
    }
  });

  it('verify-identity: the generated certificate names no host, so 127.0.0.1 and localhost fail, naming the certificate, the reason and the setting', async () => {
    for (const host of ['127.0.0.1', 'localhost']) {
      const e = await failure(on({ mode: 'verify-identity', ca: serverCa }, { host }));
      expect(e.message).toMatch(new RegExp(`^source\\.mysql: cannot connect to root@${host}:${server.port}: the server's certificate "`));
      expect(e.message).toMatch(AUTO_SERVER_CERT);
      expect(e.message).toMatch(AUTO_CA_CERT);
      expect(e.message).toContain(`is not for ${host}: ERR_TLS_CERT_ALTNAME_INVALID (Hostname/IP does not match certificate's altnames: ${host === 'localhost' ? 'Host: localhost' : 'IP: 127.0.0.1'}`);
      expect(e.message).toContain('no alternative names');
      expect(e.message).toContain('set source.host to a name the certificate holds');
      expect(e.message).toContain('source.tls.mode: verify-ca');
      expect(e.message.match(/source\.mysql:/g)).toHaveLength(1);
      expect(e.retryable).toBe(false);
    }
  });

  it('a CA that did not issue the server certificate fails verify-ca and verify-identity: which certificate, SELF_SIGNED_CERT_IN_CHAIN, source.tls.ca', async () => {
    for (const mode of ['verify-ca', 'verify-identity'] as const) {
      const e = await failure(on({ mode, ca: otherCa.cert }));
      expect(e.message).toMatch(AUTO_SERVER_CERT);
      expect(e.message).toContain('does not verify against source.tls.ca: SELF_SIGNED_CERT_IN_CHAIN (self-signed certificate in certificate chain)');
      expect(e.message).toContain("set source.tls.ca to the certificate of the CA that issued it (for MySQL's auto-generated certificates: ca.pem in the server's data directory)");
    }
    // verify-identity without ca checks against the public CAs, which did not issue it either
    const e = await failure(on({ mode: 'verify-identity' }));
    expect(e.message).toContain("does not verify against Node's public CA store (source.tls.ca is not set): SELF_SIGNED_CERT_IN_CHAIN");
  });

  it('a user created REQUIRE X509 is refused without a client certificate and accepted with source.tls.cert and key, as paths or as PEM text', async () => {
    await admin(server, ["CREATE USER 'floe_x509'@'%' REQUIRE X509"]);
    const cert = join(server.dataDir!, 'client-cert.pem');
    const key = join(server.dataDir!, 'client-key.pem');
    const e = await failure(on({ mode: 'required' }, { user: 'floe_x509' }));
    expect(e.message).toMatch(/^source\.mysql: cannot connect to floe_x509@127\.0\.0\.1:\d+: server error ER_ACCESS_DENIED_ERROR \(1045\): Access denied for user 'floe_x509'@'127\.0\.0\.1'/);
    expect(e.message).toContain('a user created REQUIRE X509 also needs a client certificate: source.tls.cert and source.tls.key');
    for (const tls of [
      { mode: 'required', cert, key },
      { mode: 'verify-ca', ca: serverCa, cert: await readFile(cert, 'utf8'), key: await readFile(key, 'utf8') },
    ] as TlsSettings[]) {
      await withClient(on(tls, { user: 'floe_x509' }), async (c) => {
        expect(await c.query('SELECT CURRENT_USER() AS u')).toEqual([{ u: 'floe_x509@%' }]);
        expect(c.encrypted).toBe(true);
      });
    }
  });

  it('a private key given as PEM text appears in no error and no log line', async () => {
    const cert = join(server.dataDir!, 'client-cert.pem');
    const clientKey = await readFile(join(server.dataDir!, 'client-key.pem'), 'utf8');
    const strangerKey = await readFile(otherCa.key, 'utf8');
    const cases: [TlsSettings, RegExp][] = [
      // a key that is not the certificate's
      [{ mode: 'required', cert, key: strangerKey }, /source\.tls\.cert and source\.tls\.key: expected a certificate and its own private key, found a pair that does not match/],
      // the right key, and a connection that fails after it was read (the certificate check)
      [{ mode: 'verify-ca', ca: otherCa.cert, cert, key: clientKey }, /SELF_SIGNED_CERT_IN_CHAIN/],
      // a key Node cannot read: its base64 cut in the middle
      [{ mode: 'required', cert, key: clientKey.slice(0, 400) + '\n-----END PRIVATE KEY-----\n' }, /source\.tls\.key: expected an unencrypted private key, found PEM that Node cannot use/],
    ];
    for (const [tls, expected] of cases) {
      const e = await failure(on(tls, { user: 'floe_x509' }));
      expect(e.message).toMatch(expected);
      const text = everyText(e);
      for (const line of pemBody(tls.key!)) expect(text).not.toContain(line);
    }
  });

  it('with a certificate of its own CA naming 127.0.0.1 and localhost, verify-identity connects by either name; the generated CA no longer verifies it', async () => {
    const cert = await makeServerCertificate(dir, otherCa, 'floe test server', ['IP:127.0.0.1', 'DNS:localhost']);
    await server.restart!(['--require-secure-transport=ON', `--ssl-ca=${otherCa.cert}`, `--ssl-cert=${cert.cert}`, `--ssl-key=${cert.key}`]);
    for (const host of ['127.0.0.1', 'localhost']) {
      await withClient(on({ mode: 'verify-identity', ca: otherCa.cert }, { host }), async (c) => {
        expect(c.encrypted).toBe(true);
        expect((await readSessionTls(c))?.version).toMatch(/^TLSv1\.[23]$/);
      });
    }
    const e = await failure(on({ mode: 'verify-ca', ca: serverCa }));
    expect(e.message).toContain(`the server's certificate "CN=floe test server" (issued by "CN=Another Test CA") does not verify against source.tls.ca: SELF_SIGNED_CERT_IN_CHAIN`);
  });

  it('without TLS on the server: preferred goes plain, required and verify-ca fail saying what to set', async () => {
    await server.restart!(['--tls-version=']);
    await withClient(on({ mode: 'preferred' }), async (c) => {
      expect(c.encrypted).toBe(false);
      expect(await readSessionTls(c)).toBeUndefined();
    });
    for (const mode of ['required', 'verify-ca'] as const) {
      const e = await failure(on({ mode, ...(mode === 'verify-ca' ? { ca: serverCa } : {}) }));
      expect(e.message).toBe(
        `source.mysql: cannot connect to root@127.0.0.1:${server.port}: the server does not offer TLS, which source.tls.mode ${mode} requires; ` +
          'enable TLS on the server (ssl_cert and ssl_key; MySQL 8 generates a certificate by default), or set source.tls.mode: preferred to connect unencrypted to a server without TLS',
      );
    }
  });
});

describe('source.tls on a server that offers TLS without requiring it (the shared server)', () => {
  const shared = (tls: TlsSettings, extra: Partial<MysqlConnectionConfig> = {}): MysqlConnectionConfig => ({ ...sharedMysqlConfig(), tls, ...extra });

  it('caching_sha2_password with a password: without TLS through the server RSA key, and over TLS; a wrong password is refused without being printed', async () => {
    const user = `floe_sha2_${process.pid}`;
    const password = 'sha2-Secret-7719';
    await admin(sharedMysqlConfig(), [`DROP USER IF EXISTS '${user}'@'%'`, `CREATE USER '${user}'@'%' IDENTIFIED WITH caching_sha2_password BY '${password}'`], false);
    try {
      for (const mode of ['disabled', 'required'] as const) {
        // an empty cache: the login takes the full authentication (RSA without TLS, the password in clear over TLS)
        await admin(sharedMysqlConfig(), ['FLUSH PRIVILEGES'], false);
        await withClient(shared({ mode }, { user, password }), async (c) => {
          expect(c.encrypted).toBe(mode === 'required');
          expect(await c.query('SELECT CURRENT_USER() AS u')).toEqual([{ u: `${user}@%` }]);
        });
      }
      const [[plugin]] = (await admin(sharedMysqlConfig(), [`SELECT plugin FROM mysql.user WHERE user = '${user}'`], false)) as [{ plugin: string }[]];
      expect(plugin).toEqual({ plugin: 'caching_sha2_password' });
      const e = await failure(shared({ mode: 'required' }, { user, password: 'not-the-password-4242' }));
      expect(e.message).toContain(`server error ER_ACCESS_DENIED_ERROR (1045): Access denied for user '${user}'@`);
      expect(e.message).toContain('check source.user and source.password');
      expect(everyText(e)).not.toContain('not-the-password-4242');
    } finally {
      await admin(sharedMysqlConfig(), [`DROP USER IF EXISTS '${user}'@'%'`], false);
    }
  });

  it("the binlog connection goes the way its control session went: the server's Ssl_cipher of floe's Binlog Dump thread, in a worker thread and on the main thread", async () => {
    const db = await createTestDatabase('tls_binlog');
    await admin(sharedMysqlConfig(), [`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY)`], false);
    const tables = [{ database: db, table: 't' }];
    let id = 0;
    for (const [mode, thread, encrypted] of [
      ['preferred', 'worker', true],
      ['required', 'main', true],
      ['disabled', 'worker', false],
    ] as const) {
      const connection = shared({ mode });
      const reader = new BinlogReader({ connection, serverId: replicaId(), start: { kind: 'latest' }, tables, decoding: await decodingFor(tables, connection), thread, heartbeatMs: 500, progressIntervalMs: 0 });
      const events = reader[Symbol.asyncIterator]();
      try {
        // rows until one arrives (the reader starts at the binlog's end as it is when it connects): the dump connection is up
        let arrived = false;
        const writer = (async () => {
          while (!arrived) {
            await admin(sharedMysqlConfig(), [`INSERT INTO \`${db}\`.t VALUES (${++id})`], false);
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        for (let r = await events.next(); !r.done && r.value.kind !== 'transaction'; r = await events.next());
        arrived = true;
        await writer;
        // a worker announces its dump thread's id by message, after the session is up
        while (reader.dumpThreadId === undefined) await new Promise((r) => setTimeout(r, 20));
        // the server's view of this reader's dump thread (other test files may stream from this server too)
        const [dumps] = (await admin(
          sharedMysqlConfig(),
          [
            "SELECT t.PROCESSLIST_COMMAND AS command, s.VARIABLE_VALUE AS cipher FROM performance_schema.threads t JOIN performance_schema.status_by_thread s ON s.THREAD_ID = t.THREAD_ID AND s.VARIABLE_NAME = 'Ssl_cipher' " +
              `WHERE t.PROCESSLIST_ID = ${reader.dumpThreadId}`,
          ],
          false,
        )) as [{ command: string; cipher: string }[]];
        expect(dumps[0]?.command, `${mode} in the ${thread} thread`).toMatch(/^Binlog Dump/);
        expect(dumps, `${mode} in the ${thread} thread`).toHaveLength(1);
        if (encrypted) expect(dumps[0]!.cipher, `${mode} in the ${thread} thread`).toMatch(/^[A-Z0-9_-]+$/);
        else expect(dumps[0]!.cipher, `${mode} in the ${thread} thread`).toBe('');
      } finally {
        await events.return?.();
        await reader.close();
      }
    }
  });
});

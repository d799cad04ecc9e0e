/**
 * Why a session could not be opened, in one line: where, what failed (the server's own error
 * number and text, or the socket's code), and what to change. A session that never opened ran no
 * statement, so none is named. When a verifying TLS connection fails, the server's certificate is
 * looked at (tls-probe.ts) to say which certificate, why (Node's code), and which setting changes it.
 */
import { FloeError, errorMessage, isFloeError } from '../../util/errors.js';
import { probeServerTls, type TlsProbeReport } from './tls/tls-probe.js';
import { DEFAULT_TLS, loadTlsMaterial, type TlsSettings } from './tls/tls-settings.js';

const SUBSYSTEM = 'source.mysql';

/** Where the session was to go (client.ts `MysqlConnectionConfig` without the password). */
interface ConnectTarget {
  readonly host: string;
  readonly port: number;
  readonly user: string;
  readonly connectTimeoutMs?: number;
  readonly tls?: TlsSettings;
}

interface DriverError {
  code?: string;
  errno?: number;
  sqlMessage?: string;
}

/** The server may come back (restarted, failed over, the network healed): a restart of the pipeline may find it. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED', 'ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST', 'ER_SERVER_SHUTDOWN', 'ER_CONNECTION_KILLED', 'ER_CON_COUNT_ERROR',
]);

const ER_ACCESS_DENIED_ERROR = 1045;
const ER_HOST_IS_BLOCKED = 1129;
const ER_SECURE_TRANSPORT_REQUIRED = 3159;

/** What to change for a server error the connection ended with (empty: the server's text says it). */
function serverErrorAdvice(errno: number | undefined, tls: TlsSettings): string {
  switch (errno) {
    case ER_ACCESS_DENIED_ERROR:
      return tls.cert === undefined
        ? '; check source.user and source.password (a user created REQUIRE X509 also needs a client certificate: source.tls.cert and source.tls.key)'
        : '; check source.user, source.password and the client certificate source.tls.cert';
    case ER_SECURE_TRANSPORT_REQUIRED:
      return '; the server accepts only encrypted connections: set source.tls.mode: required (or verify-ca / verify-identity with source.tls.ca, which also check its certificate)';
    case ER_HOST_IS_BLOCKED:
      return '; run FLUSH HOSTS on the server (it blocks a host after max_connect_errors interrupted connections)';
    default:
      return '';
  }
}

function socketFailure(code: string, config: ConnectTarget): string | undefined {
  switch (code) {
    case 'ECONNREFUSED':
      return `connection refused (ECONNREFUSED): no server listens there; check source.host and source.port, and that the server runs`;
    case 'ETIMEDOUT':
      return `no answer within ${(config.connectTimeoutMs ?? 10_000) / 1000} s (ETIMEDOUT); check source.host and source.port, and the network and firewalls between floe and the server`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `the host name ${config.host} does not resolve (${code}); check source.host`;
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `no route to ${config.host} (${code}); check source.host and the network`;
    default:
      return undefined;
  }
}

/** The certificate a message names: its subject, and its issuer when someone else issued it. */
function certificateText(report: TlsProbeReport): string {
  const leaf = report.chain[0];
  if (!leaf) return 'certificate';
  return leaf.issuer === leaf.subject ? `certificate "${leaf.subject}" (self-signed)` : `certificate "${leaf.subject}" (issued by "${leaf.issuer}")`;
}

/** Why a verifying TLS handshake failed, with the setting that changes it; undefined when the probe cannot tell. */
async function certificateFailure(config: ConnectTarget, tls: TlsSettings, cause: unknown): Promise<string | undefined> {
  if (tls.mode !== 'verify-ca' && tls.mode !== 'verify-identity') return undefined;
  const { ca } = await loadTlsMaterial(tls);
  const report = await probeServerTls({ host: config.host, port: config.port, timeoutMs: config.connectTimeoutMs ?? 10_000, ...(ca !== undefined ? { ca } : {}) });
  const against = ca !== undefined ? 'source.tls.ca' : "Node's public CA store (source.tls.ca is not set)";
  if (report.chainError !== undefined) {
    return (
      `the server's ${certificateText(report)} does not verify against ${against}: ${report.chainError} (${errorMessage(cause)}); ` +
      "set source.tls.ca to the certificate of the CA that issued it (for MySQL's auto-generated certificates: ca.pem in the server's data directory), " +
      'or source.tls.mode: required to encrypt without checking the certificate'
    );
  }
  if (tls.mode === 'verify-identity' && report.identityError) {
    const names = report.chain[0]?.altNames ?? `no alternative names; subject ${report.chain[0]?.subject ?? '?'}`;
    return (
      `the server's ${certificateText(report)} is not for ${config.host}: ${report.identityError.code} (${report.identityError.reason}); ` +
      `set source.host to a name the certificate holds (${names}), or source.tls.mode: verify-ca to check only that it chains to source.tls.ca`
    );
  }
  return undefined;
}

/** The failure to open a session, as one FloeError (`retryable` when the server may be back later). */
export async function connectError(config: ConnectTarget, cause: unknown): Promise<FloeError> {
  // an unusable source.tls file is already said in full (a config error)
  if (isFloeError(cause, 'config')) return cause;
  const tls = config.tls ?? DEFAULT_TLS;
  const d = (cause ?? {}) as DriverError;
  const code = d.code;
  let what: string;
  if (d.errno !== undefined && d.sqlMessage !== undefined) {
    const advice = serverErrorAdvice(d.errno, tls);
    what = `server error ${code ?? 'ER_?'} (${d.errno}): ${advice ? d.sqlMessage.replace(/\.$/, '') : d.sqlMessage}${advice}`;
  } else if (code === 'HANDSHAKE_NO_SSL_SUPPORT') {
    what =
      `the server does not offer TLS, which source.tls.mode ${tls.mode} requires; enable TLS on the server (ssl_cert and ssl_key; MySQL 8 generates a certificate by default), ` +
      'or set source.tls.mode: preferred to connect unencrypted to a server without TLS';
  } else if (code === 'HANDSHAKE_SSL_ERROR') {
    what = (await certificateFailure(config, tls, cause).catch(() => undefined)) ?? `the TLS handshake failed (${errorMessage(cause)}) with source.tls.mode ${tls.mode}`;
  } else {
    what = (code !== undefined ? socketFailure(code, config) : undefined) ?? `${errorMessage(cause)}${code !== undefined ? ` (${code})` : ''}`;
  }
  return new FloeError(SUBSYSTEM, 'source', `cannot connect to ${config.user}@${config.host}:${config.port}: ${what}`, {
    retryable: code !== undefined && TRANSIENT_CODES.has(code),
    cause,
    ...(code !== undefined ? { context: { code } } : {}),
  });
}

/**
 * A look at the server's TLS certificate, for saying why a verifying connection failed: mysql2
 * reports a failed check as HANDSHAKE_SSL_ERROR, replacing Node's code (SELF_SIGNED_CERT_IN_CHAIN,
 * ERR_TLS_CERT_ALTNAME_INVALID, …) and dropping the certificate. The probe opens its own TCP
 * connection and goes as far as the TLS handshake, the way a MySQL client starts TLS (MySQL
 * client/server protocol, "Protocol::HandshakeV10" and "Protocol::SSLRequest"): read the server's
 * greeting, answer with an SSLRequest, hand the socket to Node's TLS without rejecting anything,
 * then check the chain and the name itself. It never authenticates: no user or password is sent.
 */
import { X509Certificate } from 'node:crypto';
import { connect as tcpConnect, isIP, type Socket } from 'node:net';
import { checkServerIdentity, connect as tlsConnect, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';

/** A certificate as messages name it. */
interface CertificateName {
  /** e.g. `CN=MySQL_Server_8.0.31_Auto_Generated_Server_Certificate` */
  readonly subject: string;
  readonly issuer: string;
  /** The subject alternative names (`DNS:db.example.com, IP Address:10.0.0.5`), when it has any. */
  readonly altNames?: string;
}

export interface TlsProbeReport {
  /** Whether the server's greeting offers TLS (the CLIENT_SSL capability). */
  readonly offered: boolean;
  /** The server's certificate chain as it sent it, leaf first. */
  readonly chain: readonly CertificateName[];
  /** Node's code when the chain does not verify against the CAs given (e.g. SELF_SIGNED_CERT_IN_CHAIN). */
  readonly chainError?: string;
  /** When the leaf does not name the host: Node's code (ERR_TLS_CERT_ALTNAME_INVALID) and its reason. */
  readonly identityError?: { readonly code: string; readonly reason: string };
  /** The handshake itself failed (no certificate to look at). */
  readonly failure?: string;
}

export interface TlsProbeTarget {
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;
  /** The CA certificates to verify against (PEM); undefined: Node's public CA store. */
  readonly ca?: string;
}

const CLIENT_LONG_PASSWORD = 0x1;
const CLIENT_PROTOCOL_41 = 0x200;
const CLIENT_SSL = 0x800;
const CLIENT_SECURE_CONNECTION = 0x8000;
const UTF8MB4_GENERAL_CI = 45;

/** The first packet of the connection: its payload (3-byte length, 1-byte sequence id, payload). */
function readGreeting(socket: Socket): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (d: Buffer): void => {
      buffered = Buffer.concat([buffered, d]);
      if (buffered.length < 4) return;
      const length = buffered.readUIntLE(0, 3);
      if (buffered.length < 4 + length) return;
      socket.off('data', onData);
      resolve(buffered.subarray(4, 4 + length));
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error('the server closed the connection before its greeting')));
  });
}

/** The capability flags of a HandshakeV10 greeting (their lower two bytes, where CLIENT_SSL is). */
function greetingCapabilities(payload: Buffer): number {
  if (payload[0] === 0xff) throw new Error(`the server refused the connection: ${payload.subarray(3).toString('utf8').replace(/^#\w{5}/, '')}`);
  if (payload[0] !== 10) throw new Error(`expected a MySQL protocol 10 greeting, found protocol ${payload[0]}`);
  const versionEnd = payload.indexOf(0, 1);
  // version NUL, connection id (4), auth-plugin-data part 1 (8), filler (1), capabilities (2)
  return payload.readUInt16LE(versionEnd + 1 + 4 + 8 + 1);
}

/** An SSLRequest packet (sequence id 1): capabilities, max packet size, character set, 23 zero bytes. */
function sslRequest(): Buffer {
  const payload = Buffer.alloc(32);
  payload.writeUInt32LE(CLIENT_LONG_PASSWORD | CLIENT_PROTOCOL_41 | CLIENT_SSL | CLIENT_SECURE_CONNECTION, 0);
  payload.writeUInt32LE(0x1000000, 4);
  payload[8] = UTF8MB4_GENERAL_CI;
  const header = Buffer.from([32, 0, 0, 1]);
  return Buffer.concat([header, payload]);
}

function certificateName(cert: DetailedPeerCertificate): CertificateName {
  const x509 = new X509Certificate(cert.raw);
  const oneLine = (dn: string): string => dn.split('\n').filter(Boolean).join(', ');
  return { subject: oneLine(x509.subject), issuer: oneLine(x509.issuer), ...(x509.subjectAltName ? { altNames: x509.subjectAltName } : {}) };
}

/** The chain as the server sent it, leaf first (a self-signed root is its own issuer: stop there). */
function peerChain(socket: TLSSocket): { leaf?: DetailedPeerCertificate; chain: CertificateName[] } {
  const leaf = socket.getPeerCertificate(true);
  if (!leaf || !leaf.raw) return { chain: [] };
  const chain: CertificateName[] = [];
  const seen = new Set<string>();
  for (let c: DetailedPeerCertificate | undefined = leaf; c?.raw && !seen.has(c.fingerprint256); c = c.issuerCertificate) {
    seen.add(c.fingerprint256);
    chain.push(certificateName(c));
  }
  return { leaf, chain };
}

/** Connects, starts TLS as a MySQL client does, and reports what the server's certificate is and why it does not verify. */
export async function probeServerTls(target: TlsProbeTarget): Promise<TlsProbeReport> {
  const socket = tcpConnect({ host: target.host, port: target.port });
  socket.setTimeout(target.timeoutMs, () => socket.destroy(new Error(`no answer within ${target.timeoutMs} ms`)));
  let offered = false;
  try {
    const capabilities = greetingCapabilities(await readGreeting(socket));
    if ((capabilities & CLIENT_SSL) === 0) return { offered: false, chain: [] };
    offered = true;
    socket.write(sslRequest());
    const secure = tlsConnect({
      socket,
      ...(target.ca !== undefined ? { ca: target.ca } : {}),
      // the probe looks, it does not decide: the chain and the name are checked below
      rejectUnauthorized: false,
      checkServerIdentity: () => undefined,
      ...(isIP(target.host) ? {} : { servername: target.host }),
    });
    await new Promise<void>((resolve, reject) => {
      secure.once('secureConnect', resolve);
      secure.once('error', reject);
    });
    try {
      const { leaf, chain } = peerChain(secure);
      const chainError = secure.authorized ? undefined : String(secure.authorizationError ?? 'UNKNOWN');
      const identity = leaf ? checkServerIdentity(target.host, leaf) : undefined;
      return {
        offered: true,
        chain,
        ...(chainError !== undefined ? { chainError } : {}),
        ...(identity ? { identityError: { code: (identity as NodeJS.ErrnoException).code ?? 'ERR_TLS_CERT_ALTNAME_INVALID', reason: identity.message } } : {}),
      };
    } finally {
      secure.destroy();
    }
  } catch (e) {
    return { offered, chain: [], failure: e instanceof Error ? e.message : String(e) };
  } finally {
    socket.destroy();
  }
}

/**
 * Certificates of the tests' own, made with the machine's `openssl` (Node's crypto signs, but makes
 * no X.509 certificate): a CA of another name than the one a MySQL server generated (the "wrong CA"),
 * and a server certificate that CA signs with the names a test connects by (for verify-identity
 * against a server started with --ssl-ca / --ssl-cert / --ssl-key).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const openssl = (args: string[]) => promisify(execFile)('openssl', args);

export interface CertificateFiles {
  /** PEM certificate */
  readonly cert: string;
  /** PEM private key (unencrypted) */
  readonly key: string;
}

/** A self-signed CA certificate and its key in `dir`. */
export async function makeCertificateAuthority(dir: string, commonName: string): Promise<CertificateFiles> {
  const cert = join(dir, `${commonName.replace(/\W/g, '_')}-ca.pem`);
  const key = join(dir, `${commonName.replace(/\W/g, '_')}-ca-key.pem`);
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '30', '-subj', `/CN=${commonName}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  return { cert, key };
}

/** A server certificate signed by `ca`, for the given subject alternative names (e.g. `IP:127.0.0.1`, `DNS:localhost`). */
export async function makeServerCertificate(dir: string, ca: CertificateFiles, commonName: string, altNames: readonly string[]): Promise<CertificateFiles> {
  const base = join(dir, commonName.replace(/\W/g, '_'));
  const key = `${base}-key.pem`;
  const request = `${base}.csr`;
  const cert = `${base}-cert.pem`;
  const extensions = `${base}.ext`;
  await openssl(['req', '-new', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', request, '-subj', `/CN=${commonName}`]);
  await writeFile(extensions, `subjectAltName=${altNames.join(',')}\nextendedKeyUsage=serverAuth\n`);
  await openssl(['x509', '-req', '-in', request, '-CA', ca.cert, '-CAkey', ca.key, '-CAcreateserial', '-out', cert, '-days', '30', '-extfile', extensions]);
  return { cert, key };
}

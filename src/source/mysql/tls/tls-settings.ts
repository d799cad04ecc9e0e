/**
 * TLS to the source (`source.tls`): the modes, named and meant as the MySQL client's `--ssl-mode`
 * (MySQL 8.0 reference manual, 6.3.1 "Configuring MySQL to Use Encrypted Connections", client-side
 * options), the certificates and key they use, and mysql2's `ssl` option for each.
 *
 * | mode              | transport                          | server certificate checked            |
 * |-------------------|------------------------------------|---------------------------------------|
 * | `disabled`        | plain                              | —                                     |
 * | `preferred`       | TLS when the server offers it      | never (as the MySQL client's)         |
 * | `required`        | TLS                                | no                                    |
 * | `verify-ca`       | TLS                                | chains to `ca`                        |
 * | `verify-identity` | TLS                                | chains to `ca` (or the public CAs) and names the host |
 *
 * `ca`, `cert` and `key` are each a file path or the PEM text itself (isPemText). Files are read at
 * every connection, so certificates renewed on disk are used by the next connection without a restart.
 */
import { readFile } from 'node:fs/promises';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createSecureContext } from 'node:tls';
import { FloeError, errorMessage } from '../../../util/errors.js';
import { isPemText } from '../../../util/pem.js';

export type TlsMode = 'disabled' | 'preferred' | 'required' | 'verify-ca' | 'verify-identity';

/** `source.tls` as configured: each of `ca`, `cert`, `key` a file path or PEM text. */
export interface TlsSettings {
  readonly mode: TlsMode;
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

/** How one connection goes over the wire. */
export type Transport = 'tls' | 'plain';

/** The mode when `source.tls` is not given (the config's default, and the MySQL client's). */
export const DEFAULT_TLS: TlsSettings = { mode: 'preferred' };

/**
 * The transports a connection tries, in order. `preferred` falls back to plain only when the server
 * does not offer TLS (mysql2's HANDSHAKE_NO_SSL_SUPPORT), never after a TLS failure: a server that
 * offers TLS and then fails the handshake is a failure to report, not a reason to go unencrypted.
 */
export function transportsToTry(mode: TlsMode): readonly Transport[] {
  if (mode === 'disabled') return ['plain'];
  if (mode === 'preferred') return ['tls', 'plain'];
  return ['tls'];
}

/** The PEM texts of a settings' files, read and checked. */
export interface TlsMaterial {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
}

const SUBSYSTEM = 'source.mysql';

function materialError(message: string, cause?: unknown): FloeError {
  return new FloeError(SUBSYSTEM, 'config', message, cause === undefined ? {} : { cause });
}

/** A setting's PEM text: the value itself, or the file it names. Never quotes the text (a key's). */
async function pemText(name: 'ca' | 'cert' | 'key', value: string): Promise<string> {
  if (isPemText(value)) return value;
  try {
    return await readFile(value, 'utf8');
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? errorMessage(e);
    throw materialError(`cannot read source.tls.${name} from the file ${value} (${code}): expected a readable PEM file, or the PEM text itself`, e);
  }
}

/**
 * Reads `ca`, `cert` and `key` and checks that Node can use them, so that a wrong file is named here
 * and not reported as a failed handshake. OpenSSL's messages name what is wrong, never the bytes.
 */
export async function loadTlsMaterial(settings: TlsSettings): Promise<TlsMaterial> {
  const ca = settings.ca === undefined ? undefined : await pemText('ca', settings.ca);
  const cert = settings.cert === undefined ? undefined : await pemText('cert', settings.cert);
  const key = settings.key === undefined ? undefined : await pemText('key', settings.key);
  const check = (name: string, what: string, use: () => unknown): void => {
    try {
      use();
    } catch (e) {
      throw materialError(`source.tls.${name}: expected ${what}, found PEM that Node cannot use (${errorMessage(e)})`, e);
    }
  };
  if (ca !== undefined) check('ca', 'a CA certificate', () => new X509Certificate(ca));
  if (cert !== undefined) check('cert', 'a client certificate', () => new X509Certificate(cert));
  if (key !== undefined) check('key', 'an unencrypted private key', () => createPrivateKey(key));
  if (cert !== undefined && key !== undefined) {
    try {
      createSecureContext({ cert, key });
    } catch (e) {
      throw materialError(`source.tls.cert and source.tls.key: expected a certificate and its own private key, found a pair that does not match (${errorMessage(e)})`, e);
    }
  }
  return { ca, cert, key };
}

/**
 * mysql2's `ssl` option for a connection of `settings` over `transport` (undefined: plain). Plain
 * data only (no functions): it crosses to the binlog worker thread with the rest of the options.
 * mysql2 (lib/base/connection.js `startTLS`) checks the chain when `rejectUnauthorized` and, with
 * `verifyIdentity`, the name: Node's `checkServerIdentity` against the host name, or against the
 * IP address for a numeric host.
 */
export async function driverSsl(settings: TlsSettings, transport: Transport): Promise<Record<string, unknown> | undefined> {
  if (transport === 'plain') return undefined;
  const material = await loadTlsMaterial(settings);
  const verify = settings.mode === 'verify-ca' || settings.mode === 'verify-identity';
  return {
    ...(material.ca !== undefined ? { ca: material.ca } : {}),
    ...(material.cert !== undefined ? { cert: material.cert, key: material.key } : {}),
    rejectUnauthorized: verify,
    verifyIdentity: settings.mode === 'verify-identity',
  };
}

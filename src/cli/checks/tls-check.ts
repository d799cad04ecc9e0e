/**
 * The `source.tls` line of `floe check`: whether the session floe opened is encrypted (the protocol
 * and cipher the server reports for it), what `source.tls.mode` checked of the server's
 * certificate, and what to set when the answer is "not encrypted" or "not checked".
 */
import type { SessionTls, TlsSettings } from '../../source/mysql/index.js';
import type { CheckLine } from './check-line.js';

export function tlsCheckLine(tls: TlsSettings, host: string, session: SessionTls | undefined): CheckLine {
  const check = 'source.tls';
  if (!session) {
    return tls.mode === 'disabled'
      ? { check, ok: false, severity: 'warning', message: 'not encrypted (source.tls.mode: disabled): the password and the rows cross the network readable; set source.tls.mode: required (or verify-identity) unless the network is trusted' }
      : { check, ok: false, severity: 'warning', message: `not encrypted: the server does not offer TLS, and source.tls.mode ${tls.mode} went on without it; enable TLS on the server and set source.tls.mode: required, so that floe never connects unencrypted` };
  }
  const encrypted = `encrypted (${session.version}, ${session.cipher})`;
  const ca = tls.ca !== undefined ? 'source.tls.ca' : 'a public CA';
  switch (tls.mode) {
    case 'verify-identity':
      return { check, ok: true, severity: 'info', message: `${encrypted}; the server certificate chains to ${ca} and names ${host}` };
    case 'verify-ca':
      return { check, ok: true, severity: 'info', message: `${encrypted}; the server certificate chains to source.tls.ca (its name is not checked: mode verify-identity also checks it)` };
    default:
      return { check, ok: true, severity: 'info', message: `${encrypted}; the server certificate is not checked (mode ${tls.mode}): set source.tls.mode: verify-identity (or verify-ca) and source.tls.ca to know it is your server` };
  }
}

/**
 * What a session's TLS is, as the server sees it: the protocol version and cipher of its
 * `Ssl_version` / `Ssl_cipher` session status variables (empty for a plain session; MySQL and
 * MariaDB alike). `floe check` reports them.
 */
import type { MysqlClient } from '../client.js';

export interface SessionTls {
  /** e.g. `TLSv1.3` */
  readonly version: string;
  /** e.g. `TLS_AES_256_GCM_SHA384` */
  readonly cipher: string;
}

/** The session's TLS protocol and cipher; undefined for a session that is not encrypted. */
export async function readSessionTls(client: MysqlClient): Promise<SessionTls | undefined> {
  const rows = await client.query<{ Variable_name: string; Value: unknown }>("SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')");
  const value = (name: string): string => String(rows.find((r) => r.Variable_name === name)?.Value ?? '');
  const version = value('Ssl_version');
  const cipher = value('Ssl_cipher');
  return version === '' && cipher === '' ? undefined : { version, cipher };
}

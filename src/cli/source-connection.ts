/**
 * The MySQL connection settings of a configured source: `url` (mysql://user:password@host:port, with
 * `?ssl=true` for TLS) wins over host/port/user/password.
 */
import type { SourceConfig } from '../config/schema.js';
import type { MysqlConnectionConfig } from '../source/mysql/client.js';
import { FloeError } from '../util/errors.js';

export function sourceConnection(source: SourceConfig): MysqlConnectionConfig {
  if (!source.url) return { host: source.host, port: source.port, user: source.user, password: source.password };
  let u: URL;
  try {
    u = new URL(source.url);
  } catch {
    throw new FloeError('config', 'config', 'source.url: expected mysql://user:password@host:port, found a string that is not a URL');
  }
  if (u.protocol !== 'mysql:' && u.protocol !== 'mariadb:') {
    throw new FloeError('config', 'config', `source.url: expected the mysql:// scheme, found ${u.protocol}//`);
  }
  const ssl = u.searchParams.get('ssl');
  return {
    host: u.hostname || source.host,
    port: u.port ? Number(u.port) : source.port,
    user: u.username ? decodeURIComponent(u.username) : source.user,
    password: u.password ? decodeURIComponent(u.password) : source.password,
    ...(ssl === 'true' || ssl === '1' ? { ssl: true } : {}),
  };
}

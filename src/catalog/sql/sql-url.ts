/**
 * The SQL catalog's connection URL (config `catalog.url`) → a driver:
 *
 *   postgresql://user:pass@host:5432/db?currentSchema=lake    (also postgres://, jdbc:postgresql://)
 *   mysql://user:pass@host:3306/db                            (also mariadb://, jdbc:mysql://, jdbc:mariadb://)
 *   sqlite:/abs/path/catalog.db  sqlite:///abs/path  sqlite:relative/catalog.db  sqlite::memory:
 *
 * The `jdbc:` forms are accepted so that one URL can be pasted into floe, Trino and Spark configs.
 * Credentials in the URL are percent-decoded; `user` / `password` query parameters (JDBC style) work too.
 */
import path from 'node:path';
import { FloeError } from '../../util/errors.js';
import { redactUrlCredentials } from '../../util/redact.js';
import { MysqlDriver } from './mysql-driver.js';
import { PostgresDriver } from './postgres-driver.js';
import type { SqlDriver } from './sql-driver.js';
import { SqliteDriver } from './sqlite-driver.js';

const SUBSYSTEM = 'catalog.sql';

export interface SqlUrlOptions {
  /** Directory that relative SQLite paths resolve against. Default: the working directory. */
  baseDir?: string;
  /** Connections per pool (network databases). */
  maxConnections?: number;
}

/** The URL with any password replaced by `***`, for messages. */
export function redactSqlUrl(url: string): string {
  return redactUrlCredentials(url);
}

function refuse(url: string, why: string): never {
  throw new FloeError(SUBSYSTEM, 'config', `catalog url ${redactSqlUrl(url)}: ${why}; expected postgresql://user:pass@host:port/db, mysql://user:pass@host:port/db or sqlite:/path/to/catalog.db`);
}

function decode(part: string): string | undefined {
  return part === '' ? undefined : decodeURIComponent(part);
}

export function openSqlDriver(url: string, options: SqlUrlOptions = {}): SqlDriver {
  const text = url.trim().replace(/^jdbc:/i, '');
  const scheme = /^([a-z0-9+.-]+):/i.exec(text)?.[1]?.toLowerCase();
  if (scheme === 'sqlite') {
    let file = text.slice('sqlite:'.length);
    if (file.startsWith('//')) file = file.slice(2); // sqlite:///abs → /abs
    if (file === '') refuse(url, 'no database file given');
    if (file !== ':memory:') file = path.resolve(options.baseDir ?? process.cwd(), file);
    return new SqliteDriver({ file });
  }
  if (scheme === 'postgresql' || scheme === 'postgres' || scheme === 'mysql' || scheme === 'mariadb') {
    let parsed: URL;
    try {
      parsed = new URL(text);
    } catch {
      refuse(url, 'not a valid URL');
    }
    const user = decode(parsed.username) ?? parsed.searchParams.get('user') ?? undefined;
    const password = decode(parsed.password) ?? parsed.searchParams.get('password') ?? undefined;
    const database = decode(parsed.pathname.replace(/^\//, ''));
    const host = parsed.hostname || '127.0.0.1';
    if (scheme === 'postgresql' || scheme === 'postgres') {
      const schema = parsed.searchParams.get('currentSchema') ?? parsed.searchParams.get('schema') ?? undefined;
      return new PostgresDriver({ host, port: Number(parsed.port || 5432), user, password, database, schema, maxConnections: options.maxConnections });
    }
    if (database === undefined) refuse(url, 'no database name in the path (the catalog tables live in that database)');
    return new MysqlDriver({ host, port: Number(parsed.port || 3306), user, password, database, maxConnections: options.maxConnections });
  }
  refuse(url, scheme === undefined ? 'no scheme' : `unsupported scheme ${scheme}:`);
}

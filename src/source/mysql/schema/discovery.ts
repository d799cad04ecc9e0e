/**
 * Which tables floe captures: every BASE TABLE the user can see, outside the system schemas, whose
 * 'db.table' name matches an include pattern and no exclude pattern.
 *
 * Pattern forms (matched against the whole 'database.table' name, case-sensitively, as MySQL names are
 * on Linux):
 * - glob: `shop.orders`, `shop.*`, `*.audit_*`, `shop.order_?` — `*` matches any run of characters
 *   except '.', `?` one character except '.', everything else literally;
 * - regular expression: `/^shop\.(orders|items)$/` — between slashes, JavaScript syntax, an optional
 *   trailing `i` flag; anchored only if the pattern anchors itself.
 * An empty include list includes everything. Exclusions win over inclusions.
 *
 * Views, sequences and MariaDB system-versioned tables are not captured (only TABLE_TYPE 'BASE TABLE').
 */
import type { MysqlClient } from '../client.js';
import type { TableId } from './table-schema.js';
import { tableKey } from './table-schema.js';
import { FloeError } from '../../../util/errors.js';

const SYSTEM_SCHEMAS: ReadonlySet<string> = new Set(['mysql', 'information_schema', 'performance_schema', 'sys']);

export interface TableFilterConfig {
  include?: readonly string[];
  exclude?: readonly string[];
}

export type TableMatcher = (id: TableId) => boolean;

/** Compiles one pattern (glob or /regex/) into a predicate over 'db.table'. */
export function compilePattern(pattern: string): (name: string) => boolean {
  const re = /^\/(.*)\/(i?)$/s.exec(pattern);
  if (re) {
    try {
      const regex = new RegExp(re[1]!, re[2]);
      return (name) => regex.test(name);
    } catch (e) {
      throw new FloeError('source.mysql', 'config', `table pattern ${pattern} is not a valid regular expression: ${(e as Error).message}`);
    }
  }
  if (!pattern.includes('.')) {
    throw new FloeError('source.mysql', 'config', `table pattern ${JSON.stringify(pattern)} has no '.': expected 'database.table' (e.g. 'shop.*'), or a /regular expression/ over 'database.table'`);
  }
  let source = '^';
  for (const ch of pattern) {
    if (ch === '*') source += '[^.]*';
    else if (ch === '?') source += '[^.]';
    else source += ch.replace(/[\\^$.|+()[\]{}]/g, '\\$&');
  }
  const regex = new RegExp(source + '$');
  return (name) => regex.test(name);
}

export function tableMatcher(config: TableFilterConfig): TableMatcher {
  const include = (config.include ?? []).map(compilePattern);
  const exclude = (config.exclude ?? []).map(compilePattern);
  return (id) => {
    if (SYSTEM_SCHEMAS.has(id.database.toLowerCase())) return false;
    const name = tableKey(id);
    if (exclude.some((m) => m(name))) return false;
    return include.length === 0 || include.some((m) => m(name));
  };
}

/** Lists the captured tables, sorted by database then table name (code-unit order, not the server's collation). */
export async function discoverTables(client: MysqlClient, config: TableFilterConfig): Promise<TableId[]> {
  const matches = tableMatcher(config);
  const rows = await client.query<{ db: string; t: string }>(
    `SELECT TABLE_SCHEMA AS db, TABLE_NAME AS t FROM information_schema.TABLES
      WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys')`,
  );
  const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  return rows
    .map((r) => ({ database: String(r.db), table: String(r.t) }))
    .filter(matches)
    .sort((a, b) => cmp(a.database, b.database) || cmp(a.table, b.table));
}

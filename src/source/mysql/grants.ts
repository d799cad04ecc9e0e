/**
 * Reading `SHOW GRANTS` output: which global and per-database privileges the current user holds, so
 * pre-flight can say exactly which GRANT is missing. Lines look like
 *   GRANT SELECT, REPLICATION SLAVE ON *.* TO `floe`@`%` [IDENTIFIED BY PASSWORD '…']
 *   GRANT SELECT ON `shop`.* TO …        GRANT SELECT (`a`, `b`) ON `shop`.`t` TO …
 *   GRANT `reader` TO `floe`@`%`          (a role; its privileges are not expanded here)
 * Database names in grants are LIKE patterns when they contain unescaped `%` or `_` (`shop\_%`).
 * The raw lines may contain password hashes: they are parsed, never echoed.
 */

export interface GrantSet {
  /** Privileges granted ON *.* (upper case, e.g. 'SELECT', 'REPLICATION SLAVE', 'ALL PRIVILEGES'). */
  global: Set<string>;
  /** Database-level grants: LIKE pattern (as written, unquoted) → privileges. */
  databases: { pattern: string; privileges: Set<string> }[];
  /** Table-level grants (column-level ones count for their table): database → table → privileges. */
  tables: { database: string; table: string; privileges: Set<string> }[];
  /** Roles granted to the user (MySQL 8 / MariaDB), whose privileges SHOW GRANTS may not list. */
  roles: string[];
}

const IDENT = '`(?:[^`]|``)*`|\\*|[^\\s.`]+';
const GRANT_RE = new RegExp(`^GRANT\\s+(.+?)\\s+ON\\s+(?:(?:TABLE|FUNCTION|PROCEDURE|PACKAGE(?:\\s+BODY)?)\\s+)?(${IDENT})\\.(${IDENT})\\s+TO\\s`, 'is');
const ROLE_RE = /^GRANT\s+(.+?)\s+TO\s/is;

function unquote(part: string): string {
  return part.startsWith('`') ? part.slice(1, -1).replace(/``/g, '`') : part;
}

/** Splits 'SELECT (`a`, `b`), INSERT' at top-level commas and drops column lists. */
function privilegeList(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  let quoted = false;
  for (const ch of text) {
    if (ch === '`') quoted = !quoted;
    if (!quoted && ch === '(') depth++;
    if (!quoted && ch === ')') depth--;
    if (!quoted && depth === 0 && ch === ',') {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  return out.map((p) => p.replace(/\(.*\)/s, '').trim().toUpperCase().replace(/\s+/g, ' ')).filter((p) => p !== '');
}

export function parseGrants(lines: readonly string[]): GrantSet {
  const set: GrantSet = { global: new Set(), databases: [], tables: [], roles: [] };
  for (const line of lines) {
    const m = GRANT_RE.exec(line);
    if (m) {
      const privileges = new Set(privilegeList(m[1]!));
      const db = m[2]!;
      const table = m[3]!;
      if (db === '*' && table === '*') privileges.forEach((p) => set.global.add(p));
      else if (table === '*') set.databases.push({ pattern: unquote(db), privileges });
      else set.tables.push({ database: unquote(db), table: unquote(table), privileges });
      continue;
    }
    const r = ROLE_RE.exec(line);
    if (r && !/\sON\s/i.test(r[1]!)) set.roles.push(...r[1]!.split(',').map((s) => s.trim()).filter((s) => s !== ''));
  }
  return set;
}

/** Whether a grant's database pattern (MySQL LIKE syntax, `\_` and `\%` literal) covers a database. */
export function grantPatternMatches(pattern: string, database: string): boolean {
  let source = '^';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '\\' && i + 1 < pattern.length) {
      source += pattern[++i]!.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
    } else if (c === '%') source += '.*';
    else if (c === '_') source += '.';
    else source += c.replace(/[\\^$.|?*+()[\]{}]/g, '\\$&');
  }
  return new RegExp(source + '$', 's').test(database);
}

function has(privileges: Set<string>, wanted: readonly string[]): boolean {
  return privileges.has('ALL PRIVILEGES') || privileges.has('ALL') || wanted.some((w) => privileges.has(w));
}

/** Holds a global privilege (any of the names, e.g. REPLICATION CLIENT or its MariaDB name BINLOG MONITOR). */
export function hasGlobal(grants: GrantSet, ...names: string[]): boolean {
  return has(grants.global, names);
}

/** Holds SELECT on a whole database (globally or for the database). */
export function canSelectDatabase(grants: GrantSet, database: string): boolean {
  if (has(grants.global, ['SELECT'])) return true;
  return grants.databases.some((d) => grantPatternMatches(d.pattern, database) && has(d.privileges, ['SELECT']));
}

/** Holds LOCK TABLES for a database (a global or database privilege only, never a table one). */
export function canLockDatabase(grants: GrantSet, database: string): boolean {
  if (has(grants.global, ['LOCK TABLES'])) return true;
  return grants.databases.some((d) => grantPatternMatches(d.pattern, database) && has(d.privileges, ['LOCK TABLES']));
}

/** Holds SELECT on a table (globally, for its database, or for the table). */
export function canSelectTable(grants: GrantSet, database: string, table: string): boolean {
  if (canSelectDatabase(grants, database)) return true;
  return grants.tables.some((t) => t.database === database && t.table === table && has(t.privileges, ['SELECT']));
}

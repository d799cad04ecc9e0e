/**
 * Namespaces of the SQL catalog, with Java `JdbcCatalog`'s semantics so that engines sharing the
 * tables agree on what exists:
 *
 * - a namespace exists when it has property rows (created explicitly: the reserved `exists=true` row)
 *   or when a table lives in it or in a namespace below it; parents of a created namespace therefore
 *   exist implicitly, as in Java's listNamespaces;
 * - listing derives the children of a parent from every namespace string below it, in both tables;
 * - a drop removes the property rows, and is refused while tables or child namespaces remain;
 * - loading properties hides `exists` and adds `location` (`<warehouse>/<levels…>`) when unset.
 *
 * Levels are joined with `.` in the database, so a level containing `.` cannot be stored; it is
 * refused rather than silently turned into two levels.
 */
import { FloeError } from '../../util/errors.js';
import { checkNamespace, namespaceToString } from '../identifiers.js';
import type { SqlDriver, SqlExecutor } from './sql-driver.js';
import { descendantsPattern, NAMESPACE_EXISTS_PROPERTY, SQL } from './sql-statements.js';

const SUBSYSTEM = 'catalog.sql';

/** Namespace levels as stored (`a.b`), after checking that each level can be stored. */
export function storedNamespace(namespace: readonly string[]): string {
  checkNamespace(namespace);
  const dotted = namespace.find((level) => level.includes('.'));
  if (dotted !== undefined) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `namespace level ${JSON.stringify(dotted)} contains ".", which the JDBC catalog layout uses to join levels (table_namespace = "a.b"); rename it`);
  }
  return namespaceToString(namespace);
}

function levelsOf(stored: string): string[] {
  return stored === '' ? [] : stored.split('.');
}

function column(row: Record<string, unknown>, name: string): string {
  return String(row[name]);
}

export class SqlNamespaces {
  constructor(
    private readonly driver: SqlDriver,
    private readonly catalogName: string,
    private readonly warehouse: string,
  ) {}

  async exists(namespace: readonly string[], on: SqlExecutor = this.driver): Promise<boolean> {
    const stored = storedNamespace(namespace);
    const pattern = descendantsPattern(stored);
    if ((await on.execute(SQL.namespaceInTables, [this.catalogName, stored, pattern])).rows.length > 0) return true;
    return (await on.execute(SQL.namespaceInProperties, [this.catalogName, stored, pattern])).rows.length > 0;
  }

  async requireExists(namespace: readonly string[], on: SqlExecutor = this.driver): Promise<void> {
    if (!(await this.exists(namespace, on))) {
      throw new FloeError(SUBSYSTEM, 'not-found', `namespace ${namespaceToString(namespace)} does not exist in catalog ${this.catalogName}; create it first`);
    }
  }

  async create(namespace: readonly string[], properties: Record<string, string>): Promise<void> {
    const stored = storedNamespace(namespace);
    if (NAMESPACE_EXISTS_PROPERTY in properties) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `cannot set reserved namespace property ${NAMESPACE_EXISTS_PROPERTY}`);
    }
    try {
      await this.driver.transaction(async (tx) => {
        if (await this.exists(namespace, tx)) {
          throw new FloeError(SUBSYSTEM, 'already-exists', `namespace ${stored} already exists in catalog ${this.catalogName}`);
        }
        for (const [key, value] of Object.entries({ ...properties, [NAMESPACE_EXISTS_PROPERTY]: 'true' })) {
          await tx.execute(SQL.insertNamespaceProperty, [this.catalogName, stored, key, value]);
        }
      });
    } catch (e) {
      // Two creators at once: the primary key on (catalog, namespace, 'exists') picks one.
      if (this.driver.isUniqueViolation(e)) throw new FloeError(SUBSYSTEM, 'already-exists', `namespace ${stored} already exists in catalog ${this.catalogName} (created concurrently)`, { cause: e });
      throw e;
    }
  }

  /** Child namespaces of `parent` ([] = top level), sorted. */
  async list(parent: readonly string[]): Promise<string[][]> {
    const found: string[] = [];
    if (parent.length === 0) {
      for (const sql of [SQL.allTableNamespaces, SQL.allPropertyNamespaces]) {
        for (const row of (await this.driver.execute(sql, [this.catalogName])).rows) found.push(column(row, sql === SQL.allTableNamespaces ? 'table_namespace' : 'namespace'));
      }
    } else {
      await this.requireExists(parent);
      const pattern = descendantsPattern(storedNamespace(parent));
      for (const row of (await this.driver.execute(SQL.tableNamespacesUnder, [this.catalogName, pattern])).rows) found.push(column(row, 'table_namespace'));
      for (const row of (await this.driver.execute(SQL.propertyNamespacesUnder, [this.catalogName, pattern])).rows) found.push(column(row, 'namespace'));
    }
    const depth = parent.length + 1;
    const children = new Map<string, string[]>();
    for (const stored of found) {
      const levels = levelsOf(stored);
      if (levels.length < depth) continue;
      // Exact level comparison: LIKE cannot be fooled, but stay exact as Java does.
      if (!parent.every((level, i) => levels[i] === level)) continue;
      const child = levels.slice(0, depth);
      children.set(child.join('.'), child);
    }
    return [...children.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, levels]) => levels);
  }

  async load(namespace: readonly string[]): Promise<Record<string, string>> {
    const stored = storedNamespace(namespace);
    await this.requireExists(namespace);
    const properties = await this.storedProperties(stored);
    delete properties[NAMESPACE_EXISTS_PROPERTY];
    // Java JdbcCatalog.loadNamespaceMetadata: the default location when none is set.
    return { location: `${this.warehouse}/${namespace.join('/')}`, ...properties };
  }

  async update(namespace: readonly string[], removals: string[], updates: Record<string, string>): Promise<void> {
    const stored = storedNamespace(namespace);
    const overlap = removals.filter((k) => k in updates);
    if (overlap.length > 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `properties ${overlap.join(', ')} are both updated and removed; name each property once`);
    }
    if (NAMESPACE_EXISTS_PROPERTY in updates || removals.includes(NAMESPACE_EXISTS_PROPERTY)) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `cannot set or remove reserved namespace property ${NAMESPACE_EXISTS_PROPERTY}`);
    }
    await this.driver.transaction(async (tx) => {
      await this.requireExists(namespace, tx);
      const current = await this.storedProperties(stored, tx);
      for (const key of removals) await tx.execute(SQL.deleteNamespaceProperty, [this.catalogName, stored, key]);
      for (const [key, value] of Object.entries(updates)) {
        if (key in current) await tx.execute(SQL.updateNamespaceProperty, [value, this.catalogName, stored, key]);
        else await tx.execute(SQL.insertNamespaceProperty, [this.catalogName, stored, key, value]);
      }
      // An implicit namespace (tables only) that gets properties becomes explicit, as in Java.
      if (!(NAMESPACE_EXISTS_PROPERTY in current) && Object.keys(updates).length > 0) {
        await tx.execute(SQL.insertNamespaceProperty, [this.catalogName, stored, NAMESPACE_EXISTS_PROPERTY, 'true']);
      }
    });
  }

  async drop(namespace: readonly string[], tableNames: (namespace: readonly string[]) => Promise<string[]>): Promise<void> {
    const stored = storedNamespace(namespace);
    await this.requireExists(namespace);
    const children = await this.list(namespace);
    const tables = await tableNames(namespace);
    if (children.length > 0 || tables.length > 0) {
      const what = [...tables.map((t) => `table ${t}`), ...children.map((c) => `namespace ${c.join('.')}`)];
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `cannot drop namespace ${stored}: it is not empty (holds ${what.slice(0, 5).join(', ')}${what.length > 5 ? `, … ${what.length} in all` : ''}); drop those first`, { context: { reason: 'not-empty' } });
    }
    await this.driver.execute(SQL.deleteAllNamespaceProperties, [this.catalogName, stored]);
  }

  private async storedProperties(stored: string, on: SqlExecutor = this.driver): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const row of (await on.execute(SQL.namespaceProperties, [this.catalogName, stored])).rows) {
      out[column(row, 'property_key')] = row.property_value == null ? '' : column(row, 'property_value');
    }
    return out;
  }
}

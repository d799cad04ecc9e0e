/**
 * The SQL the catalog runs, as Java's `JdbcUtil` (schema version V1) writes it, so that floe, Java's
 * JdbcCatalog, Trino's and PyIceberg's SQL catalogs read and write the same rows the same way:
 *
 * - `iceberg_tables`: one row per table; `table_namespace` is the namespace levels joined by `.`
 *   (`JdbcUtil.namespaceToString`), `iceberg_type` is `TABLE` (NULL rows are tables too, from V0);
 * - `iceberg_namespace_properties`: one row per property; every created namespace has the reserved
 *   property `exists=true` (Java `JdbcCatalog.createNamespace`), and a namespace also exists
 *   implicitly when a table lives in it or below it;
 * - a commit is `UPDATE … SET metadata_location = new, previous_metadata_location = old WHERE … AND
 *   metadata_location = old`: exactly one updated row means the commit landed, zero means another
 *   writer moved the pointer first.
 */
export const TABLES_TABLE = 'iceberg_tables';
const NAMESPACE_PROPERTIES_TABLE = 'iceberg_namespace_properties';
export const RECORD_TYPE_COLUMN = 'iceberg_type';
const TABLE_RECORD_TYPE = 'TABLE';
/** Reserved property marking an explicitly created namespace; never returned to callers. */
export const NAMESPACE_EXISTS_PROPERTY = 'exists';

const IS_TABLE = `(${RECORD_TYPE_COLUMN} = '${TABLE_RECORD_TYPE}' OR ${RECORD_TYPE_COLUMN} IS NULL)`;

export const SQL = {
  getTable: `SELECT catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location FROM ${TABLES_TABLE} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND ${IS_TABLE}`,
  /** Any row of that name, table or view (a view blocks the name too). */
  getAnyEntry: `SELECT ${RECORD_TYPE_COLUMN} FROM ${TABLES_TABLE} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ?`,
  listTables: `SELECT table_namespace, table_name FROM ${TABLES_TABLE} WHERE catalog_name = ? AND table_namespace = ? AND ${IS_TABLE}`,
  createTable: `INSERT INTO ${TABLES_TABLE} (catalog_name, table_namespace, table_name, metadata_location, previous_metadata_location, ${RECORD_TYPE_COLUMN}) VALUES (?, ?, ?, ?, NULL, '${TABLE_RECORD_TYPE}')`,
  commitTable: `UPDATE ${TABLES_TABLE} SET metadata_location = ?, previous_metadata_location = ? WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND metadata_location = ? AND ${IS_TABLE}`,
  renameTable: `UPDATE ${TABLES_TABLE} SET table_namespace = ?, table_name = ? WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND ${IS_TABLE}`,
  dropTable: `DELETE FROM ${TABLES_TABLE} WHERE catalog_name = ? AND table_namespace = ? AND table_name = ? AND ${IS_TABLE}`,

  /** Tables in the namespace or below it (`LIKE 'ns.%' ESCAPE '!'`). */
  namespaceInTables: `SELECT table_namespace FROM ${TABLES_TABLE} WHERE catalog_name = ? AND (table_namespace = ? OR table_namespace LIKE ? ESCAPE '!') LIMIT 1`,
  namespaceInProperties: `SELECT namespace FROM ${NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ? AND (namespace = ? OR namespace LIKE ? ESCAPE '!') LIMIT 1`,
  allTableNamespaces: `SELECT DISTINCT table_namespace FROM ${TABLES_TABLE} WHERE catalog_name = ?`,
  allPropertyNamespaces: `SELECT DISTINCT namespace FROM ${NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ?`,
  tableNamespacesUnder: `SELECT DISTINCT table_namespace FROM ${TABLES_TABLE} WHERE catalog_name = ? AND table_namespace LIKE ? ESCAPE '!'`,
  propertyNamespacesUnder: `SELECT DISTINCT namespace FROM ${NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ? AND namespace LIKE ? ESCAPE '!'`,
  namespaceProperties: `SELECT property_key, property_value FROM ${NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ? AND namespace = ?`,
  insertNamespaceProperty: `INSERT INTO ${NAMESPACE_PROPERTIES_TABLE} (catalog_name, namespace, property_key, property_value) VALUES (?, ?, ?, ?)`,
  updateNamespaceProperty: `UPDATE ${NAMESPACE_PROPERTIES_TABLE} SET property_value = ? WHERE catalog_name = ? AND namespace = ? AND property_key = ?`,
  deleteNamespaceProperty: `DELETE FROM ${NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ? AND namespace = ? AND property_key = ?`,
  deleteAllNamespaceProperties: `DELETE FROM ${NAMESPACE_PROPERTIES_TABLE} WHERE catalog_name = ? AND namespace = ?`,
} as const;

/** A LIKE pattern matching strict descendants of `namespace` (Java escapes with `!`). */
export function descendantsPattern(namespace: string): string {
  return `${namespace.replace(/!/g, '!!').replace(/_/g, '!_').replace(/%/g, '!%')}.%`;
}

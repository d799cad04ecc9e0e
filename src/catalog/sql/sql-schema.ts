/**
 * Creating the JdbcCatalog tables when they are missing, from the DDL files in top-level
 * `catalog/sql/<dialect>.sql` (the same files operators run by hand), and upgrading a schema-version
 * V0 `iceberg_tables` (no `iceberg_type` column, written by Java before 1.6 or with
 * `jdbc.schema-version=V0`) to V1 the way Java does with `jdbc.schema-version=V1`
 * (`JdbcUtil.V1_UPDATE_CATALOG_SQL`). V1 is what Trino expects by default.
 */
import { readFile } from 'node:fs/promises';
import { errorMessage, FloeError } from '../../util/errors.js';
import type { SqlDialect, SqlDriver } from './sql-driver.js';
import { RECORD_TYPE_COLUMN, TABLES_TABLE } from './sql-statements.js';

const SUBSYSTEM = 'catalog.sql';

/** Where the DDL files are: `<package root>/catalog/sql/` (same depth from src/ and dist/). */
function ddlFileUrl(dialect: SqlDialect): URL {
  return new URL(`../../../catalog/sql/${dialect}.sql`, import.meta.url);
}

/** The statements of a DDL file: `--` comment lines dropped, split at semicolons ending a line. */
export function splitSqlStatements(text: string): string[] {
  const body = text
    .split('\n')
    .filter((line) => !line.trim().startsWith('--'))
    .join('\n');
  return body
    .split(/;\s*(?:\n|$)/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

export async function readDdl(dialect: SqlDialect): Promise<string[]> {
  const url = ddlFileUrl(dialect);
  let text: string;
  try {
    text = await readFile(url, 'utf8');
  } catch (e) {
    throw new FloeError(SUBSYSTEM, 'internal', `cannot read the catalog DDL ${url.pathname}: ${errorMessage(e)}; the floe installation is incomplete (catalog/sql/ must ship with it)`, { cause: e });
  }
  return splitSqlStatements(text);
}

/**
 * Creates the catalog tables if missing and adds `iceberg_type` to a V0 table. Safe to run from
 * several processes at once: a creation that loses a race is accepted when the tables exist after it.
 */
export async function ensureCatalogTables(driver: SqlDriver): Promise<void> {
  for (const statement of await readDdl(driver.dialect)) {
    try {
      await driver.execute(statement);
    } catch (e) {
      // PostgreSQL's CREATE TABLE IF NOT EXISTS can still fail on a concurrent creation (pg_type
      // unique violation); the table then exists, which is all that is needed.
      if (!(await driver.columnExists(TABLES_TABLE, 'catalog_name').catch(() => false))) {
        throw new FloeError(SUBSYSTEM, 'io', `cannot create the catalog tables in ${driver.description}: ${errorMessage(e)}; grant CREATE to floe's user or run catalog/sql/${driver.dialect}.sql by hand`, { cause: e });
      }
    }
  }
  if (!(await driver.columnExists(TABLES_TABLE, RECORD_TYPE_COLUMN))) {
    try {
      await driver.execute(`ALTER TABLE ${TABLES_TABLE} ADD COLUMN ${RECORD_TYPE_COLUMN} VARCHAR(5)`);
    } catch (e) {
      if (!(await driver.columnExists(TABLES_TABLE, RECORD_TYPE_COLUMN))) {
        throw new FloeError(SUBSYSTEM, 'io', `${TABLES_TABLE} in ${driver.description} has the V0 layout (no ${RECORD_TYPE_COLUMN} column) and adding it failed: ${errorMessage(e)}; run ALTER TABLE ${TABLES_TABLE} ADD COLUMN ${RECORD_TYPE_COLUMN} VARCHAR(5)`, { cause: e });
      }
    }
  }
}

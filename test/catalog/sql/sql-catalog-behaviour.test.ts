/**
 * The shared catalog behaviour suite on the SQL catalog: SQLite (a file), the harness MariaDB, and
 * the machine's PostgreSQL (skipped with the reason when it is not reachable). Each run gets a fresh
 * database/schema and a fresh local warehouse; the concurrency test runs writer processes that open
 * the same catalog through open-sql-catalog.ts.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe } from 'vitest';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { runCatalogBehaviourSuite, type CatalogUnderTest } from '../behaviour-suite.js';
import { freshMariaDbDatabase, freshPostgresSchema, freshSqliteFile, postgresStatus, type TestSqlDatabase } from './sql-test-databases.js';

const OPENER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'open-sql-catalog.ts');

async function underTest(db: TestSqlDatabase): Promise<CatalogUnderTest> {
  const warehouse = await mkdtemp(path.join(os.tmpdir(), 'floe-sql-warehouse-'));
  const config = { url: db.url, warehouse, name: 'floe_test' };
  const catalog = new SqlCatalog(config);
  await catalog.initialize();
  return {
    catalog,
    remote: { module: OPENER, config },
    async dispose() {
      await db.dispose();
      await rm(warehouse, { recursive: true, force: true });
    },
  };
}

runCatalogBehaviourSuite('sql on sqlite', async () => underTest(await freshSqliteFile()));

runCatalogBehaviourSuite('sql on the harness MariaDB', async () => underTest(await freshMariaDbDatabase()));

const pg = await postgresStatus();
if (!pg.available) console.warn(`[floe] skipping the SQL catalog on PostgreSQL: ${pg.reason}`);
describe.skipIf(!pg.available)(`sql on PostgreSQL${pg.available ? '' : ` — skipped: ${pg.reason}`}`, () => {
  runCatalogBehaviourSuite('sql on PostgreSQL', async () => underTest(await freshPostgresSchema()));
});

/**
 * The shared catalog behaviour suite through the REST protocol: floe's REST client talking to
 * `floe catalog serve` (in this process, on a free port, with a bearer token) over a filesystem
 * catalog on local disk, over a SQL catalog in SQLite, and over a SQL catalog on the harness MariaDB
 * with a routing prefix and OAuth2 client credentials. The concurrency test's writer processes
 * connect to the same server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Catalog } from '../../../src/iceberg/metadata/catalog.js';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { RestCatalog, type RestCatalogOptions } from '../../../src/catalog/rest/rest-catalog.js';
import { RestCatalogServer, type RestCatalogServerOptions } from '../../../src/catalog/server/rest-server.js';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { runCatalogBehaviourSuite, type CatalogUnderTest } from '../behaviour-suite.js';
import { freshMariaDbDatabase, freshSqliteFile } from '../sql/sql-test-databases.js';

const OPENER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'open-rest-catalog.ts');

async function served(
  backend: Catalog & { warehouse: string },
  server: Partial<RestCatalogServerOptions>,
  client: Omit<RestCatalogOptions, 'uri'>,
  cleanup: () => Promise<void>,
): Promise<CatalogUnderTest> {
  const rest = new RestCatalogServer({ catalog: backend, warehouse: backend.warehouse, ...server });
  const uri = await rest.listen(0);
  const config: RestCatalogOptions = { uri, ...client };
  return {
    catalog: new RestCatalog(config),
    remote: { module: OPENER, config },
    async dispose() {
      await rest.close();
      await backend.close?.();
      await cleanup();
    },
  };
}

runCatalogBehaviourSuite('rest → floe catalog serve → filesystem on local disk', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'floe-rest-fs-'));
  return served(new FileSystemCatalog({ warehouse: dir }), { token: 'sesame' }, { token: 'sesame' }, () => rm(dir, { recursive: true, force: true }));
});

runCatalogBehaviourSuite('rest → floe catalog serve → sql on sqlite', async () => {
  const db = await freshSqliteFile();
  const sql = new SqlCatalog({ url: db.url, warehouse: path.join(db.dir, 'warehouse') });
  return served(sql, { token: 'sesame' }, { token: 'sesame' }, () => db.dispose());
});

runCatalogBehaviourSuite('rest (prefix, OAuth2 client credentials) → floe catalog serve → sql on MariaDB', async () => {
  const db = await freshMariaDbDatabase();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'floe-rest-maria-'));
  const sql = new SqlCatalog({ url: db.url, warehouse: dir });
  return served(
    sql,
    { prefix: 'lake', clients: [{ clientId: 'floe', clientSecret: 's3cret' }] },
    { credential: 'floe:s3cret' },
    async () => {
      await db.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  );
});

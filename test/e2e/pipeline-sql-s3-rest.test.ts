/**
 * Catalogs and stores interoperate: a table written by `floe run` (the real pipeline: snapshot, then streaming)
 * through the SQL catalog on PostgreSQL with its files on S3 (s3rver here; MinIO where a Docker
 * engine runs) is loaded by floe's REST client through `floe catalog serve` (the REST server over a
 * SQL catalog of the same database) and read back with exactly MySQL's rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { RestCatalog } from '../../src/catalog/rest/rest-catalog.js';
import { RestCatalogServer } from '../../src/catalog/server/rest-server.js';
import { SqlCatalog } from '../../src/catalog/sql/sql-catalog.js';
import { parseConfig } from '../../src/config/load.js';
import { silentLogger } from '../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../src/pipeline/observe/notifications.js';
import { runPipeline, type RunResult } from '../../src/pipeline/runner.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { dockerStatus, startMinio, startS3rver, type TestS3Server } from '../support/s3-server.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { freshPostgresSchema, postgresStatus, type TestSqlDatabase, withCatalogDbAndStorage } from '../catalog/sql/sql-test-databases.js';
import { serverPosition, waitForCatchUp } from './support/catch-up.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const pgStatus = await postgresStatus();
const docker = await dockerStatus();
let conn: mysql.Connection;

beforeAll(async () => {
  conn = await sql();
});
afterAll(async () => {
  await conn?.end();
});

async function runToLake(catalogDb: TestSqlDatabase, s3: TestS3Server): Promise<void> {
  const db = await createTestDatabase('e2e_sql_s3');
  await conn.query(`CREATE TABLE \`${db}\`.orders (id BIGINT UNSIGNED PRIMARY KEY, customer VARCHAR(40) NOT NULL, amount DECIMAL(12,2), placed DATETIME(6), paid TIMESTAMP(6) NULL, doc JSON, note VARBINARY(16))`);
  await conn.query(
    `INSERT INTO \`${db}\`.orders VALUES ${Array.from({ length: 300 }, (_, i) => `(${i === 0 ? '18446744073709551615' : i}, 'c${i % 17}', ${i}.${i % 100}, '2026-01-0${1 + (i % 9)} 10:00:00.${String(i).padStart(6, '0')}', ${i % 5 === 0 ? 'NULL' : `'2026-02-01 00:00:0${i % 10}.5'`}, '{"n": ${i}}', ${i % 3 === 0 ? 'NULL' : `X'${(i % 256).toString(16).padStart(2, '0')}ff'`})`).join(', ')}`,
  );
  const warehouse = `s3://${s3.bucket}/lake`;
  const config = parseConfig({
    job: { id: 'sql-s3' },
    source: { ...sharedMysqlConfig(), serverId: 60_000 + (process.pid % 5000) * 8, include: [`${db}.*`], snapshot: { chunkSize: 64 } },
    warehouse: {
      location: warehouse,
      s3: { endpoint: s3.config.endpoint, region: s3.config.region ?? 'us-east-1', pathStyle: true, accessKeyId: s3.config.accessKeyId, secretAccessKey: s3.config.secretAccessKey },
    },
    catalog: { type: 'sql', name: 'lake', url: catalogDb.url },
    commit: { intervalMs: 200, idleCheckpoints: 2 },
  });
  const storage = { s3: s3.config };
  const sqlCatalog = new SqlCatalog({ url: catalogDb.url, name: 'lake', warehouse, storage });
  const controller = new AbortController();
  const sink = new RecordingSink();
  const result: Promise<RunResult> = runPipeline(config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier('sql-s3', [sink], silentLogger), logger: silentLogger });
  let server: RestCatalogServer | undefined;
  let rest: RestCatalog | undefined;
  try {
    await Promise.race([sink.waitFor('streaming-started'), result.then((r) => Promise.reject(new Error(`ended: ${r.reason} ${String(r.error)}`)))]);
    // Changes while streaming: upserts, a key change, deletes.
    await conn.query(`UPDATE \`${db}\`.orders SET amount = amount + 1, note = X'00' WHERE id % 7 = 0`);
    await conn.query(`UPDATE \`${db}\`.orders SET id = 100000 WHERE id = 5`);
    await conn.query(`DELETE FROM \`${db}\`.orders WHERE id % 11 = 0`);
    await conn.query(`INSERT INTO \`${db}\`.orders VALUES (9007199254740993, 'beyond 2^53', 0.01, '1999-12-31 23:59:59.999999', '2038-01-19 03:14:07.999999', '[]', X'')`);
    await waitForCatchUp(sqlCatalog, [{ identifier: { namespace: [db], name: 'orders' }, sourceKey: `${db}.orders` }], 'sql-s3', await serverPosition({ ...sharedMysqlConfig() }), { timeoutMs: 60_000 });
    controller.abort();
    expect((await result).reason).toBe('stopped');

    // floe catalog serve over the same SQL catalog; the REST client brings only the keys.
    server = new RestCatalogServer({ catalog: sqlCatalog, warehouse, token: 'e2e', storage, advertisedS3Endpoint: s3.config.endpoint });
    const uri = await server.listen(0);
    rest = new RestCatalog({ uri, token: 'e2e', storage: { s3: { accessKeyId: s3.config.accessKeyId, secretAccessKey: s3.config.secretAccessKey } } });
    const lake = await lakeTableRows(rest, { namespace: [db], name: 'orders' });
    const expected = await mysqlTableRows({ ...sharedMysqlConfig() }, db, 'orders', lake.columns);
    expect(multisetDifference(expected, lake.rows)).toEqual({ missing: [], unexpected: [] });
    expect(lake.rows.length).toBe(expected.length);
  } finally {
    controller.abort();
    await result.catch(() => undefined);
    await rest?.close();
    await server?.close();
    await sqlCatalog.close();
  }
}

describe('floe run → SQL catalog + S3 files → floe catalog serve → REST client', () => {
  it.skipIf(!pgStatus.available)(`PostgreSQL catalog, s3rver storage${pgStatus.available ? '' : ` — skipped: ${pgStatus.reason}`}`, async () => {
    await withCatalogDbAndStorage(freshPostgresSchema, startS3rver, runToLake);
  });

  it.skipIf(!pgStatus.available || !docker.available)(`PostgreSQL catalog, MinIO storage${docker.available ? '' : ` — skipped: ${docker.reason}`}`, async () => {
    await withCatalogDbAndStorage(freshPostgresSchema, startMinio, runToLake);
  });
});

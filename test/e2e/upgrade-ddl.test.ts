/**
 * An upgrade with a DDL pending: a lake written by floe 6236d67 (test/fixtures/upgrade-6236d67, whose
 * tables record no MySQL definition), three ALTERs made while floe was stopped, rows logged before and
 * after them — then today's floe resumes. Where the lake records no definition, the definition at
 * the table's offset is derived from its Iceberg schema, so the rows logged before each DDL decode
 * with the layout they were logged in; the DDL is applied where the binlog has it.
 *
 * The MySQL side is recreated exactly: a private MariaDB with the fixture's server id, its binlog
 * reset, the fixture's statements replayed — the test checks that the binlog ends where the lake's
 * offsets say (the fixture's README says how to make it again when the server's logging changes).
 * The lake goes into moto (bucket `lake`) as it was written: its metadata refers to s3://lake/….
 */
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../../src/catalog/filesystem/filesystem-catalog.js';
import type { LocalServer } from '../../src/demo/local-server.js';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { SOURCE_SCHEMA_PROPERTY } from '../../src/pipeline/schema-change/source-schema-record.js';
import { BEFORE_FLOE, BUCKET, DATABASE, DOWNTIME, JOB, SERVER_ID, TABLES, WAREHOUSE, WHILE_FLOE, binlogEnd, connectShop, run, type FixtureFacts } from '../fixtures/upgrade-6236d67/shop.js';
import { parseMysqlUrl } from '../support/mariadb.js';
import { MOTO_ACCESS_KEY_ID, MOTO_SECRET_ACCESS_KEY, motoStatus, startMoto } from '../support/moto-server.js';
import type { TestS3Server } from '../support/s3-server.js';
import { startTestServer } from '../support/servers.js';
import { serverPosition, waitForCatchUp, watchedTables, whileRunning } from './support/catch-up.js';
import { FloeProcess } from './support/floe-process.js';
import { writeFloeConfig } from './support/floe-config.js';
import { lakeTableRows, multisetDifference, mysqlTableRows } from './support/lake-compare.js';

process.env.TZ ??= 'Asia/Seoul';

const FIXTURE = fileURLToPath(new URL('../fixtures/upgrade-6236d67/', import.meta.url));
const moto = motoStatus();

let server: LocalServer | undefined;
let s3: TestS3Server | undefined;
let conn: mysql.Connection | undefined;
let work: string | undefined;

beforeAll(async () => {
  if (!moto.available) return;
  [server, s3] = await Promise.all([startTestServer({ serverId: SERVER_ID }), startMoto(BUCKET)]);
  work = await mkdtemp(join(tmpdir(), 'floe-upgrade-'));
}, 120_000);

afterAll(async () => {
  await conn?.end();
  await s3?.stop();
  await server?.stop();
  if (work) for (const p of [work, `${work}.json`]) await rm(p, { recursive: true, force: true });
});

async function files(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...(await files(p)));
    else out.push(p);
  }
  return out;
}

describe.skipIf(!moto.available)('an upgrade from a lake of floe 6236d67 with DDL made while floe was stopped', () => {
  it('today\'s floe decodes the rows before each DDL with the definition of the lake\'s Iceberg schema, applies the DDL, and the lake equals MySQL', async () => {
    const facts = JSON.parse(await readFile(join(FIXTURE, 'fixture.json'), 'utf8')) as FixtureFacts;
    const mysqlServer = parseMysqlUrl(server!.url);
    // the MySQL side as the old floe left it, byte for byte
    conn = await connectShop(mysqlServer);
    await conn.query('RESET MASTER');
    await run(conn, BEFORE_FLOE);
    await run(conn, WHILE_FLOE);
    expect(await binlogEnd(conn), `the replayed binlog differs from the one the fixture's lake points into (made on ${facts.mariadb}); make the fixture again (its README)`).toEqual({ file: facts.file, position: facts.position, gtid: facts.gtid });
    // the lake as the old floe wrote it
    const client = new S3Client({ endpoint: s3!.config.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: MOTO_ACCESS_KEY_ID, secretAccessKey: MOTO_SECRET_ACCESS_KEY } });
    for (const path of await files(join(FIXTURE, 'lake'))) {
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: relative(join(FIXTURE, 'lake'), path), Body: await readFile(path) }));
    }
    client.destroy();
    const catalog = new FileSystemCatalog({ warehouse: WAREHOUSE, storage: { s3: s3!.config } });
    for (const t of TABLES) expect((await loadCatalogTable(catalog, { namespace: [DATABASE], name: t })).metadata.properties[SOURCE_SCHEMA_PROPERTY], `${t} records no definition`).toBeUndefined();

    // floe is stopped for the upgrade: rows, the DDL, rows
    await run(conn, DOWNTIME);

    const config = await writeFloeConfig({
      job: JOB,
      warehouse: work!,
      lake: { location: WAREHOUSE, s3: { endpoint: s3!.config.endpoint, region: 'us-east-1', pathStyle: true, accessKeyId: MOTO_ACCESS_KEY_ID, secretAccessKey: MOTO_SECRET_ACCESS_KEY } },
      serverId: 9200,
      include: [`${DATABASE}.*`],
      source: { host: mysqlServer.host, port: mysqlServer.port, user: mysqlServer.user, password: mysqlServer.password },
      commit: { intervalMs: 500, idleCheckpoints: 1 },
    });

    const target = await serverPosition(mysqlServer);
    const floe = new FloeProcess(config);
    try {
      await waitForCatchUp(catalog, watchedTables(DATABASE, TABLES), JOB, target, { timeoutMs: 120_000, check: whileRunning(floe, 'floe') });
    } catch (e) {
      throw new Error(`${String(e)}\n${floe.tail()}`);
    } finally {
      floe.kill('SIGTERM');
    }
    expect(await floe.exited, floe.tail()).toEqual({ code: 0, signal: null });
    for (const t of TABLES) {
      const lake = await lakeTableRows(catalog, { namespace: [DATABASE], name: t });
      const expected = await mysqlTableRows(mysqlServer, DATABASE, t, lake.columns);
      expect({ table: t, ...multisetDifference(expected, lake.rows), rows: lake.rows.length }).toEqual({ table: t, missing: [], unexpected: [], rows: expected.length });
    }
    const accounts = await loadCatalogTable(catalog, { namespace: [DATABASE], name: 'accounts' });
    expect(accounts.metadata.schemas.find((x) => x.schemaId === accounts.metadata.currentSchemaId)!.fields.map((f) => f.name)).toEqual(['id', 'name', 'balance', 'score']);
  }, 300_000);
});

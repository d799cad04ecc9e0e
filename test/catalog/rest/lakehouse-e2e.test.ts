/**
 * End to end across catalogs and storage: a table written by floe's checkpoint committer (the
 * pipeline's write path: data files, equality deletes, DVs, stamped snapshots) through the SQL
 * catalog on PostgreSQL with its files on S3 (s3rver here; MinIO when a Docker engine is reachable),
 * then loaded by floe's REST client through `floe catalog serve` and read back by floe's scan reader
 * with exactly the rows written. A further checkpoint committed through the REST client is read back
 * through the SQL catalog directly, so both directions go through real files.
 */
import { describe, expect, it } from 'vitest';
import { RestCatalog } from '../../../src/catalog/rest/rest-catalog.js';
import { RestCatalogServer } from '../../../src/catalog/server/rest-server.js';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { Schema } from '../../../src/iceberg/spec/schema.js';
import { createTable, loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { Types } from '../../../src/iceberg/spec/types.js';
import { TableCommitter, lastCommitted } from '../../../src/iceberg/checkpoint/index.js';
import { insert, removeKey, update } from '../../../src/iceberg/writer/index.js';
import { daysFromCivil, type Row } from '../../../src/model/values.js';
import { dockerStatus, startMinio, startS3rver, type TestS3Server } from '../../support/s3-server.js';
import { freshPostgresSchema, freshSqliteFile, postgresStatus, type TestSqlDatabase, withCatalogDbAndStorage } from '../sql/sql-test-databases.js';

const schema = new Schema(
  0,
  [
    { id: 1, name: 'id', required: true, type: Types.long },
    { id: 2, name: 'customer', required: false, type: Types.string },
    { id: 3, name: 'amount', required: false, type: Types.decimal(12, 2) },
    { id: 4, name: 'ordered_on', required: false, type: Types.date },
    { id: 5, name: 'paid_at', required: false, type: Types.timestamptz },
    { id: 6, name: 'note', required: false, type: Types.binary },
  ],
  [1],
);

const enc = new TextEncoder();
function order(id: bigint, customer: string, amount: string, day: number, note: string | null): Row {
  return [id, customer, amount, daysFromCivil(2026, 8, day), 1_786_000_000_000_000n + (id % 100_000n) * 1_000_000n, note === null ? null : enc.encode(note)];
}

/** Rows as comparable text (bigint and bytes included), sorted by key. */
function canonical(rows: Row[]): string[] {
  return rows
    .map((r) => JSON.stringify(r.map((v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `0x${Buffer.from(v).toString('hex')}` : v))))
    .sort();
}

async function lakehouseRoundTrip(db: TestSqlDatabase, s3: TestS3Server, formatVersion: 2 | 3): Promise<void> {
  const storage = { s3: s3.config };
  const sql = new SqlCatalog({ url: db.url, name: 'lake', warehouse: `s3://${s3.bucket}/lake-v${formatVersion}`, storage });
  const server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, token: 'e2e', storage, advertisedS3Endpoint: s3.config.endpoint });
  const uri = await server.listen(0);
  // The REST client brings only the keys; endpoint, path style and region come from the server.
  const rest = new RestCatalog({ uri, token: 'e2e', storage: { s3: { accessKeyId: s3.config.accessKeyId, secretAccessKey: s3.config.secretAccessKey } } });
  try {
    await sql.createNamespace(['shop']);
    const id = { namespace: ['shop'], name: 'orders' };
    await createTable(sql, id, { schema, formatVersion });

    const writer = new TableCommitter({ identifier: id, catalog: sql, jobId: 'e2e' });
    await writer.write([
      insert(order(1n, 'ada', '12.50', 1, 'first')),
      insert(order(2n, 'bob', '7.00', 2, null)),
      insert(order(3n, 'cy', '1234567890.99', 3, 'big')),
      insert(order(9_007_199_254_740_993n, 'huge key', '0.01', 4, 'beyond 2^53')),
    ]);
    await writer.commit(1n, '{"gtid":"e2e:1-4"}');
    await writer.write([update(order(2n, 'bob', '8.00', 2, 'paid')), removeKey([3n]), insert(order(4n, 'dee', '3.30', 5, null)), update(order(4n, 'dee', '3.40', 5, 'twice in one checkpoint'))]);
    await writer.commit(2n, '{"gtid":"e2e:1-9"}');

    const expected = [
      order(1n, 'ada', '12.50', 1, 'first'),
      order(2n, 'bob', '8.00', 2, 'paid'),
      order(4n, 'dee', '3.40', 5, 'twice in one checkpoint'),
      order(9_007_199_254_740_993n, 'huge key', '0.01', 4, 'beyond 2^53'),
    ];

    // Through floe catalog serve: the same metadata, and the same rows read from S3.
    const viaRest = await loadCatalogTable(rest, id);
    const viaSql = await loadCatalogTable(sql, id);
    expect(viaRest.metadataLocation).toBe(viaSql.metadataLocation);
    expect(viaRest.metadataLocation).toMatch(new RegExp(`^s3://${s3.bucket}/lake-v${formatVersion}/shop/orders/metadata/00002-`));
    expect(viaRest.metadata.formatVersion).toBe(formatVersion);
    expect(lastCommitted(viaRest, 'e2e')).toMatchObject({ checkpointId: 2n, sourceOffset: '{"gtid":"e2e:1-9"}' });
    expect(canonical(await readTableRows(viaRest))).toEqual(canonical(expected));

    // A checkpoint committed through the REST client lands in the SQL catalog.
    const restWriter = new TableCommitter({ identifier: id, catalog: rest, jobId: 'e2e' });
    expect(await restWriter.open()).toMatchObject({ checkpointId: 2n });
    await restWriter.write([removeKey([1n]), insert(order(5n, 'eve', '99.99', 6, null))]);
    const outcome = await restWriter.commit(3n, '{"gtid":"e2e:1-12"}');
    expect([outcome].map((t) => t.status)).toEqual(['committed']);
    const after = await loadCatalogTable(sql, id);
    expect(after.metadataLocation).toMatch(/\/00003-/);
    expect(canonical(await readTableRows(after))).toEqual(canonical([...expected.slice(1), order(5n, 'eve', '99.99', 6, null)]));
  } finally {
    await rest.close();
    await server.close();
    await sql.close();
  }
}

const pg = await postgresStatus();
const docker = await dockerStatus();
if (!pg.available) console.warn(`[floe] skipping the PostgreSQL + S3 lakehouse end-to-end test: ${pg.reason}`);

describe('lakehouse end to end: SQL catalog + S3 files, served over REST', () => {
  it.skipIf(!pg.available)(`PostgreSQL catalog, s3rver storage, format v3${pg.available ? '' : ` — skipped: ${pg.reason}`}`, async () => {
    await withCatalogDbAndStorage(freshPostgresSchema, startS3rver, (db, storage) => lakehouseRoundTrip(db, storage, 3));
  });

  it('SQLite catalog, s3rver storage, format v2 (runs everywhere)', async () => {
    await withCatalogDbAndStorage(freshSqliteFile, startS3rver, (db, storage) => lakehouseRoundTrip(db, storage, 2));
  });

  it.skipIf(!docker.available || !pg.available)(`PostgreSQL catalog, MinIO storage${docker.available ? '' : ` — skipped: ${docker.reason}`}`, async () => {
    await withCatalogDbAndStorage(freshPostgresSchema, startMinio, (db, storage) => lakehouseRoundTrip(db, storage, 3));
  });
});

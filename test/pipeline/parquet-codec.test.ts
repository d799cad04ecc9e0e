/**
 * The Parquet codec of the tables `floe run` writes: the table's `write.parquet.compression-codec`
 * (here set through `tables.overrides[…].properties` when floe creates it) for its data files, the
 * snapshot's and the stream's alike; and a codec an engine cannot read, set on the table later by
 * another writer, stops the run with an error naming the property — before floe writes a file in it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalogTable } from '../../src/iceberg/table/index.js';
import { planScan } from '../../src/iceberg/scan/scan-plan.js';
import { parquetCodecsOf } from '../iceberg/writer/support.js';
import { openHarness, type Harness } from './schema-change/pipeline-harness.js';

process.env.TZ ??= 'Asia/Seoul';

let h: Harness;

beforeAll(async () => {
  h = await openHarness('codec', 'codec', ['t'], ['CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(20))', `INSERT INTO t VALUES ${Array.from({ length: 120 }, (_, i) => `(${i}, 'v ${i}')`).join(', ')}`]);
});

afterAll(async () => {
  await h?.close();
});

const identifier = () => ({ namespace: [h.db], name: 't' });

async function liveDataFiles(): Promise<string[]> {
  const t = await loadCatalogTable(h.catalog, identifier());
  return (await planScan(t.io, t.metadata)).tasks.map((task) => task.file.filePath);
}

describe("the table's Parquet codec", () => {
  it('snapshot and stream write the codec the table names; a codec an engine cannot read, set later, stops the run naming it', async () => {
    const overrides = { tables: { overrides: { [`${h.db}.t`]: { properties: { 'write.parquet.compression-codec': 'snappy' } } } } };
    const run = h.start(overrides);
    try {
      await h.untilStreaming(run);
      await h.exec("UPDATE t SET v = 'changed' WHERE id < 10");
      await h.exec("INSERT INTO t VALUES (500, 'new')");
      await h.catchUp(run, ['t']);
    } finally {
      const result = await run.stop();
      expect(result.error === undefined ? result.reason : String(result.error)).toBe('stopped');
    }
    await h.expectLakeEqualsMysql('t');
    const files = await liveDataFiles();
    expect(files.length).toBeGreaterThan(1);
    expect([...new Set(files.flatMap((f) => parquetCodecsOf(f)))]).toEqual(['SNAPPY']);

    // another writer sets a codec Trino refuses to read a table in
    await h.catalog.commitTable(identifier(), [], [{ action: 'set-properties', updates: { 'write.parquet.compression-codec': 'brotli' } }]);
    const again = h.start(overrides);
    await h.exec("INSERT INTO t VALUES (501, 'after')");
    const ended = await again.result;
    expect({ reason: ended.reason, error: String(ended.error) }).toMatchObject({ reason: 'failed', error: expect.stringContaining('property write.parquet.compression-codec is "brotli"; floe writes Parquet with zstd, snappy, gzip or uncompressed') });
    expect((await liveDataFiles()).sort()).toEqual(files.sort());
  });
});

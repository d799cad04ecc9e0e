/**
 * `floe catalog serve` as a real child process: it reads the same config file as `floe run`, serves
 * the configured catalog, requires its bearer token, answers floe's REST client, and stops cleanly on
 * SIGTERM. Also: config → catalog for every catalog type (src/catalog/factory.ts).
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCatalog, openCatalog, s3ConfigOf, warehouseOf } from '../../../src/catalog/factory.js';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { RestCatalog } from '../../../src/catalog/rest/rest-catalog.js';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { parseConfig } from '../../../src/config/load.js';
import { runFloe, spawnFloe, waitForUrl } from '../../cli/run-floe.js';
import { expectFloeError } from '../behaviour-suite.js';
import { appendSnapshotCommit, testSchema } from '../test-snapshots.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'floe-serve-cli-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('floe catalog serve (child process)', () => {
  it('serves the sql catalog of the config file with a bearer token, and stops on SIGTERM', async () => {
    const config = path.join(dir, 'floe.yaml');
    await writeFile(config, [
      'warehouse:',
      `  location: ${path.join(dir, 'warehouse')}`,
      'catalog:',
      '  type: sql',
      '  name: lake',
      `  url: sqlite:${path.join(dir, 'catalog.db')}`,
      '',
    ].join('\n'));
    const { child, done, output } = spawnFloe(['-c', config, '--log-format', 'json', 'catalog', 'serve', '--port', '0'], { env: { FLOE_CATALOG_TOKEN: 'from-env' } });
    try {
      const url = await waitForUrl(output, done);
      expect(output().stdout).toMatch(/sql catalog "lake" \(warehouse file:\/\/.*\/warehouse\)/);
      expect((await fetch(`${url}/v1/config`)).status).toBe(401);
      const client = new RestCatalog({ uri: url, token: 'from-env' });
      await client.createNamespace(['db']);
      const t = await client.createTable({ namespace: ['db'], name: 't' }, { schema: testSchema() });
      const c = appendSnapshotCommit(t.metadata);
      const after = await client.commitTable(t.identifier, c.requirements, c.updates);
      expect(after.metadataLocation).toMatch(/\/warehouse\/db\/t\/metadata\/00001-/);
      await client.close();
      // What the server wrote is the config's SQL catalog: open it directly.
      const direct = new SqlCatalog({ url: `sqlite:${path.join(dir, 'catalog.db')}`, name: 'lake', warehouse: path.join(dir, 'warehouse') });
      expect((await direct.loadTable(t.identifier)).metadata.currentSnapshotId).toBe(c.snapshot.snapshotId);
      await direct.close();
    } finally {
      child.kill('SIGTERM');
    }
    const result = await done;
    expect(result.code).toBe(0);
  });

  it('refuses to serve a rest catalog, and bad flags, with exit code 2', async () => {
    const config = path.join(dir, 'rest.yaml');
    await writeFile(config, 'catalog:\n  type: rest\n  uri: http://127.0.0.1:9/\n');
    const [rest, bad] = await Promise.all([runFloe(['-c', config, 'catalog', 'serve', '--port', '0']), runFloe(['catalog', 'serve', '--port', 'eighty'])]);
    expect(rest.code, rest.stderr).toBe(2);
    expect(rest.stderr).toMatch(/serves a filesystem or sql catalog/);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--port expects a port number/);
  });
});

describe('config → catalog (src/catalog/factory.ts)', () => {
  it('builds each catalog type from floe config, mapping warehouse.s3 to the FileIO settings', async () => {
    const fsConfig = parseConfig({ warehouse: { location: path.join(dir, 'fs-wh') } });
    const fs = await openCatalog(fsConfig);
    expect(fs).toBeInstanceOf(FileSystemCatalog);
    expect(warehouseOf(fs)).toBe(`file://${path.join(dir, 'fs-wh')}`);
    expect(fs.name).toBe('floe');

    const sqlConfig = parseConfig({ warehouse: { location: 's3://bucket/lake', s3: { endpoint: 'http://minio:9000', pathStyle: true, accessKeyId: 'k', secretAccessKey: 's' } }, catalog: { type: 'sql', name: 'shop', url: `sqlite:${path.join(dir, 'factory.db')}` } });
    expect(s3ConfigOf(sqlConfig.warehouse)).toEqual({ endpoint: 'http://minio:9000', region: 'us-east-1', forcePathStyle: true, accessKeyId: 'k', secretAccessKey: 's' });
    const sql = await openCatalog(sqlConfig);
    expect(sql).toBeInstanceOf(SqlCatalog);
    expect(warehouseOf(sql)).toBe('s3://bucket/lake');
    expect(sql.name).toBe('shop');
    await sql.close();

    const restConfig = parseConfig({ catalog: { type: 'rest', uri: 'http://127.0.0.1:9', token: 't' } });
    const lazy = createCatalog(restConfig);
    expect(lazy).toBeInstanceOf(RestCatalog);
    expect(warehouseOf(lazy)).toBeUndefined();
    // openCatalog initializes: an unreachable REST catalog fails at start-up with a retryable io error.
    const e = await expectFloeError(openCatalog(restConfig), 'io');
    expect(e.message).toMatch(/cannot reach the REST catalog at http:\/\/127\.0\.0\.1:9/);
  });
});

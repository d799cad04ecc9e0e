/**
 * `POST /v1/{prefix}/namespaces/{ns}/register` on `floe catalog serve`: a Hadoop-layout table (what
 * the filesystem catalog writes) registered into a served SQL catalog is loadable by name, the way
 * Trino — which has no filesystem catalog — reaches such a table. Metadata outside the served
 * warehouse is refused, as are names already taken, missing namespaces, files that are no metadata,
 * and catalogs that cannot hold pointers (the filesystem catalog). Raw `fetch` calls, as in
 * rest-protocol.test.ts, so the wire format is what is checked.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { RestCatalog } from '../../../src/catalog/rest/rest-catalog.js';
import { RestCatalogServer } from '../../../src/catalog/server/rest-server.js';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { parseJson, stringifyJson } from '../../../src/util/json.js';
import { expectFloeError } from '../behaviour-suite.js';
import { appendSnapshotCommit, testSchema } from '../test-snapshots.js';

interface Answer {
  status: number;
  json: any;
}

async function call(base: string, method: string, pathAndQuery: string, body?: unknown): Promise<Answer> {
  const r = await fetch(base + pathAndQuery, {
    method,
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : typeof body === 'string' ? body : stringifyJson(body),
  });
  const text = await r.text();
  return { status: r.status, json: text ? parseJson(text) : undefined };
}

describe('floe catalog serve: register', () => {
  let dir: string;
  let warehouse: string;
  let sql: SqlCatalog;
  let server: RestCatalogServer;
  let base: string;
  let hadoopMetadata: string;
  let hadoopSnapshotId: bigint;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'floe-rest-register-'));
    warehouse = path.join(dir, 'wh');
    // A table in the Hadoop layout, written by the filesystem catalog inside the served warehouse.
    const fs = new FileSystemCatalog({ warehouse: path.join(warehouse, 'hadoop') });
    await fs.createNamespace(['db']);
    const t = await fs.createTable({ namespace: ['db'], name: 'orders' }, { schema: testSchema() });
    const c = appendSnapshotCommit(t.metadata);
    const committed = await fs.commitTable(t.identifier, c.requirements, c.updates);
    hadoopMetadata = committed.metadataLocation;
    hadoopSnapshotId = c.snapshot.snapshotId;
    await fs.close?.();

    sql = new SqlCatalog({ url: `sqlite:${path.join(dir, 'catalog.db')}`, warehouse });
    await sql.createNamespace(['reads']);
    server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, prefix: 'lake' });
    base = await server.listen(0);
  });
  afterAll(async () => {
    await server?.close();
    await sql?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('advertises the endpoint, registers a Hadoop-layout table, loads it by name, and drops it without touching its files', async () => {
    const config = await call(base, 'GET', '/v1/config');
    expect(config.json.endpoints).toContain('POST /v1/{prefix}/namespaces/{namespace}/register');

    expect(hadoopMetadata).toMatch(/^file:\/\/.*\/wh\/hadoop\/db\/orders\/metadata\/v2\.metadata\.json$/);
    const registered = await call(base, 'POST', '/v1/lake/namespaces/reads/register', { name: 'orders', 'metadata-location': hadoopMetadata });
    expect(registered.status, stringifyJson(registered.json)).toBe(200);
    expect(registered.json['metadata-location']).toBe(hadoopMetadata);
    expect(registered.json.metadata['current-snapshot-id']).toBe(hadoopSnapshotId);

    const loaded = await call(base, 'GET', '/v1/lake/namespaces/reads/tables/orders');
    expect(loaded.status).toBe(200);
    expect(loaded.json['metadata-location']).toBe(hadoopMetadata);
    expect((await sql.loadTable({ namespace: ['reads'], name: 'orders' })).metadata.currentSnapshotId).toBe(hadoopSnapshotId);

    const files = await readdir(path.join(warehouse, 'hadoop', 'db', 'orders', 'metadata'));
    expect((await call(base, 'DELETE', '/v1/lake/namespaces/reads/tables/orders')).status).toBe(204);
    expect(await readdir(path.join(warehouse, 'hadoop', 'db', 'orders', 'metadata'))).toEqual(files);
    expect((await call(base, 'GET', '/v1/lake/namespaces/reads/tables/orders')).status).toBe(404);
  });

  it('accepts a plain absolute path and stores it as a file: URI', async () => {
    const plain = hadoopMetadata.slice('file://'.length);
    const r = await call(base, 'POST', '/v1/lake/namespaces/reads/register', { name: 'plain', 'metadata-location': plain });
    expect(r.status, stringifyJson(r.json)).toBe(200);
    expect(r.json['metadata-location']).toBe(hadoopMetadata);
  });

  it('refuses metadata outside the warehouse, taken names, missing namespaces, non-metadata and bad bodies', async () => {
    const err = async (body: unknown, ns = 'reads') => {
      const r = await call(base, 'POST', `/v1/lake/namespaces/${ns}/register`, body);
      return { status: r.status, type: r.json?.error?.type, message: String(r.json?.error?.message) };
    };
    const outside = await err({ name: 'x', 'metadata-location': `file://${path.join(dir, 'elsewhere', 'metadata', 'v1.metadata.json')}` });
    expect(outside).toMatchObject({ status: 400, type: 'BadRequestException' });
    expect(outside.message).toMatch(/outside this catalog's warehouse/);
    // `..` cannot climb out of the warehouse, nor can a sibling directory sharing its name as prefix.
    expect(await err({ name: 'x', 'metadata-location': `${warehouse}/../elsewhere/metadata/v1.metadata.json` })).toMatchObject({ status: 400, message: expect.stringMatching(/outside/) });
    expect(await err({ name: 'x', 'metadata-location': `${warehouse}-other/t/metadata/v1.metadata.json` })).toMatchObject({ status: 400, message: expect.stringMatching(/outside/) });
    expect(await err({ name: 'x', 'metadata-location': '/etc/passwd.metadata.json' })).toMatchObject({ status: 400, message: expect.stringMatching(/outside/) });
    expect(await err({ name: 'x', 'metadata-location': 'wh/t/metadata/v1.metadata.json' })).toMatchObject({ status: 400, message: expect.stringMatching(/absolute/) });
    expect(await err({ name: 'x', 'metadata-location': `${warehouse}/hadoop/db/orders/data` })).toMatchObject({ status: 400, message: expect.stringMatching(/metadata\.json/) });
    expect(await err({ name: 'x', 'metadata-location': `${warehouse}/nothing/metadata/v1.metadata.json` })).toMatchObject({ status: 400, message: expect.stringMatching(/no metadata file/) });

    expect((await err({ name: 'taken', 'metadata-location': hadoopMetadata })).status).toBe(200);
    expect(await err({ name: 'taken', 'metadata-location': hadoopMetadata })).toMatchObject({ status: 409, type: 'AlreadyExistsException' });
    expect(await err({ name: 'x', 'metadata-location': hadoopMetadata }, 'nowhere')).toMatchObject({ status: 404, type: 'NoSuchNamespaceException' });
    expect(await err({ 'metadata-location': hadoopMetadata })).toMatchObject({ status: 400, message: expect.stringMatching(/name/) });
    expect(await err({ name: 'x' })).toMatchObject({ status: 400, message: expect.stringMatching(/metadata-location/) });
    expect(await err({ name: 'x', 'metadata-location': hadoopMetadata, overwrite: true })).toMatchObject({ status: 400, message: expect.stringMatching(/overwrite/) });
    expect(await err('{nope')).toMatchObject({ status: 400 });
    expect((await call(base, 'GET', '/v1/lake/namespaces/reads/register')).status).toBe(405);
  });

  it("floe's REST client registers through the endpoint, and says so when a server does not offer it", async () => {
    const client = new RestCatalog({ uri: base });
    try {
      const t = await client.registerTable({ namespace: ['reads'], name: 'by_client' }, hadoopMetadata);
      expect(t.metadataLocation).toBe(hadoopMetadata);
      expect((await client.loadTable({ namespace: ['reads'], name: 'by_client' })).metadata.currentSnapshotId).toBe(hadoopSnapshotId);
      await expectFloeError(client.registerTable({ namespace: ['reads'], name: 'by_client' }, hadoopMetadata), 'already-exists');
      await expectFloeError(client.registerTable({ namespace: ['nowhere'], name: 'x' }, hadoopMetadata), 'not-found');
    } finally {
      await client.close();
    }
    const fs = new FileSystemCatalog({ warehouse: path.join(warehouse, 'hadoop') });
    const fsServer = new RestCatalogServer({ catalog: fs, warehouse: fs.warehouse });
    const fsClient = new RestCatalog({ uri: await fsServer.listen(0) });
    try {
      await expectFloeError(fsClient.registerTable({ namespace: ['db'], name: 'copy' }, hadoopMetadata), 'unsupported');
    } finally {
      await fsClient.close();
      await fsServer.close();
      await fs.close?.();
    }
  });

  it('a served filesystem catalog does not advertise register and answers 406', async () => {
    const fs = new FileSystemCatalog({ warehouse: path.join(warehouse, 'hadoop') });
    const fsServer = new RestCatalogServer({ catalog: fs, warehouse: fs.warehouse });
    const fsBase = await fsServer.listen(0);
    try {
      expect((await call(fsBase, 'GET', '/v1/config')).json.endpoints).not.toContain('POST /v1/{prefix}/namespaces/{namespace}/register');
      const r = await call(fsBase, 'POST', '/v1/namespaces/db/register', { name: 'copy', 'metadata-location': hadoopMetadata });
      expect(r.status).toBe(406);
      expect(r.json.error).toMatchObject({ type: 'UnsupportedOperationException', message: expect.stringMatching(/finds a table by its directory/) });
    } finally {
      await fsServer.close();
      await fs.close?.();
    }
  });
});

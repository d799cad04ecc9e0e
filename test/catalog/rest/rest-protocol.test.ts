/**
 * `floe catalog serve` answering requests shaped exactly like the ones PyIceberg and Trino (Java's
 * RESTSessionCatalog) send — their headers, query parameters, path encodings and JSON bodies — with the
 * spec's response shapes and error model. Requests are raw `fetch` calls, not floe's client, so the
 * server is checked against the wire format rather than against itself.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { RestCatalogServer } from '../../../src/catalog/server/rest-server.js';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { decodeNamespace, encodeNamespace } from '../../../src/catalog/rest/rest-paths.js';
import { parseJson, stringifyJson } from '../../../src/util/json.js';
import { appendSnapshotCommit, testSchema } from '../test-snapshots.js';
import { metadataUpdateToJson, tableRequirementToJson } from '../../../src/iceberg/metadata/metadata-updates-json.js';

const TOKEN = 'trino-and-pyiceberg';

const PYICEBERG_HEADERS = {
  'Content-type': 'application/json',
  'X-Client-Version': '0.10.0',
  'User-Agent': 'PyIceberg/0.10.0',
  'X-Iceberg-Access-Delegation': 'vended-credentials',
  Authorization: `Bearer ${TOKEN}`,
};

const JAVA_HEADERS = {
  'X-Client-Version': 'Apache Iceberg 1.10.0 (commit 2114bf631e49af532d66e2ce148ee49dd1dd1f1f)',
  'X-Client-Git-Commit-Short': '2114bf6',
  'User-Agent': 'Apache-HttpClient/5.4.3 (Java/24.0.1)',
  'Accept-Encoding': 'gzip, x-gzip, deflate',
  Authorization: `Bearer ${TOKEN}`,
};

interface Answer {
  status: number;
  json: any;
  contentType: string | null;
}

describe('floe catalog serve: requests as PyIceberg and Trino send them', () => {
  let dir: string;
  let sql: SqlCatalog;
  let server: RestCatalogServer;
  let base: string;

  const call = async (method: string, pathAndQuery: string, headers: Record<string, string>, body?: unknown): Promise<Answer> => {
    const r = await fetch(base + pathAndQuery, {
      method,
      headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : stringifyJson(body),
    });
    const text = await r.text();
    return { status: r.status, json: text ? parseJson(text) : undefined, contentType: r.headers.get('content-type') };
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'floe-rest-protocol-'));
    sql = new SqlCatalog({ url: `sqlite:${path.join(dir, 'catalog.db')}`, warehouse: path.join(dir, 'wh') });
    server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, token: TOKEN });
    base = await server.listen(0);
    await sql.createNamespace(['db']);
    await sql.createNamespace(['db', 'eu west']);
    const t = await sql.createTable({ namespace: ['db'], name: 'orders' }, { schema: testSchema(), properties: { owner: 'shop' } });
    const c = appendSnapshotCommit(t.metadata);
    await sql.commitTable(t.identifier, c.requirements, c.updates);
    await sql.createTable({ namespace: ['db', 'eu west'], name: 'customers' }, { schema: testSchema() });
  });
  afterAll(async () => {
    await server?.close();
    await sql?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('PyIceberg: config with ?warehouse, list tables, load table (exact longs, config map)', async () => {
    const config = await call('GET', '/v1/config?warehouse=floe', PYICEBERG_HEADERS);
    expect(config.status).toBe(200);
    expect(config.contentType).toBe('application/json');
    expect(config.json.defaults).toEqual({});
    expect(config.json.overrides).toEqual({});
    expect(config.json.endpoints).toEqual(expect.arrayContaining(['GET /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}', 'POST /v1/{prefix}/transactions/commit']));

    const list = await call('GET', '/v1/namespaces/db/tables', PYICEBERG_HEADERS);
    expect(list).toMatchObject({ status: 200, json: { identifiers: [{ namespace: ['db'], name: 'orders' }], 'next-page-token': null } });

    const loaded = await call('GET', '/v1/namespaces/db/tables/orders', PYICEBERG_HEADERS);
    expect(loaded.status).toBe(200);
    const current = await sql.loadTable({ namespace: ['db'], name: 'orders' });
    expect(loaded.json['metadata-location']).toBe(current.metadataLocation);
    expect(loaded.json.config).toEqual({}); // a local table: no S3 settings to hand out
    expect(loaded.json.metadata['format-version']).toBe(2);
    expect(loaded.json.metadata['table-uuid']).toBe(current.metadata.tableUuid);
    // Snapshot ids above 2^53 survive exactly (lossless JSON both ways).
    expect(BigInt(loaded.json.metadata['current-snapshot-id'])).toBe(current.metadata.currentSnapshotId);
    expect(loaded.json.metadata.properties.owner).toBe('shop');

    // Multi-level namespaces: %1F between levels, a space encoded as %20 by PyIceberg.
    const nested = await call('GET', '/v1/namespaces/db%1Feu%20west/tables', PYICEBERG_HEADERS);
    expect(nested.json.identifiers).toEqual([{ namespace: ['db', 'eu west'], name: 'customers' }]);
    const children = await call('GET', `/v1/namespaces?parent=db`, PYICEBERG_HEADERS);
    expect(children.json.namespaces).toEqual([['db', 'eu west']]);
  });

  it('Trino (Java client): config, paged listing, HEAD exists, refs-only load, + for spaces', async () => {
    const config = await call('GET', '/v1/config', JAVA_HEADERS);
    expect(config.status).toBe(200);
    const list = await call('GET', '/v1/namespaces/db/tables?pageToken=', JAVA_HEADERS);
    expect(list.json).toEqual({ identifiers: [{ namespace: ['db'], name: 'orders' }], 'next-page-token': null });
    const ns = await call('GET', '/v1/namespaces?pageToken=', JAVA_HEADERS);
    expect(ns.json.namespaces).toEqual([['db']]);
    expect((await call('HEAD', '/v1/namespaces/db/tables/orders', JAVA_HEADERS)).status).toBe(204);
    expect((await call('HEAD', '/v1/namespaces/db/tables/nope', JAVA_HEADERS)).status).toBe(404);
    expect((await call('HEAD', '/v1/namespaces/db%1Feu+west', JAVA_HEADERS)).status).toBe(204);
    const refs = await call('GET', '/v1/namespaces/db/tables/orders?snapshots=refs', JAVA_HEADERS);
    expect(refs.json.metadata.snapshots).toHaveLength(1);
    const nsLoad = await call('GET', '/v1/namespaces/db', JAVA_HEADERS);
    expect(nsLoad.json).toEqual({ namespace: ['db'], properties: { location: `${sql.warehouse}/db` } });
  });

  it('Trino CREATE TABLE: staged create, then the create transaction committed with assert-create, then an append', async () => {
    const schema = { type: 'struct', 'schema-id': 0, 'identifier-field-ids': [1], fields: [
      { id: 1, name: 'id', required: true, type: 'long' },
      { id: 2, name: 'day', required: false, type: 'date' },
    ] };
    const staged = await call('POST', '/v1/namespaces/db/tables', JAVA_HEADERS, {
      name: 'events',
      schema,
      'partition-spec': { 'spec-id': 0, fields: [{ name: 'day_month', transform: 'month', 'source-id': 2, 'field-id': 1000 }] },
      'write-order': { 'order-id': 0, fields: [] },
      'stage-create': true,
      properties: { 'format-version': '2', 'write.format.default': 'PARQUET' },
    });
    expect(staged.status).toBe(200);
    expect(staged.json['metadata-location']).toBeNull();
    const location = staged.json.metadata.location;
    expect(location).toBe(`${sql.warehouse}/db/events`);
    expect((await call('HEAD', '/v1/namespaces/db/tables/events', JAVA_HEADERS)).status).toBe(404); // nothing created yet

    const uuid = randomUUID();
    const create = await call('POST', '/v1/namespaces/db/tables/events', JAVA_HEADERS, {
      identifier: { namespace: ['db'], name: 'events' },
      requirements: [{ type: 'assert-create' }],
      updates: [
        { action: 'assign-uuid', uuid },
        { action: 'upgrade-format-version', 'format-version': 2 },
        { action: 'add-schema', schema, 'last-column-id': 2 },
        { action: 'set-current-schema', 'schema-id': -1 },
        { action: 'add-spec', spec: { 'spec-id': 0, fields: [{ name: 'day_month', transform: 'month', 'source-id': 2, 'field-id': 1000 }] } },
        { action: 'set-default-spec', 'spec-id': -1 },
        { action: 'add-sort-order', 'sort-order': { 'order-id': 0, fields: [] } },
        { action: 'set-default-sort-order', 'sort-order-id': -1 },
        { action: 'set-location', location },
        { action: 'set-properties', updates: { 'write.format.default': 'PARQUET' } },
      ],
    });
    expect(create.status, JSON.stringify(create.json)).toBe(200);
    expect(create.json['metadata-location']).toMatch(/\/db\/events\/metadata\/00000-.*\.metadata\.json$/);
    expect(create.json.metadata['partition-specs']).toEqual([{ 'spec-id': 0, fields: [{ name: 'day_month', transform: 'month', 'source-id': 2, 'field-id': 1000 }] }]);
    expect(create.json.metadata.properties['write.format.default']).toBe('PARQUET');
    // A second create transaction for the same name fails its assert-create: 409 CommitFailed.
    const again = await call('POST', '/v1/namespaces/db/tables/events', JAVA_HEADERS, { requirements: [{ type: 'assert-create' }], updates: [] });
    expect(again.status).toBe(409);
    expect(again.json.error.type).toBe('CommitFailedException');

    // INSERT: the append commit Java sends (assert-table-uuid + assert-ref-snapshot-id null).
    const table = await sql.loadTable({ namespace: ['db'], name: 'events' });
    const c = appendSnapshotCommit(table.metadata);
    const append = await call('POST', '/v1/namespaces/db/tables/events', JAVA_HEADERS, {
      identifier: { namespace: ['db'], name: 'events' },
      requirements: c.requirements.map(tableRequirementToJson),
      updates: c.updates.map(metadataUpdateToJson),
    });
    expect(append.status).toBe(200);
    expect(BigInt(append.json.metadata['current-snapshot-id'])).toBe(c.snapshot.snapshotId);
    expect(append.json['metadata-location']).toMatch(/\/00001-/);
    // The same commit again: main has moved, 409 CommitFailedException (retryable for the client).
    const stale = await call('POST', '/v1/namespaces/db/tables/events', JAVA_HEADERS, {
      requirements: c.requirements.map(tableRequirementToJson),
      updates: c.updates.map(metadataUpdateToJson),
    });
    expect(stale).toMatchObject({ status: 409, json: { error: { type: 'CommitFailedException', code: 409 } } });
  });

  it('answers errors in the spec ErrorModel with the status codes clients branch on', async () => {
    const err = async (method: string, p: string, body?: unknown, headers: Record<string, string> = JAVA_HEADERS) => {
      const r = await call(method, p, headers, body);
      expect(Object.keys(r.json ?? {})).toEqual(['error']);
      expect(Object.keys(r.json.error).sort()).toEqual(['code', 'message', 'type']);
      expect(r.json.error.code).toBe(r.status);
      return { status: r.status, type: r.json.error.type as string, message: r.json.error.message as string };
    };
    expect(await err('GET', '/v1/namespaces/db/tables/missing')).toMatchObject({ status: 404, type: 'NoSuchTableException' });
    expect(await err('GET', '/v1/namespaces/nowhere/tables/missing')).toMatchObject({ status: 404, type: 'NoSuchNamespaceException' });
    expect(await err('GET', '/v1/namespaces/nowhere')).toMatchObject({ status: 404, type: 'NoSuchNamespaceException' });
    expect(await err('GET', '/v1/namespaces/nowhere/tables')).toMatchObject({ status: 404, type: 'NoSuchNamespaceException' });
    expect(await err('POST', '/v1/namespaces', { namespace: ['db'] })).toMatchObject({ status: 409, type: 'AlreadyExistsException' });
    expect(await err('DELETE', '/v1/namespaces/db')).toMatchObject({ status: 409, type: 'NamespaceNotEmptyException' });
    expect(await err('POST', '/v1/namespaces/db/tables', { name: 'orders', schema: { type: 'struct', fields: [] } })).toMatchObject({ status: 409, type: 'AlreadyExistsException' });
    expect(await err('POST', '/v1/tables/rename', { source: { namespace: ['db'], name: 'ghost' }, destination: { namespace: ['db'], name: 'x' } })).toMatchObject({ status: 404, type: 'NoSuchTableException' });
    expect(await err('POST', '/v1/tables/rename', { source: { namespace: ['db'], name: 'orders' }, destination: { namespace: ['nowhere'], name: 'x' } })).toMatchObject({ status: 404, type: 'NoSuchNamespaceException' });
    // Unknown updates or requirements must be refused with 400 (spec updateTable).
    const unknown = await err('POST', '/v1/namespaces/db/tables/orders', { requirements: [], updates: [{ action: 'add-view-version', 'view-version': {} }] });
    expect(unknown).toMatchObject({ status: 400 });
    expect(unknown.message).toMatch(/add-view-version/);
    expect(await err('POST', '/v1/namespaces/db/tables/orders', { requirements: [{ type: 'assert-view-uuid', uuid: 'x' }], updates: [] })).toMatchObject({ status: 400 });
    expect(await err('POST', '/v1/namespaces/db/tables/orders', '{not json')).toMatchObject({ status: 400 });
    expect(await err('POST', '/v1/namespaces/db/properties', { removals: ['a'], updates: { a: '1' } })).toMatchObject({ status: 422 });
    expect(await err('GET', '/v1/namespaces/db/views')).toMatchObject({ status: 406, type: 'UnsupportedOperationException' });
    expect(await err('GET', '/v1/bogus')).toMatchObject({ status: 404 });
    expect(await err('PUT', '/v1/namespaces')).toMatchObject({ status: 405 });
    const { Authorization: _, ...anonymous } = PYICEBERG_HEADERS;
    expect(await err('GET', '/v1/config', undefined, anonymous)).toMatchObject({ status: 401, type: 'NotAuthorizedException' });
    expect(await err('GET', '/v1/namespaces', undefined, { ...anonymous, Authorization: 'Bearer wrong' })).toMatchObject({ status: 401 });
  });

  it('namespace properties: updated / removed / missing, and pagination with pageSize', async () => {
    const r = await call('POST', '/v1/namespaces/db/properties', JAVA_HEADERS, { removals: ['absent'], updates: { owner: 'analytics' } });
    expect(r).toMatchObject({ status: 200, json: { updated: ['owner'], removed: [], missing: ['absent'] } });
    const r2 = await call('POST', '/v1/namespaces/db/properties', JAVA_HEADERS, { removals: ['owner'] });
    expect(r2.json).toEqual({ updated: [], removed: ['owner'], missing: [] });
    for (const name of ['p1', 'p2', 'p3']) await call('POST', '/v1/namespaces', JAVA_HEADERS, { namespace: [name], properties: {} });
    const pages: string[][][] = [];
    let token = '';
    for (;;) {
      const page = await call('GET', `/v1/namespaces?pageToken=${encodeURIComponent(token)}&pageSize=2`, JAVA_HEADERS);
      pages.push(page.json.namespaces);
      if (page.json['next-page-token'] === null) break;
      token = page.json['next-page-token'];
    }
    expect(pages).toEqual([[['db'], ['p1']], [['p2'], ['p3']]]);
  });

  it('routes under a prefix advertised in overrides, and decodes namespaces as the spec says', async () => {
    const fsDir = await mkdtemp(path.join(os.tmpdir(), 'floe-rest-prefix-'));
    const fs = new FileSystemCatalog({ warehouse: fsDir });
    const prefixed = new RestCatalogServer({ catalog: fs, warehouse: fs.warehouse, prefix: 'warehouses/main' });
    const url = await prefixed.listen(0);
    try {
      const config = (await (await fetch(`${url}/v1/config`)).json()) as any;
      expect(config.overrides).toEqual({ prefix: 'warehouses/main' });
      expect((await fetch(`${url}/v1/warehouses/main/namespaces`, { method: 'POST', body: JSON.stringify({ namespace: ['a'] }) })).status).toBe(200);
      expect((await fetch(`${url}/v1/namespaces`)).status).toBe(404);
      expect(await (await fetch(`${url}/v1/warehouses/main/namespaces`)).json()).toEqual({ namespaces: [['a']], 'next-page-token': null });
    } finally {
      await prefixed.close();
      await rm(fsDir, { recursive: true, force: true });
    }
    expect(encodeNamespace(['a b', 'c+d', 'é'])).toBe('a+b%1Fc%2Bd%1F%C3%A9');
    expect(decodeNamespace('a+b%1Fc%2Bd%1f%C3%A9')).toEqual(['a b', 'c+d', 'é']);
    expect(decodeNamespace('a%2Eb', '%2E')).toEqual(['a', 'b']);
  });
});

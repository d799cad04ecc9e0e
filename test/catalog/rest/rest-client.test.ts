/**
 * floe's REST client against `floe catalog serve`, for what the behaviour suite does not reach:
 * OAuth2 client credentials (refresh before expiry, a fresh token after a server restart, refused
 * credentials), commit outcomes when the server fails (failpoints inside the served catalog: before
 * and after the pointer swap, a hang past the client's timeout, a server that is down), multi-table
 * transactions (atomic over SQL, best effort over the filesystem catalog), and the FileIO of a table
 * on S3 (s3rver) configured from what the server returns, with and without vended credentials.
 */
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemCatalog } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import { RestCatalog } from '../../../src/catalog/rest/rest-catalog.js';
import { ClientCredentials } from '../../../src/catalog/rest/oauth2.js';
import { RestCatalogServer } from '../../../src/catalog/server/rest-server.js';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import { armFailpoint, disarmFailpoints } from '../../../src/util/failpoints.js';
import { startS3rver, type TestS3Server } from '../../support/s3-server.js';
import { expectFloeError } from '../behaviour-suite.js';
import { appendSnapshotCommit, testSchema } from '../test-snapshots.js';
import { tempDir } from '../../support/temp-dir.js';

describe('REST client: OAuth2 client credentials', () => {
  let dir: string;
  let sql: SqlCatalog;
  let clock = 1_000_000;
  const now = () => clock;
  const clients = [{ clientId: 'etl', clientSecret: 'pa55' }];

  beforeAll(async () => {
    dir = await tempDir('rest-oauth');
    sql = new SqlCatalog({ url: `sqlite:${path.join(dir, 'c.db')}`, warehouse: path.join(dir, 'wh') });
  });
  afterAll(async () => {
    await sql.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('fetches a token, refreshes it before it expires, and fetches a new one after a server restart (401)', async () => {
    let server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, clients, tokenLifetimeSeconds: 600, now });
    const url = await server.listen(0);
    const port = Number(new URL(url).port);
    const client = new RestCatalog({ uri: url, credential: 'etl:pa55', now });
    const auth = client.auth as ClientCredentials;
    try {
      await client.createNamespace(['o']);
      expect(auth.fetchCount).toBe(1);
      clock += 200_000; // 200 s of 600: still fresh
      expect(await client.namespaceExists(['o'])).toBe(true);
      expect(auth.fetchCount).toBe(1);
      clock += 250_000; // 450 s: within 5 minutes of expiry, refreshed before use
      expect(await client.listNamespaces()).toEqual([['o']]);
      expect(auth.fetchCount).toBe(2);
      // The old token would now be refused by the server once expired; the new one works.
      clock += 400_000;
      expect(await client.listNamespaces()).toEqual([['o']]);
      // A restarted server has forgotten every issued token: the client gets 401, fetches, retries.
      await server.close();
      server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, clients, tokenLifetimeSeconds: 600, now });
      await server.listen(port);
      const before = auth.fetchCount;
      expect(await client.listNamespaces()).toEqual([['o']]);
      expect(auth.fetchCount).toBe(before + 1);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('reports refused credentials as a config error without the secret, and unauthenticated calls as 401', async () => {
    const server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, clients });
    const url = await server.listen(0);
    try {
      const wrong = new RestCatalog({ uri: url, credential: 'etl:not-the-secret' });
      const e = await expectFloeError(wrong.listNamespaces(), 'config');
      expect(e.message).toMatch(/invalid_client/);
      expect(e.message).not.toMatch(/not-the-secret/);
      const anonymous = new RestCatalog({ uri: url });
      const e2 = await expectFloeError(anonymous.listNamespaces(), 'config');
      expect(e2.message).toMatch(/401/);
      // The token endpoint also accepts HTTP Basic client authentication (RFC 6749 §2.3.1).
      const basic = await fetch(`${url}/v1/oauth/tokens`, {
        method: 'POST',
        headers: { Authorization: `Basic ${Buffer.from('etl:pa55').toString('base64')}`, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=client_credentials&scope=catalog',
      });
      const token = (await basic.json()) as { access_token: string; token_type: string; expires_in: number };
      expect(token.token_type).toBe('bearer');
      expect((await fetch(`${url}/v1/namespaces`, { headers: { Authorization: `Bearer ${token.access_token}` } })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});

describe('REST client: commit outcomes when the server fails', () => {
  let dir: string;
  let sql: SqlCatalog;
  let server: RestCatalogServer;
  let client: RestCatalog;

  beforeAll(async () => {
    dir = await tempDir('rest-failures');
    sql = new SqlCatalog({ url: `sqlite:${path.join(dir, 'c.db')}`, warehouse: path.join(dir, 'wh') });
    server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse });
    client = new RestCatalog({ uri: await server.listen(0), timeoutMs: 1500 });
    await client.createNamespace(['f']);
  });
  afterEach(() => disarmFailpoints());
  afterAll(async () => {
    await client.close();
    await server.close();
    await sql.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('a 5xx before or after the swap is commit-state-unknown; reloading tells which', async () => {
    const id = { namespace: ['f'], name: 'five' };
    const t = await client.createTable(id, { schema: testSchema() });

    armFailpoint('after-metadata-file'); // the served catalog fails before the swap
    const c1 = appendSnapshotCommit(t.metadata);
    const before = await expectFloeError(client.commitTable(id, c1.requirements, c1.updates), 'commit-state-unknown');
    expect(before.message).toMatch(/500/);
    expect(before.retryable).toBe(false);
    expect((await client.loadTable(id)).metadata.currentSnapshotId).toBeUndefined(); // did not land

    armFailpoint('after-catalog-swap'); // fails after the swap: landed, but the client cannot know
    const c2 = appendSnapshotCommit(t.metadata);
    await expectFloeError(client.commitTable(id, c2.requirements, c2.updates), 'commit-state-unknown');
    expect((await client.loadTable(id)).metadata.currentSnapshotId).toBe(c2.snapshot.snapshotId); // landed
  });

  it('a response that never comes is commit-state-unknown; a refused connection is a retryable io error', async () => {
    const id = { namespace: ['f'], name: 'hang' };
    const t = await client.createTable(id, { schema: testSchema() });
    armFailpoint('after-metadata-file', { action: 'hang' });
    const c = appendSnapshotCommit(t.metadata);
    const e = await expectFloeError(client.commitTable(id, c.requirements, c.updates), 'commit-state-unknown');
    expect(e.message).toMatch(/may have been sent/);

    const closed = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse });
    const url = await closed.listen(0);
    const down = new RestCatalog({ uri: url });
    await down.initialize();
    await closed.close();
    const refused = await expectFloeError(down.commitTable(id, c.requirements, c.updates), 'io');
    expect(refused.retryable).toBe(true);
    expect(refused.message).toMatch(/ECONNREFUSED/);
  });
});

describe('REST client: multi-table transactions', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await tempDir('rest-tx');
  });
  afterEach(() => disarmFailpoints());
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Tables t.a and t.b, each with the commit of an append planned on its current metadata. */
  async function twoTablesWithCommits(client: RestCatalog) {
    await client.createNamespace(['t']);
    const a = await client.createTable({ namespace: ['t'], name: 'a' }, { schema: testSchema() });
    const b = await client.createTable({ namespace: ['t'], name: 'b' }, { schema: testSchema() });
    return { a, b, ca: appendSnapshotCommit(a.metadata), cb: appendSnapshotCommit(b.metadata) };
  }

  it('are atomic over the SQL catalog: a conflict on one table changes none', async () => {
    const sql = new SqlCatalog({ url: `sqlite:${path.join(dir, 'tx.db')}`, warehouse: path.join(dir, 'sqlwh') });
    const server = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse });
    const client = new RestCatalog({ uri: await server.listen(0) });
    try {
      const { a, b, ca, cb } = await twoTablesWithCommits(client);
      const [a1, b1] = await client.commitTransaction([
        { identifier: a.identifier, requirements: ca.requirements, updates: ca.updates },
        { identifier: b.identifier, requirements: cb.requirements, updates: cb.updates },
      ]);
      expect(a1!.metadata.currentSnapshotId).toBe(ca.snapshot.snapshotId);
      expect(b1!.metadata.currentSnapshotId).toBe(cb.snapshot.snapshotId);
      const ca2 = appendSnapshotCommit(a1!.metadata);
      const staleB = appendSnapshotCommit(b.metadata); // based on b before its first commit
      const e = await expectFloeError(
        client.commitTransaction([
          { identifier: a.identifier, requirements: ca2.requirements, updates: ca2.updates },
          { identifier: b.identifier, requirements: staleB.requirements, updates: staleB.updates },
        ]),
        'commit-conflict',
      );
      expect(e.retryable).toBe(true);
      expect((await client.loadTable(a.identifier)).metadata.currentSnapshotId).toBe(ca.snapshot.snapshotId);
    } finally {
      await client.close();
      await server.close();
      await sql.close();
    }
  });

  it('are best effort over the filesystem catalog: checked up front, and a failure after a landed table is commit-state-unknown', async () => {
    const fs = new FileSystemCatalog({ warehouse: path.join(dir, 'fswh') });
    const server = new RestCatalogServer({ catalog: fs, warehouse: fs.warehouse });
    const client = new RestCatalog({ uri: await server.listen(0) });
    try {
      const { a, b, ca, cb } = await twoTablesWithCommits(client);
      await client.commitTable(b.identifier, cb.requirements, cb.updates);
      // b is stale in this transaction: refused before a is touched.
      await expectFloeError(
        client.commitTransaction([
          { identifier: a.identifier, requirements: ca.requirements, updates: ca.updates },
          { identifier: b.identifier, requirements: cb.requirements, updates: cb.updates },
        ]),
        'commit-conflict',
      );
      expect((await client.loadTable(a.identifier)).metadata.currentSnapshotId).toBeUndefined();
      // A failure in the middle: a lands, b fails → 500, unknown to the client; reload shows a landed.
      const b1 = await client.loadTable(b.identifier);
      const cb2 = appendSnapshotCommit(b1.metadata);
      // The served catalog fails its second commit (injected at the catalog, like a full disk).
      let calls = 0;
      const original = fs.commitTable.bind(fs);
      fs.commitTable = async (...args) => {
        if (++calls === 2) throw new Error('disk full (injected)');
        return original(...args);
      };
      const e = await expectFloeError(
        client.commitTransaction([
          { identifier: a.identifier, requirements: ca.requirements, updates: ca.updates },
          { identifier: b.identifier, requirements: cb2.requirements, updates: cb2.updates },
        ]),
        'commit-state-unknown',
      );
      expect(e.message).toMatch(/partially committed: t\.a landed/);
      expect((await client.loadTable(a.identifier)).metadata.currentSnapshotId).toBe(ca.snapshot.snapshotId);
      expect((await client.loadTable(b.identifier)).metadata.currentSnapshotId).toBe(b1.metadata.currentSnapshotId);
    } finally {
      await client.close();
      await server.close();
      await fs.close();
    }
  });
});

describe('REST client: table files on S3 (s3rver) configured from the server', () => {
  let s3: TestS3Server;
  let dir: string;
  beforeAll(async () => {
    s3 = await startS3rver();
    dir = await tempDir('rest-s3');
  });
  afterAll(async () => {
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('/v1/config and LoadTableResult.config carry endpoint, path style and region; credentials only when vending is on and the request asks', async () => {
    const storage = { s3: s3.config };
    const sql = new SqlCatalog({ url: `sqlite:${path.join(dir, 'c.db')}`, warehouse: `s3://${s3.bucket}/wh`, storage });
    const plain = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, storage });
    const vending = new RestCatalogServer({ catalog: sql, warehouse: sql.warehouse, storage, vendCredentials: true, advertisedS3Endpoint: s3.config.endpoint });
    const plainUrl = await plain.listen(0);
    const vendingUrl = await vending.listen(0);
    try {
      await sql.createNamespace(['s3']);
      const t = await sql.createTable({ namespace: ['s3'], name: 't' }, { schema: testSchema() });
      expect(t.metadataLocation).toMatch(new RegExp(`^s3://${s3.bucket}/wh/s3/t/metadata/00000-`));

      const raw = (await (await fetch(`${plainUrl}/v1/namespaces/s3/tables/t`)).json()) as any;
      expect(raw.config).toEqual({ 's3.endpoint': s3.config.endpoint, 's3.path-style-access': 'true', 'client.region': 'us-east-1', 's3.region': 'us-east-1' });
      expect(raw['storage-credentials']).toBeUndefined();

      // Without vending, floe's client brings its own keys; endpoint and path style come from the server.
      const withKeys = new RestCatalog({ uri: plainUrl, storage: { s3: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } } });
      const loaded = await withKeys.loadTable(t.identifier);
      expect(await loaded.io.exists(loaded.metadataLocation)).toBe(true);
      await withKeys.close();

      // /v1/config hands every client the same non-secret settings, before it loads any table
      const config = (await (await fetch(`${vendingUrl}/v1/config`)).json()) as any;
      expect(config.defaults).toEqual({ 's3.endpoint': s3.config.endpoint, 's3.path-style-access': 'true', 'client.region': 'us-east-1', 's3.region': 'us-east-1' });

      // Credentials only to a request that asks for them (REST spec: X-Iceberg-Access-Delegation), even with vending on.
      const unasked = (await (await fetch(`${vendingUrl}/v1/namespaces/s3/tables/t`)).json()) as any;
      expect(unasked.config).toEqual(raw.config);
      expect(unasked['storage-credentials']).toBeUndefined();
      const notVending = (await (await fetch(`${plainUrl}/v1/namespaces/s3/tables/t`, { headers: { 'X-Iceberg-Access-Delegation': 'vended-credentials' } })).json()) as any;
      expect(notVending.config).toEqual(raw.config);
      const vended = (await (await fetch(`${vendingUrl}/v1/namespaces/s3/tables/t`, { headers: { 'X-Iceberg-Access-Delegation': 'remote-signing, vended-credentials' } })).json()) as any;
      expect(vended.config['s3.access-key-id']).toBe('S3RVER');
      expect(vended['storage-credentials']).toEqual([{ prefix: `s3://${s3.bucket}/wh/s3/t`, config: { 's3.access-key-id': 'S3RVER', 's3.secret-access-key': 'S3RVER' } }]);
      // With vending, a client with no storage settings at all reads and writes the table's files.
      const bare = new RestCatalog({ uri: vendingUrl });
      const viaVended = await bare.loadTable(t.identifier);
      expect(await viaVended.io.exists(viaVended.metadataLocation)).toBe(true);
      const c = appendSnapshotCommit(viaVended.metadata);
      const committed = await bare.commitTable(t.identifier, c.requirements, c.updates);
      expect(await committed.io.exists(committed.metadataLocation)).toBe(true);
      await bare.close();
    } finally {
      await plain.close();
      await vending.close();
      await sql.close();
    }
  });
});

/**
 * What is specific to the SQL catalog, beyond the shared behaviour suite: the rows and files exactly
 * as Java's JdbcCatalog writes them, reading a catalog PyIceberg wrote (V0 layout, upgraded in place),
 * the compare-and-swap against a pointer moved by another engine, lost connections around the swap
 * (injected at the driver seam, and a real backend kill on PostgreSQL), atomic multi-table commits,
 * purge by reachable files, case-sensitive names on MariaDB, and the connection URL forms.
 */
import { copyFile, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlCatalog } from '../../../src/catalog/sql/sql-catalog.js';
import type { SqlDriver, SqlExecutor, SqlParam } from '../../../src/catalog/sql/sql-driver.js';
import { splitSqlStatements, readDdl } from '../../../src/catalog/sql/sql-schema.js';
import { SQL } from '../../../src/catalog/sql/sql-statements.js';
import { openSqlDriver, redactSqlUrl } from '../../../src/catalog/sql/sql-url.js';
import { parseMetadataVersion } from '../../../src/catalog/sql/metadata-files.js';
import { toPostgresPlaceholders } from '../../../src/catalog/sql/postgres-driver.js';
import { expectFloeError } from '../behaviour-suite.js';
import { appendSnapshotCommit, testSchema } from '../test-snapshots.js';
import { freshMariaDbDatabase, freshPostgresSchema, freshSqliteFile, postgresStatus } from './sql-test-databases.js';
import { GOLDEN_DIR, goldenAvailable } from '../../support/golden.js';
import { tempDir } from '../../support/temp-dir.js';

const GOLDEN = GOLDEN_DIR;
const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';

/** A driver that delegates to a real one and can fail the next metadata-pointer swap. */
class FlakyDriver implements SqlDriver {
  mode: 'none' | 'lost-after-sending' | 'lost-before-sending' | 'before-swap' = 'none';
  beforeSwap: (() => Promise<void>) | undefined;
  constructor(readonly inner: SqlDriver) {}
  get dialect() {
    return this.inner.dialect;
  }
  get description() {
    return this.inner.description;
  }
  async execute(sql: string, params?: readonly SqlParam[]) {
    if (sql === SQL.commitTable && this.mode !== 'none') {
      const mode = this.mode;
      this.mode = 'none';
      if (mode === 'before-swap') {
        await this.beforeSwap!();
        return this.inner.execute(sql, params);
      }
      if (mode === 'lost-after-sending') await this.inner.execute(sql, params);
      throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET', injected: true });
    }
    return this.inner.execute(sql, params);
  }
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>) {
    return this.inner.transaction(fn);
  }
  isUniqueViolation(e: unknown) {
    return this.inner.isUniqueViolation(e);
  }
  isConnectionLoss(e: unknown) {
    return (e as { injected?: boolean })?.injected === true || this.inner.isConnectionLoss(e);
  }
  columnExists(t: string, c: string) {
    return this.inner.columnExists(t, c);
  }
  close() {
    return this.inner.close();
  }
}

describe('sql catalog on SQLite: rows and files as Java writes them', () => {
  let db: Awaited<ReturnType<typeof freshSqliteFile>>;
  let warehouse: string;
  let catalog: SqlCatalog;
  const rows = (sql: string) => {
    const raw = new Database(db.url.slice('sqlite:'.length), { readonly: true });
    try {
      return raw.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      raw.close();
    }
  };

  beforeAll(async () => {
    db = await freshSqliteFile();
    warehouse = await tempDir('sql-wh');
    catalog = new SqlCatalog({ url: db.url, warehouse, name: 'lake' });
  });
  afterAll(async () => {
    await catalog.close();
    await db.dispose();
    await rm(warehouse, { recursive: true, force: true });
  });

  it('creates the JdbcCatalog tables from catalog/sql/sqlite.sql, with the V1 iceberg_type column', async () => {
    await catalog.initialize();
    const columns = (table: string) => rows(`SELECT name FROM pragma_table_info('${table}')`).map((r) => r.name);
    expect(columns('iceberg_tables')).toEqual(['catalog_name', 'table_namespace', 'table_name', 'metadata_location', 'previous_metadata_location', 'iceberg_type']);
    expect(columns('iceberg_namespace_properties')).toEqual(['catalog_name', 'namespace', 'property_key', 'property_value']);
    // The shipped DDL files hold exactly two statements each.
    for (const dialect of ['postgresql', 'mysql', 'sqlite'] as const) {
      const statements = await readDdl(dialect);
      expect(statements.map((s) => /CREATE TABLE IF NOT EXISTS (\w+)/.exec(s)?.[1])).toEqual(['iceberg_tables', 'iceberg_namespace_properties']);
    }
  });

  it('stores namespaces with the exists=true row, tables as TABLE rows, metadata as <NNNNN>-<uuid>.metadata.json', async () => {
    await catalog.createNamespace(['db', 'eu'], { owner: 'ops' });
    expect(rows("SELECT * FROM iceberg_namespace_properties ORDER BY property_key")).toEqual([
      { catalog_name: 'lake', namespace: 'db.eu', property_key: 'exists', property_value: 'true' },
      { catalog_name: 'lake', namespace: 'db.eu', property_key: 'owner', property_value: 'ops' },
    ]);
    const id = { namespace: ['db', 'eu'], name: 'orders' };
    const created = await catalog.createTable(id, { schema: testSchema(), formatVersion: 3 });
    expect(created.metadata.location).toBe(`file://${warehouse}/db/eu/orders`);
    expect(created.metadataLocation).toMatch(new RegExp(`^file://${warehouse}/db/eu/orders/metadata/00000-${UUID}\\.metadata\\.json$`));
    expect(rows('SELECT * FROM iceberg_tables')).toEqual([
      { catalog_name: 'lake', table_namespace: 'db.eu', table_name: 'orders', metadata_location: created.metadataLocation, previous_metadata_location: null, iceberg_type: 'TABLE' },
    ]);
    const c = appendSnapshotCommit(created.metadata);
    const after = await catalog.commitTable(id, c.requirements, c.updates);
    expect(parseMetadataVersion(after.metadataLocation)).toBe(1);
    expect(rows('SELECT metadata_location, previous_metadata_location FROM iceberg_tables')).toEqual([
      { metadata_location: after.metadataLocation, previous_metadata_location: created.metadataLocation },
    ]);
    expect((await readdir(path.join(warehouse, 'db/eu/orders/metadata'))).sort()).toEqual(
      [created.metadataLocation, after.metadataLocation].map((l) => path.basename(l)).sort(),
    );
    // Parents of a created namespace exist implicitly (Java JdbcCatalog.listNamespaces).
    expect(await catalog.listNamespaces()).toEqual([['db']]);
    expect(await catalog.namespaceExists(['db'])).toBe(true);
    expect(await catalog.loadNamespaceProperties(['db', 'eu'])).toEqual({ owner: 'ops', location: `file://${warehouse}/db/eu` });
    await expectFloeError(catalog.createNamespace(['a.b']), 'invalid-argument');
    await expectFloeError(catalog.updateNamespaceProperties(['db', 'eu'], [], { exists: 'false' }), 'invalid-argument');
  });

  it('refuses a stale commit after another engine moved the pointer, and re-applies requirement-free updates on top of it', async () => {
    await catalog.createNamespace(['cas']);
    const id = { namespace: ['cas'], name: 't' };
    const t = await catalog.createTable(id, { schema: testSchema() });
    // "Another engine" commits: writes its own metadata file and swaps the row.
    const other = new SqlCatalog({ url: db.url, warehouse, name: 'lake' });
    const c1 = appendSnapshotCommit(t.metadata);
    const moved = await other.commitTable(id, c1.requirements, c1.updates);
    await other.close();
    const stale = appendSnapshotCommit(t.metadata);
    const conflict = await expectFloeError(catalog.commitTable(id, stale.requirements, stale.updates), 'commit-conflict');
    expect(conflict.retryable).toBe(true);
    // Nothing was left behind by the refused attempt (it failed before writing).
    expect(await readdir(path.join(warehouse, 'cas/t/metadata'))).toHaveLength(2);
    const props = await catalog.commitTable(id, [], [{ action: 'set-properties', updates: { k: 'v' } }]);
    expect(props.metadata.currentSnapshotId).toBe(c1.snapshot.snapshotId);
    expect(props.metadata.metadataLog.map((e) => e.metadataFile)).toEqual([t.metadataLocation, moved.metadataLocation]);
  });

  it('atomic multi-table commits: all land, or none when one table conflicts', async () => {
    await catalog.createNamespace(['tx']);
    const a = await catalog.createTable({ namespace: ['tx'], name: 'a' }, { schema: testSchema() });
    const b = await catalog.createTable({ namespace: ['tx'], name: 'b' }, { schema: testSchema() });
    const ca = appendSnapshotCommit(a.metadata);
    const cb = appendSnapshotCommit(b.metadata);
    const [a1, b1] = await catalog.commitTransaction([
      { identifier: a.identifier, requirements: ca.requirements, updates: ca.updates },
      { identifier: b.identifier, requirements: cb.requirements, updates: cb.updates },
    ]);
    expect(a1!.metadata.currentSnapshotId).toBe(ca.snapshot.snapshotId);
    expect(b1!.metadata.currentSnapshotId).toBe(cb.snapshot.snapshotId);

    // b moved since the transaction's base: nothing may change, in preparation or at the swap.
    const flaky = new FlakyDriver(openSqlDriver(db.url));
    const txCatalog = new SqlCatalog({ driver: flaky, warehouse, name: 'lake' });
    const ca2 = appendSnapshotCommit(a1!.metadata);
    const cb2 = appendSnapshotCommit(b1!.metadata);
    const sneaky = appendSnapshotCommit(b1!.metadata);
    await catalog.commitTable(b.identifier, sneaky.requirements, sneaky.updates);
    const filesBefore = await readdir(path.join(warehouse, 'tx/a/metadata'));
    // Refused while preparing (b's sequence number is stale): a's written file is removed again.
    await expectFloeError(
      txCatalog.commitTransaction([
        { identifier: a.identifier, requirements: ca2.requirements, updates: ca2.updates },
        { identifier: b.identifier, requirements: [{ type: 'assert-table-uuid', uuid: b.metadata.tableUuid }], updates: cb2.updates.slice(0, 1) },
      ]),
      'commit-conflict',
    );
    expect((await catalog.loadTable(a.identifier)).metadata.currentSnapshotId).toBe(ca.snapshot.snapshotId);
    expect(await readdir(path.join(warehouse, 'tx/a/metadata'))).toEqual(filesBefore);
    await expectFloeError(
      txCatalog.commitTransaction([
        { identifier: a.identifier, requirements: ca2.requirements, updates: ca2.updates },
        { identifier: b.identifier, requirements: cb2.requirements, updates: cb2.updates },
      ]),
      'commit-conflict',
    );
    expect((await catalog.loadTable(a.identifier)).metadata.currentSnapshotId).toBe(ca.snapshot.snapshotId);
    expect((await catalog.loadTable(b.identifier)).metadata.currentSnapshotId).toBe(sneaky.snapshot.snapshotId);
    expect(await readdir(path.join(warehouse, 'tx/a/metadata'))).toEqual(filesBefore);
    await txCatalog.close();
  });

  it('a connection lost after the swap was sent: landed if the row says so, else commit-state-unknown with the file kept', async () => {
    const flaky = new FlakyDriver(openSqlDriver(db.url));
    const c = new SqlCatalog({ driver: flaky, warehouse, name: 'lake' });
    await c.createNamespace(['lost']);
    const id = { namespace: ['lost'], name: 't' };
    const t = await c.createTable(id, { schema: testSchema() });
    flaky.mode = 'lost-after-sending';
    const c1 = appendSnapshotCommit(t.metadata);
    const landed = await c.commitTable(id, c1.requirements, c1.updates);
    expect(landed.metadata.currentSnapshotId).toBe(c1.snapshot.snapshotId);
    expect((await c.loadTable(id)).metadataLocation).toBe(landed.metadataLocation);

    flaky.mode = 'lost-before-sending';
    const c2 = appendSnapshotCommit(landed.metadata);
    const unknown = await expectFloeError(c.commitTable(id, c2.requirements, c2.updates), 'commit-state-unknown');
    expect(unknown.retryable).toBe(false);
    expect(unknown.message).toMatch(/do not delete its files/);
    // The written metadata file is kept: it might be referenced.
    const files = await readdir(path.join(warehouse, 'lost/t/metadata'));
    expect(files.filter((f) => f.startsWith('00002-'))).toHaveLength(1);
    expect((await c.loadTable(id)).metadataLocation).toBe(landed.metadataLocation);
    await c.close();
  });

  it('purges the files the metadata reaches and keeps a same-directory table created after a rename', async () => {
    await catalog.createNamespace(['purge']);
    const t = { namespace: ['purge'], name: 't' };
    const created = await catalog.createTable(t, { schema: testSchema() });
    const c = appendSnapshotCommit(created.metadata);
    const committed = await catalog.commitTable(t, c.requirements, c.updates);
    const u = { namespace: ['purge'], name: 'u' };
    await catalog.renameTable(t, u);
    const again = await catalog.createTable(t, { schema: testSchema() }); // same default directory
    expect(again.metadata.location).toBe(created.metadata.location);
    const stray = path.join(warehouse, 'purge/t/data/not-in-any-metadata.parquet');
    await rm(path.dirname(stray), { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(path.dirname(stray), { recursive: true }));
    await writeFile(stray, 'x');
    await catalog.dropTable(u, true);
    expect(await committed.io.exists(committed.metadataLocation)).toBe(false);
    expect(await committed.io.exists(created.metadataLocation)).toBe(false);
    expect(await again.io.exists(again.metadataLocation)).toBe(true);
    expect((await catalog.loadTable(t)).metadata.tableUuid).toBe(again.metadata.tableUuid);
    expect(await readdir(path.dirname(stray))).toEqual(['not-in-any-metadata.parquet']);
  });
});

describe('sql catalog: a catalog written by PyIceberg (V0 layout, relative paths)', () => {
  it.skipIf(!goldenAvailable)('is upgraded in place with iceberg_type and its table loads, lists and commits', async () => {
    const dir = await tempDir('pyiceberg-catalog');
    try {
      const file = path.join(dir, 'pyiceberg_catalog.db');
      await copyFile(path.join(GOLDEN, 'data/persistent/add_columns_with_defaults/pyiceberg_catalog.db'), file);
      const catalog = new SqlCatalog({ url: `sqlite:${file}`, warehouse: dir, name: 'default', storage: { local: { baseDir: GOLDEN } } });
      expect(await catalog.listNamespaces()).toEqual([['default']]);
      const id = { namespace: ['default'], name: 'add_columns_with_defaults' };
      expect(await catalog.listTables(['default'])).toEqual([id]);
      const t = await catalog.loadTable(id);
      expect(t.metadataLocation).toBe('data/persistent/add_columns_with_defaults/default.db/add_columns_with_defaults/metadata/00003-3f1801a5-7dfb-4072-b14a-39cd12f9279b.metadata.json');
      expect(t.metadata.snapshots.length).toBeGreaterThan(0);
      const raw = new Database(file, { readonly: true });
      const types = raw.prepare('SELECT iceberg_type FROM iceberg_tables').all();
      raw.close();
      expect(types).toEqual([{ iceberg_type: null }]); // column added; PyIceberg's row stays a table
      await catalog.close();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('sql catalog on the harness MariaDB: names are case-sensitive (binary collation)', () => {
  it('keeps Orders and orders apart, and namespace prefixes exact', async () => {
    const db = await freshMariaDbDatabase();
    const warehouse = await tempDir('sql-mariadb-wh');
    const catalog = new SqlCatalog({ url: db.url, warehouse });
    try {
      await catalog.createNamespace(['Sales']);
      await catalog.createNamespace(['sales']);
      await catalog.createNamespace(['sales_x']);
      await catalog.createTable({ namespace: ['sales'], name: 'Orders' }, { schema: testSchema() });
      await catalog.createTable({ namespace: ['sales'], name: 'orders' }, { schema: testSchema() });
      expect((await catalog.listTables(['sales'])).map((t) => t.name)).toEqual(['Orders', 'orders']);
      expect(await catalog.listTables(['Sales'])).toEqual([]);
      expect(await catalog.listNamespaces()).toEqual([['Sales'], ['sales'], ['sales_x']]);
      await catalog.dropNamespace(['Sales']);
      expect(await catalog.namespaceExists(['sales'])).toBe(true);
    } finally {
      await catalog.close();
      await db.dispose();
      await rm(warehouse, { recursive: true, force: true });
    }
  });
});

const pgStatus = await postgresStatus();
describe.skipIf(!pgStatus.available)(`sql catalog on PostgreSQL: the backend killed during the swap${pgStatus.available ? '' : ` — skipped: ${pgStatus.reason}`}`, () => {
  it('reports commit-state-unknown (never a plain failure or a conflict) and leaves the table at its old version', async () => {
    const db = await freshPostgresSchema();
    const warehouse = await tempDir('sql-pg-wh');
    const flaky = new FlakyDriver(openSqlDriver(db.url));
    const catalog = new SqlCatalog({ driver: flaky, warehouse, name: 'kill' });
    const adminOptions = { connectionString: db.url.replace(/[?&]currentSchema=([^&]+)/, ''), options: `-c search_path=${/currentSchema=([^&]+)/.exec(db.url)![1]}` };
    // Two sessions: `admin` holds the row lock inside a transaction; `watcher` polls pg_stat_activity
    // in autocommit. Polling inside the locking transaction would not work: PostgreSQL keeps one
    // statistics snapshot per transaction once pg_stat_activity is read in it (docs: "Statistics
    // Functions", pg_stat_clear_snapshot), so a first poll made before floe's UPDATE arrives would
    // never see it and the test would hang.
    const admin = new pg.Client(adminOptions);
    const watcher = new pg.Client(adminOptions);
    await admin.connect();
    await watcher.connect();
    let killer: Promise<void> | undefined;
    try {
      await catalog.createNamespace(['k']);
      const id = { namespace: ['k'], name: 't' };
      const t = await catalog.createTable(id, { schema: testSchema() });
      flaky.mode = 'before-swap';
      flaky.beforeSwap = async () => {
        // Another session holds the row lock, so floe's UPDATE is sent and then waits; the killer
        // terminates floe's backend while it waits — a connection lost after sending, for real.
        await admin.query('BEGIN');
        await admin.query("SELECT metadata_location FROM iceberg_tables WHERE catalog_name = 'kill' FOR UPDATE");
        const adminPid = (await admin.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
        killer = (async () => {
          const deadline = Date.now() + 30_000;
          try {
            for (;;) {
              const waiting = await watcher.query("SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE 'UPDATE iceberg_tables SET metadata_location%'", [adminPid]);
              if (waiting.rows.length > 0) {
                await watcher.query('SELECT pg_terminate_backend($1)', [waiting.rows[0].pid]);
                return;
              }
              if (Date.now() > deadline) throw new Error("backend-kill test: floe's UPDATE iceberg_tables never showed up waiting on the admin session's row lock within 30 s");
              await new Promise((r) => setTimeout(r, 20));
            }
          } finally {
            // Releasing the lock also unblocks floe's UPDATE when the killer gave up, so the
            // commit below returns (and the test fails on its assertion) instead of hanging.
            await admin.query('ROLLBACK');
          }
        })();
      };
      const c = appendSnapshotCommit(t.metadata);
      const unknown = await expectFloeError(catalog.commitTable(id, c.requirements, c.updates), 'commit-state-unknown');
      await killer;
      expect(unknown.retryable).toBe(false);
      expect((await catalog.loadTable(id)).metadataLocation).toBe(t.metadataLocation);
      // The metadata file written for the attempt is kept: 00000 (create) and 00001 (the attempt).
      expect((await readdir(path.join(warehouse, 'k/t/metadata'))).map((f) => f.slice(0, 5)).sort()).toEqual(['00000', '00001']);
    } finally {
      await killer?.catch(() => {});
      await admin.end().catch(() => {});
      await watcher.end().catch(() => {});
      await catalog.close().catch(() => {});
      await db.dispose();
      await rm(warehouse, { recursive: true, force: true });
    }
  });
});

describe('sql catalog URLs and statements', () => {
  it('parses URL forms and redacts passwords', async () => {
    expect(redactSqlUrl('postgresql://u:secret@h:5432/db')).toBe('postgresql://u:***@h:5432/db');
    expect(redactSqlUrl('jdbc:mysql://h/db?user=u&password=secret')).toBe('jdbc:mysql://h/db?user=u&password=***');
    const pgDriver = openSqlDriver('jdbc:postgresql://u:p%40ss@db.example:6543/lake?currentSchema=floe');
    expect(pgDriver.dialect).toBe('postgresql');
    expect(pgDriver.description).toBe('postgresql://db.example:6543/lake (schema floe)');
    await pgDriver.close();
    const my = openSqlDriver('mariadb://u:p@h/cat');
    expect(my.description).toBe('mysql://h:3306/cat');
    await my.close();
    const dir = await tempDir('sqlite-url');
    const lite = openSqlDriver('sqlite:rel/../catalog.db', { baseDir: dir });
    expect(lite.description).toBe(`sqlite:${path.join(dir, 'catalog.db')}`);
    await lite.close();
    await rm(dir, { recursive: true, force: true });
    expect(() => openSqlDriver('mysql://h:3306/')).toThrow(/no database name/);
    expect(() => openSqlDriver('oracle://u:secret@h/db')).toThrow(/unsupported scheme oracle:/);
    expect(() => openSqlDriver('oracle://u:secret@h/db')).not.toThrow(/secret/);
  });

  it('rewrites placeholders for PostgreSQL outside quotes, and splits DDL files at line-ending semicolons', () => {
    expect(toPostgresPlaceholders("SELECT ? WHERE a = '?' AND b LIKE ? ESCAPE '!'")).toBe("SELECT $1 WHERE a = '?' AND b LIKE $2 ESCAPE '!'");
    expect(splitSqlStatements('-- comment; not a statement\nCREATE TABLE a (x INT);\n\nCREATE TABLE b (y INT);\n')).toEqual(['CREATE TABLE a (x INT)', 'CREATE TABLE b (y INT)']);
  });
});

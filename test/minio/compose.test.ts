/**
 * The minio/ lakehouse stack, checked without Docker (none runs here): the compose file parses, every
 * file it mounts exists, host ports are unique, every ${VAR} has a value in minio/.env, services
 * depend on services that exist, MySQL runs with binlog ROW and GTIDs, floe's config validates, the
 * engine configs agree with it (catalog name, warehouse, catalog and storage endpoints), the flags
 * the stack passes to `floe catalog serve` exist, and the sample schema loads on a real server. The
 * interop suite (test/engines/interop.test.ts) runs these same files against moto and PostgreSQL.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import mysql from 'mysql2/promise';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { registerCatalogServe } from '../../src/cli/commands/catalog-serve.js';
import { parseConfig } from '../../src/config/load.js';
import { parseDotenv, parseProperties, parseSparkConf } from '../support/config-files.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STACK = path.join(ROOT, 'minio');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string>;
  ports?: string[];
  volumes?: string[];
  depends_on?: string[] | Record<string, { condition: string }>;
}

const composeText = readFileSync(path.join(STACK, 'docker-compose.yml'), 'utf8');
const compose = parseYaml(composeText, { merge: true }) as { services: Record<string, Service>; volumes?: Record<string, unknown> };
const services = compose.services;

const env = parseDotenv(readFileSync(path.join(STACK, '.env'), 'utf8'));

function properties(file: string): Record<string, string> {
  return parseProperties(readFileSync(path.join(ROOT, file), 'utf8'));
}

function sparkConf(file: string): Record<string, string> {
  return parseSparkConf(readFileSync(path.join(ROOT, file), 'utf8'));
}

function commandOf(s: Service): string[] {
  return Array.isArray(s.command) ? s.command : (s.command ?? '').split(/\s+/);
}

/** The floe config exactly as the floe containers see it (their environment from .env). */
const floeConfig = parseConfig(parseYaml(readFileSync(path.join(STACK, 'floe.yaml'), 'utf8')), { ...env });

describe('minio/docker-compose.yml', () => {
  it('parses, with an image for every service and the services the walk-through names', () => {
    expect(Object.keys(services).sort()).toEqual(['catalog-db', 'floe', 'floe-catalog', 'floe-catalog-host', 'floe-install', 'minio', 'minio-init', 'mysql', 'shop-writer', 'spark', 'trino']);
    for (const [name, s] of Object.entries(services)) expect(s.image ?? s.build, `service ${name} has an image`).toBeTruthy();
  });

  it('mounts only files that exist, and declares every named volume', () => {
    const declared = new Set(Object.keys(compose.volumes ?? {}));
    let binds = 0;
    for (const [name, s] of Object.entries(services)) {
      for (const v of s.volumes ?? []) {
        const source = v.split(':')[0]!;
        if (source.startsWith('.') || source.startsWith('/')) {
          binds++;
          expect(existsSync(path.resolve(STACK, source)), `${name}: ${source} exists`).toBe(true);
        } else {
          expect(declared.has(source), `${name}: named volume ${source} is declared`).toBe(true);
        }
      }
    }
    expect(binds).toBeGreaterThanOrEqual(10);
  });

  it('publishes each host port once', () => {
    const hostPorts = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => p.split(':').slice(-2)[0]!));
    expect(hostPorts.length).toBeGreaterThan(0);
    expect(new Set(hostPorts).size).toBe(hostPorts.length);
  });

  it('has a value in .env for every ${VAR}, and depends only on services that exist', () => {
    const referenced = new Set([...composeText.matchAll(/(?<!\$)\$\{([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!));
    expect(referenced.size).toBeGreaterThan(0);
    for (const v of referenced) expect(env[v], `.env defines ${v}`).toBeTruthy();
    for (const [name, s] of Object.entries(services)) {
      const deps = Array.isArray(s.depends_on) ? s.depends_on : Object.keys(s.depends_on ?? {});
      for (const d of deps) expect(services[d], `${name} depends on existing ${d}`).toBeDefined();
    }
  });

  it('runs MySQL 8.4 with a ROW binlog and GTIDs, and initializes the shop schema and floe user', () => {
    const my = services.mysql!;
    expect(my.image).toBe('mysql:8.4');
    expect(commandOf(my)).toEqual(expect.arrayContaining(['--binlog-format=ROW', '--gtid-mode=ON', '--enforce-gtid-consistency=ON', '--binlog-row-image=FULL']));
    expect(my.volumes).toContain('./mysql/init:/docker-entrypoint-initdb.d:ro');
    const userScript = readFileSync(path.join(STACK, 'mysql/init/02-floe-user.sh'), 'utf8');
    expect(userScript).toMatch(/REPLICATION SLAVE, REPLICATION CLIENT/);
    expect(userScript).toContain("'floe'@'%'");
    expect(floeConfig.source!.user).toBe('floe');
    expect(floeConfig.source!.password).toBe(env.MYSQL_FLOE_PASSWORD);
  });

  it('runs floe run and floe catalog serve from this repository on one config, with flags the command has', () => {
    const floe = services.floe!;
    expect(commandOf(floe)).toEqual(['node', 'bin/floe.mjs', '-c', 'minio/floe.yaml', '--log-format', 'json', 'run']);
    expect(floe.volumes).toEqual(['..:/floe', 'floe-node-modules:/floe/node_modules']);
    expect(existsSync(path.join(ROOT, 'bin/floe.mjs'))).toBe(true);
    const program = new Command();
    registerCatalogServe(program.command('catalog'));
    const known = new Set(program.commands[0]!.commands[0]!.options.map((o) => o.long));
    // floe-catalog for the engines in the network, floe-catalog-host for clients on the host (MinIO
    // is localhost:9000 there); both vend the S3 keys to clients that ask
    for (const [name, port, s3Endpoint] of [['floe-catalog', '8181', undefined], ['floe-catalog-host', '8182', 'http://localhost:9000']] as const) {
      const serve = services[name]!;
      const serveArgs = commandOf(serve);
      expect(serveArgs.slice(0, 4), name).toEqual(['node', 'bin/floe.mjs', '-c', 'minio/floe.yaml']);
      expect(serveArgs, name).toEqual(expect.arrayContaining(['catalog', 'serve', '--vend-credentials']));
      expect(serve.volumes, name).toEqual(['..:/floe', 'floe-node-modules:/floe/node_modules']);
      const used = serveArgs.slice(serveArgs.indexOf('serve') + 1).filter((a) => a.startsWith('--'));
      for (const flag of used) expect(known.has(flag), `floe catalog serve has ${flag}`).toBe(true);
      expect(serve.ports, name).toEqual([`${port}:8181`]);
      expect(serveArgs[serveArgs.indexOf('--port') + 1], name).toBe('8181');
      expect(serveArgs[serveArgs.indexOf('--host') + 1], name).toBe('0.0.0.0');
      expect(serveArgs.includes('--s3-endpoint') ? serveArgs[serveArgs.indexOf('--s3-endpoint') + 1] : undefined, name).toBe(s3Endpoint);
    }
  });
});

describe('engine configs agree with minio/floe.yaml', () => {
  const catalog = floeConfig.catalog;
  const catalogUrl = new URL(catalog.type === 'sql' ? catalog.url : 'x:');
  const s3Endpoint = floeConfig.warehouse.s3.endpoint!;

  it('floe writes format v2 through the sql catalog on catalog-db, files on the MinIO bucket minio-init creates', () => {
    expect(catalog).toMatchObject({ type: 'sql', name: 'floe' });
    expect(catalogUrl.hostname).toBe('catalog-db');
    expect(services[catalogUrl.hostname]).toBeDefined();
    expect(floeConfig.warehouse.location).toBe('s3://warehouse/lake');
    expect(floeConfig.warehouse.s3).toMatchObject({ endpoint: 'http://minio:9000', pathStyle: true, accessKeyId: env.MINIO_ROOT_USER, secretAccessKey: env.MINIO_ROOT_PASSWORD });
    expect(floeConfig.iceberg.formatVersion).toBe(2);
    expect(JSON.stringify(services['minio-init']!.entrypoint)).toContain('mc mb --ignore-existing lake/warehouse');
    expect(services['catalog-db']!.environment).toMatchObject({ POSTGRES_USER: catalogUrl.username, POSTGRES_DB: catalogUrl.pathname.slice(1) });
  });

  it('Trino: REST to floe-catalog, JDBC on the same rows (catalog name, warehouse, database)', () => {
    const rest = properties('catalog/trino/floe.properties');
    expect(rest).toMatchObject({ 'connector.name': 'iceberg', 'iceberg.catalog.type': 'rest', 'iceberg.rest-catalog.uri': 'http://floe-catalog:8181', 'iceberg.rest-catalog.oauth2.token': '${ENV:FLOE_CATALOG_TOKEN}' });
    const jdbc = properties('catalog/trino/floe_jdbc.properties');
    expect(jdbc['iceberg.jdbc-catalog.catalog-name']).toBe(catalog.name);
    expect(jdbc['iceberg.jdbc-catalog.default-warehouse-dir']).toBe(floeConfig.warehouse.location);
    expect(jdbc['iceberg.jdbc-catalog.connection-url']).toBe(`jdbc:postgresql://${catalogUrl.host}${catalogUrl.pathname}`);
    expect(jdbc['iceberg.jdbc-catalog.connection-user']).toBe(catalogUrl.username);
    for (const p of [rest, jdbc]) {
      expect(p['s3.endpoint']).toBe(s3Endpoint);
      expect(p['s3.path-style-access']).toBe('true');
      // Every ${ENV:X} is in the trino container's environment.
      for (const m of JSON.stringify(p).matchAll(/\$\{ENV:([A-Z_]+)\}/g)) expect(services.trino!.environment![m[1]!], m[1]).toBeDefined();
    }
  });

  it('Spark: REST and JDBC snippets define the catalog floe on the same endpoints and keys', () => {
    const rest = sparkConf('catalog/spark/spark-defaults.rest.conf');
    expect(rest).toMatchObject({ 'spark.sql.catalog.floe': 'org.apache.iceberg.spark.SparkCatalog', 'spark.sql.catalog.floe.type': 'rest', 'spark.sql.catalog.floe.uri': 'http://floe-catalog:8181', 'spark.sql.catalog.floe.token': env.FLOE_CATALOG_TOKEN });
    // REST: the URI alone — floe catalog serve hands out the storage settings, and the keys to a client that asks
    expect(rest['spark.sql.catalog.floe.header.X-Iceberg-Access-Delegation']).toBe('vended-credentials');
    expect(Object.keys(rest).filter((k) => k.includes('.s3.') || k.endsWith('.client.region'))).toEqual([]);
    const jdbc = sparkConf('catalog/spark/spark-defaults.jdbc.conf');
    // The Spark catalog name is the JdbcCatalog's catalog_name: it must be floe's catalog.name.
    expect(jdbc[`spark.sql.catalog.${catalog.name}.catalog-impl`]).toBe('org.apache.iceberg.jdbc.JdbcCatalog');
    expect(jdbc['spark.sql.catalog.floe.uri']).toBe(`jdbc:postgresql://${catalogUrl.host}${catalogUrl.pathname}`);
    expect(jdbc['spark.sql.catalog.floe.jdbc.password']).toBe(env.CATALOG_DB_PASSWORD);
    expect(jdbc['spark.sql.catalog.floe.warehouse']).toBe(floeConfig.warehouse.location);
    expect(jdbc['spark.sql.catalog.floe.s3.endpoint']).toBe(s3Endpoint);
    expect(jdbc['spark.sql.catalog.floe.s3.access-key-id']).toBe(env.MINIO_ROOT_USER);
    expect(jdbc['spark.sql.catalog.floe.s3.secret-access-key']).toBe(env.MINIO_ROOT_PASSWORD);
    for (const c of [rest, jdbc]) {
      expect(c['spark.sql.catalog.floe.io-impl']).toBe('org.apache.iceberg.aws.s3.S3FileIO');
      expect(c['spark.jars.packages']).toMatch(/iceberg-spark-runtime-3\.5_2\.12:1\.9\.2,org\.apache\.iceberg:iceberg-aws-bundle:1\.9\.2/);
    }
  });

  it('PyIceberg and DuckDB (from the host) use the published ports and the demo credentials', () => {
    const py = parseYaml(readFileSync(path.join(ROOT, 'catalog/pyiceberg/.pyiceberg.yaml'), 'utf8')) as { catalog: Record<string, Record<string, string>> };
    // REST through floe-catalog-host: the URI and the token, nothing about storage
    const hostPort = services['floe-catalog-host']!.ports![0]!.split(':')[0];
    expect(py.catalog.floe).toEqual({ uri: `http://localhost:${hostPort}`, token: env.FLOE_CATALOG_TOKEN });
    expect(py.catalog.floe_sql!.uri).toContain(`@localhost:${services['catalog-db']!.ports![0]!.split(':')[0]}/iceberg_catalog`);
    expect(py.catalog.floe_sql).toMatchObject({ 's3.endpoint': 'http://localhost:9000', 's3.access-key-id': env.MINIO_ROOT_USER });
    const duck = readFileSync(path.join(ROOT, 'catalog/duckdb/attach-rest.sql'), 'utf8');
    expect(duck).toContain(`TOKEN '${env.FLOE_CATALOG_TOKEN}'`);
    expect(duck).toContain(`ENDPOINT 'http://localhost:${hostPort}'`);
    expect(duck).not.toMatch(/TYPE s3/i);
    const scan = readFileSync(path.join(ROOT, 'catalog/duckdb/iceberg-scan.sql'), 'utf8');
    expect(scan).toContain(`KEY_ID '${env.MINIO_ROOT_USER}'`);
    expect(scan).toContain("ENDPOINT 'localhost:9000'");
  });
});

describe('minio/mysql/init/01-shop.sql on a real server', () => {
  it('creates the sample tables with primary keys and rows (run on the harness MariaDB in a fresh database)', async () => {
    const db = await createTestDatabase('floe_shop');
    const sql = readFileSync(path.join(STACK, 'mysql/init/01-shop.sql'), 'utf8')
      .replace(/CREATE DATABASE IF NOT EXISTS shop;/, '')
      .replace(/USE shop;/, `USE \`${db}\`;`);
    const conn = await mysql.createConnection({ ...sharedMysqlConfig(), multipleStatements: true });
    try {
      await conn.query(sql);
      const [keys] = await conn.query(
        "SELECT table_name AS t, GROUP_CONCAT(column_name ORDER BY ordinal_position) AS k FROM information_schema.key_column_usage WHERE table_schema = ? AND constraint_name = 'PRIMARY' GROUP BY table_name",
        [db],
      );
      expect((keys as { t: string }[]).sort((a, b) => (a.t < b.t ? -1 : 1))).toEqual([
        { t: 'customers', k: 'id' },
        { t: 'order_items', k: 'order_id,line' },
        { t: 'orders', k: 'id' },
        { t: 'products', k: 'sku' },
      ]);
      const [counts] = await conn.query(`SELECT (SELECT count(*) FROM \`${db}\`.orders) AS orders, (SELECT count(*) FROM \`${db}\`.order_items) AS items`);
      expect(counts).toEqual([{ orders: 3, items: 4 }]);
      // ON DELETE CASCADE: deleting a customer removes their orders and items.
      await conn.query(`DELETE FROM \`${db}\`.customers WHERE id = 1`);
      const [after] = await conn.query(`SELECT (SELECT count(*) FROM \`${db}\`.orders) AS orders, (SELECT count(*) FROM \`${db}\`.order_items) AS items`);
      expect(after).toEqual([{ orders: 1, items: 1 }]);
    } finally {
      await conn.query(`DROP DATABASE IF EXISTS \`${db}\``).catch(() => {});
      await conn.end();
    }
  });
});

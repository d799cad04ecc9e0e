/**
 * The minio/ lakehouse stack's own files, with this machine's endpoints in place of the Compose host
 * names, so that the interop suite runs floe, `floe catalog serve` and every engine from exactly what a
 * user of the stack runs — and fails when those files drift:
 *
 * - minio/floe.yaml, its ${…} from minio/.env, with the S3 endpoint (MinIO → moto) and the catalog
 *   database (catalog-db → the test PostgreSQL) replaced, and the source set to the test server;
 * - the floe-catalog service's command line (its flags: token, credential vending) with the listening
 *   address replaced, and its environment;
 * - catalog/{spark,trino,duckdb,pyiceberg}/ copied into a directory for `engines/read --configs`, the
 *   Compose endpoints replaced; every replacement a file is expected to need must happen, so a host
 *   name or port changed in one file and not the others fails the suite;
 * - the Trino container's environment (the ${ENV:…} values of its catalog files).
 *
 * The catalog database is reached as the stack's own user (`floe`, CATALOG_DB_PASSWORD): the suite
 * creates that role in the test PostgreSQL, so the files' credentials are used as they are.
 */
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { parse as parseYaml } from 'yaml';
import { parseConfig } from '../../../src/config/load.js';
import type { FloeConfig } from '../../../src/config/schema.js';
import { parseDotenv } from '../../support/config-files.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const STACK = join(ROOT, 'minio');

/** minio/.env: the values docker compose puts into the containers' environment. */
const STACK_ENV: Record<string, string> = parseDotenv(readFileSync(join(STACK, '.env'), 'utf8'));

interface Service {
  command?: string[] | string;
  environment?: Record<string, string>;
}
const compose = parseYaml(readFileSync(join(STACK, 'docker-compose.yml'), 'utf8'), { merge: true }) as { services: Record<string, Service> };

/** A Compose value with its ${VAR} taken from minio/.env. */
function composeValue(text: string): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name: string) => {
    const value = STACK_ENV[name];
    if (value === undefined) throw new Error(`minio/docker-compose.yml uses \${${name}}, which minio/.env does not define`);
    return value;
  });
}

/** A service's environment as the container sees it. */
export function serviceEnvironment(service: string): Record<string, string> {
  const env = compose.services[service]?.environment;
  if (env === undefined) throw new Error(`minio/docker-compose.yml: service ${service} has no environment`);
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, composeValue(String(v))]));
}

export interface StackEndpoints {
  /** The S3 server standing in for MinIO (http://127.0.0.1:port). */
  s3: string;
  /** The test PostgreSQL and the database standing in for catalog-db's iceberg_catalog. */
  postgres: { host: string; port: number; database: string };
  /** `floe catalog serve`'s URL, once it runs (the engine configs need it; floe's config does not). */
  catalog?: string;
}

interface Replacement {
  name: string;
  from: string;
  to: (e: StackEndpoints) => string;
}

const hostPort = (url: string) => new URL(url).host;
const pgTarget = (e: StackEndpoints) => `${e.postgres.host}:${e.postgres.port}/${e.postgres.database}`;
const catalogUri = (e: StackEndpoints) => {
  if (e.catalog === undefined) throw new Error('the engine configs need the URL of floe catalog serve');
  return e.catalog;
};

/** The Compose endpoints the files name, inside the stack's network and from the host. */
const REPLACEMENTS: Record<string, Replacement> = {
  's3-in-network': { name: 'MinIO in the network', from: 'http://minio:9000', to: (e) => e.s3 },
  's3-from-host': { name: 'MinIO from the host', from: 'http://localhost:9000', to: (e) => e.s3 },
  's3-duckdb': { name: "MinIO from the host (DuckDB's ENDPOINT, no scheme)", from: "ENDPOINT 'localhost:9000'", to: (e) => `ENDPOINT '${hostPort(e.s3)}'` },
  'catalog-in-network': { name: 'floe-catalog in the network', from: 'http://floe-catalog:8181', to: catalogUri },
  'catalog-from-host': { name: 'floe-catalog-host from the host', from: 'http://localhost:8182', to: catalogUri },
  'db-in-network': { name: 'catalog-db in the network', from: 'catalog-db:5432/iceberg_catalog', to: pgTarget },
  'db-from-host': { name: 'catalog-db from the host', from: 'localhost:5433/iceberg_catalog', to: pgTarget },
};

/** Each engine file the suite loads, and the endpoints it must name. */
const ENGINE_FILES: Record<string, string[]> = {
  'spark/spark-defaults.rest.conf': ['catalog-in-network'],
  'spark/spark-defaults.jdbc.conf': ['db-in-network', 's3-in-network'],
  'trino/floe.properties': ['catalog-in-network', 's3-in-network'],
  'trino/floe_jdbc.properties': ['db-in-network', 's3-in-network'],
  'duckdb/attach-rest.sql': ['catalog-from-host'],
  'duckdb/iceberg-scan.sql': ['s3-duckdb'],
  'pyiceberg/.pyiceberg.yaml': ['catalog-from-host', 'db-from-host', 's3-from-host'],
};

function substitute(file: string, text: string, required: string[], endpoints: StackEndpoints): string {
  let out = text;
  for (const key of required) {
    const r = REPLACEMENTS[key]!;
    if (!out.includes(r.from)) throw new Error(`${file} no longer names ${r.name} as ${r.from}: the suite cannot point it at this machine's servers (update the file, or the suite's list in test/engines/support/lakehouse-stack.ts)`);
    out = out.split(r.from).join(r.to(endpoints));
  }
  for (const [key, r] of Object.entries(REPLACEMENTS)) {
    if (!required.includes(key) && out.includes(r.from)) throw new Error(`${file} names ${r.name} (${r.from}), which the suite does not expect there`);
  }
  return out;
}

/** catalog/'s engine files with the endpoints replaced, written under `dir` (for engines/read --configs). */
export async function writeEngineConfigs(dir: string, endpoints: StackEndpoints): Promise<string> {
  for (const [file, required] of Object.entries(ENGINE_FILES)) {
    const text = readFileSync(join(ROOT, 'catalog', file), 'utf8');
    await mkdir(dirname(join(dir, file)), { recursive: true });
    await writeFile(join(dir, file), substitute(`catalog/${file}`, text, required, endpoints));
  }
  return dir;
}

/** minio/floe.yaml's text with this machine's S3 server and catalog database (`floe catalog serve -c` reads it). */
export function stackFloeYaml(endpoints: StackEndpoints): string {
  return substitute('minio/floe.yaml', readFileSync(join(STACK, 'floe.yaml'), 'utf8'), ['s3-in-network', 'db-in-network'], endpoints);
}

/** minio/floe.yaml as floe runs it in the stack, pointed at this machine's servers. */
export function stackFloeConfig(endpoints: StackEndpoints, overrides: { job: string; source: Record<string, unknown>; formatVersion: 2 | 3; tables?: Record<string, unknown>; commit?: Record<string, unknown> }): FloeConfig {
  const document = parseYaml(stackFloeYaml(endpoints)) as Record<string, Record<string, unknown>>;
  return parseConfig(
    {
      ...document,
      job: { ...document.job, id: overrides.job },
      source: overrides.source,
      iceberg: { ...document.iceberg, formatVersion: overrides.formatVersion },
      ...(overrides.tables ? { tables: overrides.tables } : {}),
      commit: { ...document.commit, ...overrides.commit },
    },
    { ...STACK_ENV },
  );
}

/** The floe-catalog service's `floe catalog serve` arguments, with `config` and a free loopback port. */
export function stackCatalogServeArgs(config: string): string[] {
  const command = compose.services['floe-catalog']?.command;
  if (!Array.isArray(command)) throw new Error('minio/docker-compose.yml: floe-catalog has no command list');
  const args = command.slice(command.indexOf('bin/floe.mjs') + 1);
  const set = (flag: string, value: string) => {
    const i = args.indexOf(flag);
    if (i < 0) throw new Error(`minio/docker-compose.yml: floe-catalog's command has no ${flag}`);
    args[i + 1] = value;
  };
  set('-c', config);
  set('--host', '127.0.0.1');
  set('--port', '0');
  return args;
}

/** The stack's catalog database user (`floe`, CATALOG_DB_PASSWORD) and a fresh database it owns. */
export async function createStackCatalogDatabase(adminUrl: string, name: string): Promise<void> {
  const password = STACK_ENV.CATALOG_DB_PASSWORD!;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    try {
      await client.query(`CREATE ROLE floe LOGIN PASSWORD '${password.replace(/'/g, "''")}'`);
    } catch (e) {
      // another run made it (42710 duplicate_object; 23505 when two runs race on pg_authid)
      if (!['42710', '23505'].includes((e as { code?: string }).code ?? '')) throw e;
      await client.query(`ALTER ROLE floe LOGIN PASSWORD '${password.replace(/'/g, "''")}'`);
    }
    await client.query(`CREATE DATABASE ${name} OWNER floe`);
  } finally {
    await client.end();
  }
}

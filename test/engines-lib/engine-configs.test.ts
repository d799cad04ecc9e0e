/**
 * engines/lib/engine_configs.py — how `engines/read --configs` sets each engine up from its own file —
 * on the repository's catalog/ files themselves: the Spark files define one Iceberg catalog `floe`
 * whose properties Iceberg Java takes unchanged, DuckDB runs only the set-up statements (INSTALL,
 * LOAD, CREATE SECRET, ATTACH — never the files' example queries), and Trino's ${ENV:…} values come
 * from the environment or fail naming the variable. Runs with the machine's python3 (no engine, no
 * PyYAML: the PyIceberg file is read by the interop suite through PyIceberg's own strictyaml).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const LIB = fileURLToPath(new URL('../../engines/lib/', import.meta.url));
const CATALOG = fileURLToPath(new URL('../../catalog/', import.meta.url));
const python = spawnSync('python3', ['--version']).status === 0;

const SCRIPT = `
import json, sys
sys.path.insert(0, sys.argv[1])
import engine_configs as c
from engine_errors import SetupError
d = sys.argv[2]
out = {}
for kind in ("rest", "sql"):
    out["spark_" + kind] = c.spark_catalog(d, kind)
    out["java_" + kind] = c.iceberg_catalog_properties(d, kind)
    out["duckdb_" + kind] = c.duckdb_setup(d, kind)
    try:
        out["trino_" + kind] = c.trino_properties(d, kind)
    except SetupError as e:
        out["trino_" + kind] = "SetupError: " + str(e)
print(json.dumps(out))
`;

function load(env: NodeJS.ProcessEnv): Record<string, unknown> {
  return JSON.parse(execFileSync('python3', ['-c', SCRIPT, LIB, CATALOG], { encoding: 'utf8', env: { PATH: process.env.PATH, ...env } })) as Record<string, unknown>;
}

describe.skipIf(!python)('engines/lib/engine_configs.py on catalog/', () => {
  it('sets each engine up from its own file, and nothing else from it', () => {
    const out = load({ FLOE_CATALOG_TOKEN: 'tok', AWS_ACCESS_KEY_ID: 'ak', AWS_SECRET_ACCESS_KEY: 'sk', CATALOG_DB_PASSWORD: 'pw' });
    const [restName, rest] = out.spark_rest as [string, Record<string, string>];
    expect(restName).toBe('floe');
    expect(rest).toMatchObject({ '': 'org.apache.iceberg.spark.SparkCatalog', '.type': 'rest', '.uri': 'http://floe-catalog:8181', '.io-impl': 'org.apache.iceberg.aws.s3.S3FileIO', '.header.X-Iceberg-Access-Delegation': 'vended-credentials' });
    const [jdbcName, jdbc] = out.java_sql as [string, Record<string, string>];
    expect(jdbcName).toBe('floe');
    expect(jdbc).toMatchObject({ 'catalog-impl': 'org.apache.iceberg.jdbc.JdbcCatalog', uri: 'jdbc:postgresql://catalog-db:5432/iceberg_catalog', 'jdbc.schema-version': 'V1', 'io-impl': 'org.apache.iceberg.aws.s3.S3FileIO' });
    expect(Object.keys(jdbc)).not.toContain(''); // the SparkCatalog class is Spark's, not a catalog property
    const [duckRest, alias] = out.duckdb_rest as [string[], string];
    expect(alias).toBe('floe');
    expect(duckRest.map((s) => s.split(/\s+/).slice(0, 2).join(' '))).toEqual(['INSTALL iceberg', 'LOAD iceberg', 'INSTALL httpfs', 'LOAD httpfs', 'CREATE SECRET', "ATTACH 'floe'"]);
    const [duckSql, noAlias] = out.duckdb_sql as [string[], string | null];
    expect(noAlias).toBeNull();
    expect(duckSql.every((s) => !/^(SELECT|SHOW)/i.test(s))).toBe(true);
    expect(duckSql.some((s) => /^CREATE SECRET floe_minio \(TYPE s3/.test(s))).toBe(true);
    expect(out.trino_rest).toMatchObject({ 'iceberg.catalog.type': 'rest', 'iceberg.rest-catalog.oauth2.token': 'tok', 'fs.native-s3.enabled': 'true', 's3.aws-access-key': 'ak', 's3.aws-secret-key': 'sk' });
    expect(out.trino_sql).toMatchObject({ 'iceberg.catalog.type': 'jdbc', 'iceberg.jdbc-catalog.connection-password': 'pw' });
  });

  it('names an ${ENV:…} value missing from the environment', () => {
    const out = load({});
    expect(out.trino_rest).toMatch(/^SetupError: trino\/floe\.properties uses \$\{ENV:FLOE_CATALOG_TOKEN\}, which is not set in engines\/read's environment$/);
  });
});

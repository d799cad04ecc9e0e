/**
 * `floe verify` against changes another engine made: floe run fills a format-v2 table in a SQL catalog
 * (SQLite, the JdbcCatalog layout PyIceberg's SqlCatalog reads), then PyIceberg deletes a row and
 * overwrites another (copy-on-write: it rewrites the data files that held them). verify finds exactly
 * those two rows in the one chunk that holds them, --repair fixes them (equality deletes: format v2),
 * a second verify finds the lake equal, and floe run streams on from the repaired table.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type mysql from 'mysql2/promise';
import { parseConfig } from '../../src/config/load.js';
import type { FloeConfig } from '../../src/config/schema.js';
import { silentLogger } from '../../src/pipeline/observe/logger.js';
import { FanOutNotifier, RecordingSink } from '../../src/pipeline/observe/notifications.js';
import { runPipeline } from '../../src/pipeline/runner.js';
import { runVerification } from '../../src/pipeline/verify/verify-run.js';
import type { VerifyOptions } from '../../src/pipeline/verify/verify-session.js';
import { createTestDatabase, sharedMysqlConfig } from '../support/shared-mysql.js';
import { sql } from '../source/mysql/binlog/helpers.js';
import { ENGINES_HOME, engineSuite } from './support/engines.js';

const { missing, required } = engineSuite('test/engines/verify-pyiceberg', ['pyiceberg']);
const run = promisify(execFile);

let db: string;
let conn: mysql.Connection;
let dir: string;
let config: FloeConfig;

describe.skipIf(missing.length > 0 && !required)('floe verify after PyIceberg changed the lake', () => {
  beforeAll(async () => {
    if (missing.length > 0) throw new Error(`FLOE_ENGINES_REQUIRED=1 but PyIceberg is not installed in ${ENGINES_HOME}: run npm run engines:install`);
    db = await createTestDatabase('verify_pyiceberg');
    conn = await sql();
    await conn.query(`CREATE TABLE \`${db}\`.t (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, amount DECIMAL(8,2), at DATETIME(6))`);
    await conn.query(`INSERT INTO \`${db}\`.t VALUES ${Array.from({ length: 300 }, (_, i) => `(${i + 1}, 'n${i + 1}', ${i}.50, '2024-01-01 00:00:00.${String(i).padStart(6, '0')}')`).join(', ')}`);
    dir = await mkdtemp(join(tmpdir(), 'floe-verify-pyiceberg-'));
    const server = sharedMysqlConfig();
    config = parseConfig({
      job: { id: 'verify-pyiceberg' },
      source: { ...server, serverId: 50_000 + (process.pid % 5000) * 8, include: [`${db}.t`], snapshot: { chunkSize: 50 } },
      warehouse: { location: join(dir, 'warehouse') },
      catalog: { type: 'sql', name: 'floe', url: `sqlite:${join(dir, 'catalog.db')}` },
      iceberg: { formatVersion: 2 },
      stateDir: join(dir, 'state'),
      commit: { intervalMs: 300, idleCheckpoints: 1 },
    });
  });

  afterAll(async () => {
    await conn?.end();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function floeRun(): Promise<void> {
    const controller = new AbortController();
    const sink = new RecordingSink();
    const result = runPipeline(config, { mode: 'run', signal: controller.signal, notifications: new FanOutNotifier('verify-pyiceberg', [sink], silentLogger), logger: silentLogger });
    await Promise.race([sink.waitFor('streaming-started'), result.then((r) => Promise.reject(new Error(`floe run ended: ${r.reason} ${String(r.error)}`)))]);
    // a few checkpoints: past every chunk's high watermark (idle tables commit every checkpoint here)
    await new Promise((r) => setTimeout(r, 2000));
    controller.abort();
    expect((await result).reason).toBe('stopped');
  }

  const options = (extra: Partial<VerifyOptions> = {}): VerifyOptions => ({ chunkSize: 50, parallelism: 2, showValues: true, rowLimit: 10, repair: false, serverIdBase: config.source!.serverId + 100, ...extra });

  it('finds the rows PyIceberg deleted and overwrote, repairs them, and floe run streams on', async () => {
    await floeRun();
    const python = `
from pyiceberg.catalog.sql import SqlCatalog
import pyarrow as pa
from pyiceberg.expressions import EqualTo
catalog = SqlCatalog("floe", uri="sqlite:///${join(dir, 'catalog.db')}", warehouse="file://${join(dir, 'warehouse')}")
table = catalog.load_table(("${db}", "t"))
table.delete(EqualTo("id", 42))
row = table.scan(row_filter=EqualTo("id", 43)).to_arrow()
row = row.set_column(1, row.schema.field("name"), pa.array(["changed"], type=row.schema.field("name").type))
table.overwrite(row, overwrite_filter=EqualTo("id", 43))
`;
    await run(join(ENGINES_HOME, 'venv', 'bin', 'python'), ['-c', python], { timeout: 120_000 });

    const found = await runVerification(config, options(), silentLogger);
    expect(found.status).toBe('differs');
    const t = found.tables[0]!;
    expect(t.differences.map((d) => ({ lower: d.lower, upper: d.upper, rows: d.rows }))).toEqual([
      {
        lower: undefined,
        upper: [51],
        rows: {
          onlyInMysql: 1,
          onlyInLake: 0,
          differing: 1,
          samples: {
            onlyInMysql: [{ id: 42, name: 'n42', amount: '41.50', at: '2024-01-01T00:00:00.000041' }],
            onlyInLake: [],
            differing: [{ key: { id: 43 }, columns: ['name'], mysql: { name: 'n43' }, lake: { name: 'changed' } }],
          },
        },
      },
    ]);

    const repaired = await runVerification(config, options({ repair: true }), silentLogger);
    expect(repaired.tables[0]).toMatchObject({ status: 'repaired', repair: { chunks: 1, rowsWritten: 2, rowsDeleted: 0, stillDiffering: 0 } });
    expect((await runVerification(config, options(), silentLogger)).status).toBe('equal');

    await conn.query(`UPDATE \`${db}\`.t SET name = 'again' WHERE id IN (43, 44)`);
    await floeRun();
    expect((await runVerification(config, options(), silentLogger)).status).toBe('equal');
  });
});

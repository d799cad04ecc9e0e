/**
 * `schemaChanges: stop` and `fail` through the real pipeline. `stop`: the run ends with 'ddl-stop'
 * and the DDL's GTID/position; everything before the statement is committed (and nothing after it);
 * the table's committed offset lies before the DDL; a restart with `stop` stops at the same DDL
 * again; a restart with FLOE_ACCEPT_DDL naming it applies it (as evolve) and streams on. `fail`: the
 * run fails with an error naming the statement and what to do.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lakeTableRows } from '../../e2e/support/lake-compare.js';
import { committedOffset } from '../../e2e/support/catch-up.js';
import { compareOffsets, formatOffset } from '../../../src/source/mysql/offset/offset.js';
import { openHarness, type Harness } from './pipeline-harness.js';

process.env.TZ ??= 'Asia/Seoul';

let h: Harness;

beforeAll(async () => {
  h = await openHarness('ddl_stop', 'ddl-stop', ['t', 'f'], [
    'CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10))',
    `INSERT INTO t VALUES ${Array.from({ length: 40 }, (_, i) => `(${i}, 'v${i}')`).join(', ')}`,
    'CREATE TABLE f (id INT PRIMARY KEY, v VARCHAR(10))',
    "INSERT INTO f VALUES (1, 'a')",
  ]);
});

afterAll(async () => {
  delete process.env.FLOE_ACCEPT_DDL;
  await h?.close();
});

async function lakeIds(table: string): Promise<string[]> {
  const lake = await lakeTableRows(h.catalog, { namespace: [h.db], name: table });
  return lake.rows.map((r) => r.split('|')[0]).sort();
}

describe('schemaChanges: stop', () => {
  it('stops exactly before the DDL, stops there again on restart, and applies it when accepted', async () => {
    const run = h.start({ schemaChanges: 'stop' });
    await h.untilStreaming(run);
    await h.exec("INSERT INTO t VALUES (100, 'before')");
    await h.exec("ALTER TABLE t ADD COLUMN w INT DEFAULT 5");
    await h.exec("INSERT INTO t VALUES (101, 'after', 9)");
    const result = await run.result;
    expect(result.reason).toBe('ddl-stop');
    expect(result.ddl?.statement).toBe('ALTER TABLE t ADD COLUMN w INT DEFAULT 5');
    expect(result.ddl?.position).toMatch(/^gtid \d+-\d+-\d+, .+:\d+$/);
    // everything before the DDL committed, nothing after it; the schema untouched
    const lake = await lakeTableRows(h.catalog, { namespace: [h.db], name: 't' });
    expect(lake.columns).toEqual(['id', 'v']);
    expect(lake.rows).toContain('N100|"before"');
    expect(lake.rows.some((r) => r.startsWith('N101|'))).toBe(false);
    expect(lake.rows).toHaveLength(41);
    // the committed offset is before the DDL: a restart reads it again
    const offset = await committedOffset(h.catalog, { namespace: [h.db], name: 't' }, 'ddl-stop');
    const [, file, pos] = /, (.+):(\d+)$/.exec(result.ddl!.position)!;
    expect(offset, 'committed offset').toBeDefined();
    expect(compareOffsets(offset!, { file, position: Number(pos) }), `committed ${formatOffset(offset!)} vs DDL ${result.ddl!.position}`).toBeLessThan(0);

    // restart, still `stop`: the same DDL stops it again
    const again = await h.start({ schemaChanges: 'stop' }).result;
    expect(again).toMatchObject({ reason: 'ddl-stop', ddl: { position: result.ddl!.position } });

    // the operator accepts this one statement: it is applied as under evolve, streaming goes on
    const gtid = /^gtid (\S+),/.exec(result.ddl!.position)![1];
    process.env.FLOE_ACCEPT_DDL = gtid;
    const accepted = h.start({ schemaChanges: 'stop' });
    delete process.env.FLOE_ACCEPT_DDL;
    await h.untilStreaming(accepted);
    await h.exec("INSERT INTO t VALUES (102, 'later', 1)");
    await h.catchUp(accepted, ['t']);
    expect((await accepted.stop()).reason).toBe('stopped');
    await h.expectLakeEqualsMysql('t'); // old rows read w = 5 (initial-default), 101 and 102 carry theirs
    expect(await lakeIds('t')).toContain('N101');
  });
});

describe('schemaChanges: fail', () => {
  it('fails on a schema-changing DDL of a captured table, naming it, after committing what came before', async () => {
    const run = h.start({ schemaChanges: 'fail', source: { ...h.config.source, include: [`${h.db}.f`] } });
    await h.untilStreaming(run);
    await h.exec("INSERT INTO f VALUES (2, 'b')");
    await h.exec('ALTER TABLE t ADD COLUMN other INT'); // not captured in this run: ignored
    await h.exec('ALTER TABLE f ADD INDEX ix_v (v)'); // no schema effect: passes
    await h.exec('ALTER TABLE f DROP COLUMN v');
    const result = await run.result;
    expect(result.reason).toBe('failed');
    expect(String(result.error)).toMatch(/DDL on captured table .*\.f at gtid .*: ALTER TABLE f DROP COLUMN v — not applied: schemaChanges is fail; everything before it is committed\. To continue, restart with schemaChanges: evolve/);
    expect(await lakeIds('f')).toEqual(['N1', 'N2']);
  });
});

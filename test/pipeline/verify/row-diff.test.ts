/**
 * The row-by-row comparison of a chunk (row-diff.ts) on a plan made the way verification makes it
 * (verify-plan.ts): rows pair by primary key; rows only in MySQL, only in the lake, and rows that
 * differ with the names of the columns that differ; values only when asked for, in Iceberg's JSON
 * single-value form; a transformed column compared in its transformed form; tables without a key as
 * multisets; at most `limit` rows listed, counts exact.
 */
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../../src/config/load.js';
import type { Row } from '../../../src/model/values.js';
import { planTableMapping } from '../../../src/pipeline/table-mapping.js';
import { compileTransforms } from '../../../src/pipeline/transforms.js';
import { diffChunkRows } from '../../../src/pipeline/verify/row-diff.js';
import { planVerification } from '../../../src/pipeline/verify/verify-plan.js';
import { columnFromDefinition } from '../../../src/source/mysql/ddl/ddl-columns.js';
import { parseDdl } from '../../../src/source/mysql/ddl/ddl-parser.js';
import type { CreateTableStatement } from '../../../src/source/mysql/ddl/ddl-statements.js';
import { mapTable, type MappedTable } from '../../../src/source/mysql/schema/type-mapping.js';

function table(ddl: string, primaryKey: string[]): MappedTable {
  const s = parseDdl(ddl, 'db') as CreateTableStatement;
  return mapTable({ id: s.table, columns: s.columns.map((c, i) => columnFromDefinition(c, i + 1, 'mysql', 't')), primaryKey, indexes: [], comment: '', engine: null });
}

const config = parseConfig({ transforms: [{ column: 'db.t.email', type: 'hash', salt: 's' }, { column: 'db.t.secret', type: 'drop' }] });
const t = table('CREATE TABLE t (id BIGINT PRIMARY KEY, price DECIMAL(6,2), email VARCHAR(40), secret VARCHAR(10))', ['id']);
const schema = planTableMapping(t, config, compileTransforms(config.transforms)).schema;
const plan = planVerification(config, t, schema, undefined);
const lake = (id: bigint, price: string | null, email: string | null): Row => plan.project([id, price, email, 'x']);

describe('diffChunkRows', () => {
  it('pairs rows by key and names the columns that differ', () => {
    const mysql = [lake(1n, '1.00', 'a@x'), lake(2n, '2.00', 'b@x'), lake(3n, '3.00', null)];
    const inLake = [lake(1n, '1.00', 'a@x'), lake(2n, '2.50', 'c@x'), lake(4n, '4.00', 'd@x')];
    expect(diffChunkRows(plan, mysql, inLake, { showValues: false, limit: 10 })).toEqual({
      onlyInMysql: 1,
      onlyInLake: 1,
      differing: 1,
      samples: { onlyInMysql: [{ id: 3n }], onlyInLake: [{ id: 4n }], differing: [{ key: { id: 2n }, columns: ['price', 'email'] }] },
    });
    expect(plan.excluded).toEqual([{ column: 'secret', reason: 'dropped by a transform (not in the lake)' }]);
  });

  it('shows values in their JSON single-value form when asked, the hashed column as the lake holds it', () => {
    const d = diffChunkRows(plan, [lake(2n, '2.00', 'b@x')], [lake(2n, '2.50', 'b@x')], { showValues: true, limit: 10 });
    expect(d.samples.differing).toEqual([{ key: { id: 2n }, columns: ['price'], mysql: { price: '2.00' }, lake: { price: '2.50' } }]);
    const only = diffChunkRows(plan, [lake(7n, null, 'e@x')], [], { showValues: true, limit: 10 });
    expect(only.samples.onlyInMysql).toEqual([{ id: 7n, price: null, email: lake(7n, null, 'e@x')[2] }]);
  });

  it('lists at most `limit` rows and counts them all', () => {
    const mysql = Array.from({ length: 30 }, (_, i) => lake(BigInt(i), '1.00', null));
    const d = diffChunkRows(plan, mysql, [], { showValues: false, limit: 5 });
    expect([d.onlyInMysql, d.samples.onlyInMysql.length]).toEqual([30, 5]);
  });

  it('compares a table without a key as multisets of rows', () => {
    const l = table('CREATE TABLE l (v VARCHAR(10), n INT)', []);
    const lschema = planTableMapping(l, config, compileTransforms(config.transforms)).schema;
    const lplan = planVerification(config, l, lschema, undefined);
    const d = diffChunkRows(lplan, [['a', 1], ['a', 1], ['b', 2]], [['a', 1], ['c', 3]], { showValues: true, limit: 10 });
    expect(d).toEqual({ onlyInMysql: 2, onlyInLake: 1, differing: 0, samples: { onlyInMysql: [{ v: 'a', n: 1 }, { v: 'b', n: 2 }], onlyInLake: [{ v: 'c', n: 3 }], differing: [] } });
  });
});

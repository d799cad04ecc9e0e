/**
 * README's compatibility matrix is the rendering of engines/interop-results.json (written by
 * npm run test:engines), never typed by hand: this fails when the two differ, and the renderer
 * refuses results with a cell no run filled.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BEGIN, END, renderMatrix, withMatrix } from '../../scripts/engines-matrix.js';
import type { InteropResults } from '../engines/support/interop-results.js';

const README = fileURLToPath(new URL('../../README.md', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../engines/interop-results.json', import.meta.url));

describe('the compatibility matrix in README', () => {
  it.runIf(existsSync(RESULTS))('is engines/interop-results.json rendered (npm run engines:matrix)', () => {
    const readme = readFileSync(README, 'utf8');
    const results = JSON.parse(readFileSync(RESULTS, 'utf8')) as InteropResults;
    expect(readme).toContain(BEGIN);
    expect(readme).toContain(END);
    expect(withMatrix(readme, renderMatrix(results))).toBe(readme);
  });

  it('has no cell that a run did not fill', () => {
    const results: InteropResults = {
      versions: { spark: 'Spark x' },
      columns: [
        { engine: 'spark', catalog: 'filesystem', via: 'Hadoop catalog' },
        { engine: 'spark', catalog: 'sql', via: 'JdbcCatalog' },
      ],
      rows: [{ formatVersion: 3, table: 't', features: ['unpartitioned'], cells: { 'spark/filesystem': { result: 'identical' } } }],
    };
    expect(() => renderMatrix(results)).toThrow(/no result for v3 t × spark\/sql/);
    results.rows[0]!.cells['spark/sql'] = { result: 'refused', message: 'Spark does not support time fields' };
    const md = renderMatrix(results);
    expect(md).toContain('| v3 `t` | unpartitioned | identical rows | refused [1] |');
    expect(md).toContain('[1] refused: Spark does not support time fields');
  });

  it('keeps an S3 column apart from the directory column of the same engine and catalog', () => {
    const results: InteropResults = {
      versions: { spark: 'Spark x' },
      columns: [
        { engine: 'spark', catalog: 'sql', via: 'JdbcCatalog' },
        { engine: 'spark', catalog: 'sql', storage: 's3', via: '`spark-defaults.jdbc.conf`, S3FileIO' },
      ],
      rows: [{ formatVersion: 3, table: 't', features: ['unpartitioned'], cells: { 'spark/sql': { result: 'refused', message: 'Spark does not support time fields' } } }],
    };
    expect(() => renderMatrix(results)).toThrow(/no result for v3 t × spark\/sql\/s3/);
    results.rows[0]!.cells['spark/sql/s3'] = { result: 'identical' };
    const md = renderMatrix(results);
    expect(md).toContain('| table | what it holds | Spark<br>SQL | Spark<br>SQL S3 |');
    expect(md).toContain('| v3 `t` | unpartitioned | refused [1] | identical rows |');
    expect(md).toContain('*REST S3*, *SQL S3*');
    expect(md).toContain('Spark SQL S3: `spark-defaults.jdbc.conf`, S3FileIO');
  });
});

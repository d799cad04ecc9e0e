/**
 * `floe verify`'s report for a person (src/cli/verify-report.ts): one summary line per table, then per
 * table what differs — each chunk's key range and its rows (keys; values only when the report holds
 * them), what was not verified and why, the repair, the columns left out and the notes — and the
 * verdict.
 */
import { describe, expect, it } from 'vitest';
import { humanReport } from '../../src/cli/verify-report.js';
import type { VerificationReport } from '../../src/pipeline/verify/verify-run.js';

const stats = { chunks: 12, checksumEqual: 10, rowByRow: 2, mysqlRows: 96_000, lakeRowsRead: 96_100, lakeFilesRead: 3, lakeBytesRead: 4_800_000, seconds: 1.25 };

describe('humanReport', () => {
  it('says what differs, where, and why', () => {
    const report: VerificationReport = {
      status: 'differs',
      seconds: 3.5,
      tables: [
        {
          table: 'shop.orders',
          iceberg: 'shop.orders',
          status: 'differs',
          differences: [
            {
              chunk: 3,
              lower: [300],
              upper: [400],
              rows: { onlyInMysql: 1, onlyInLake: 0, differing: 1, samples: { onlyInMysql: [{ id: 342 }], onlyInLake: [], differing: [{ key: { id: 343 }, columns: ['customer_id'], mysql: { customer_id: null }, lake: { customer_id: 7 } }] } },
            },
          ],
          unverifiedChunks: [],
          excludedColumns: [{ column: 'ssn', reason: 'dropped by a transform (not in the lake)' }],
          notes: [],
          stats,
        },
        { table: 'shop.logs', iceberg: 'shop.logs', status: 'skipped', reason: 'its snapshot is still being copied (3 of 9 chunks)', differences: [], unverifiedChunks: [], excludedColumns: [], notes: [] },
      ],
    };
    const text = humanReport(report);
    expect(text.split('\n').slice(0, 4)).toEqual([
      'TABLE        STATUS   CHUNKS  ROW BY ROW  DIFFERING CHUNKS  ONLY IN MYSQL  ONLY IN LAKE  DIFFERING ROWS    ROWS  LAKE READ  TIME',
      '───────────  ───────  ──────  ──────────  ────────────────  ─────────────  ────────────  ──────────────  ──────  ─────────  ────',
      'shop.orders  differs      12           2                 1              1             0               1  96,000    4.6 MiB  1.3s',
      'shop.logs    skipped       –           –                 0              0             0               0       –          –     –',
    ]);
    expect(text).toContain('  chunk 3 [300, 400): 1 only in MySQL, 0 only in the lake, 1 differing');
    expect(text).toContain('    only in MySQL     {"id":342}');
    expect(text).toContain('    differs           {"id":343}: customer_id  MySQL {"customer_id":null}  lake {"customer_id":7}');
    expect(text).toContain('  column ssn not compared: dropped by a transform (not in the lake)');
    expect(text).toContain('shop.logs → shop.logs\n  skipped: its snapshot is still being copied (3 of 9 chunks)');
    expect(text.trimEnd().split('\n').at(-1)).toBe('the lake differs from MySQL (3.5 s)');
  });
});

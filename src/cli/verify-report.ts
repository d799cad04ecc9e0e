/**
 * `floe verify`'s output for a person at a terminal: one summary line per table, then what differs —
 * each chunk's key range and the rows only in MySQL, only in the lake, and differing (with their
 * columns; values only with --show-values) — and what was left out of the comparison and why.
 * Machines get JSON lines instead (commands/verify.ts).
 */
import type { TableVerification } from '../pipeline/verify/verify-result.js';
import type { VerificationReport } from '../pipeline/verify/verify-run.js';
import { stringifyJson } from '../util/json.js';
import { renderTable } from './text-table.js';

function count(n: number): string {
  return n.toLocaleString('en-US');
}

function bytes(n: number): string {
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

function totals(t: TableVerification): { onlyInMysql: number; onlyInLake: number; differing: number } {
  const out = { onlyInMysql: 0, onlyInLake: 0, differing: 0 };
  for (const d of t.differences) {
    out.onlyInMysql += d.rows.onlyInMysql;
    out.onlyInLake += d.rows.onlyInLake;
    out.differing += d.rows.differing;
  }
  return out;
}

function range(lower: readonly unknown[] | undefined, upper: readonly unknown[] | undefined): string {
  const text = (b: readonly unknown[]) => (b.length === 1 ? stringifyJson(b[0]) : `(${b.map((v) => stringifyJson(v)).join(', ')})`);
  return `[${lower ? text(lower) : '−∞'}, ${upper ? text(upper) : '+∞'})`;
}

export function humanReport(report: VerificationReport): string {
  const rows = report.tables.map((t) => {
    const n = totals(t);
    const s = t.stats;
    return [
      t.table,
      t.status,
      s ? count(s.chunks) : '–',
      s ? count(s.rowByRow) : '–',
      count(t.differences.length),
      count(n.onlyInMysql),
      count(n.onlyInLake),
      count(n.differing),
      s ? count(s.mysqlRows) : '–',
      s ? bytes(s.lakeBytesRead) : '–',
      s ? `${s.seconds.toFixed(1)}s` : '–',
    ];
  });
  const headers = ['TABLE', 'STATUS', 'CHUNKS', 'ROW BY ROW', 'DIFFERING CHUNKS', 'ONLY IN MYSQL', 'ONLY IN LAKE', 'DIFFERING ROWS', 'ROWS', 'LAKE READ', 'TIME'];
  let out = renderTable(headers, rows, new Set([2, 3, 4, 5, 6, 7, 8, 9, 10]));
  for (const t of report.tables) out += details(t);
  const verdict = { equal: 'the lake equals MySQL', differs: 'the lake differs from MySQL', unverified: 'not every table could be verified' }[report.status];
  return `${out}\n${verdict} (${report.seconds.toFixed(1)} s)\n`;
}

function details(t: TableVerification): string {
  const lines: string[] = [];
  if (t.reason) lines.push(`  ${t.status}: ${t.reason}`);
  for (const d of t.differences) {
    lines.push(`  chunk ${d.chunk} ${range(d.lower, d.upper)}: ${d.rows.onlyInMysql} only in MySQL, ${d.rows.onlyInLake} only in the lake, ${d.rows.differing} differing`);
    for (const r of d.rows.samples.onlyInMysql) lines.push(`    only in MySQL     ${stringifyJson(r)}`);
    for (const r of d.rows.samples.onlyInLake) lines.push(`    only in the lake  ${stringifyJson(r)}`);
    for (const r of d.rows.samples.differing) {
      lines.push(`    differs           ${stringifyJson(r.key)}: ${r.columns.join(', ')}${r.mysql ? `  MySQL ${stringifyJson(r.mysql)}  lake ${stringifyJson(r.lake)}` : ''}`);
    }
  }
  for (const u of t.unverifiedChunks) lines.push(`  chunk ${u.chunk} not verified: ${u.reason}`);
  if (t.repair) {
    const r = t.repair;
    lines.push(`  repaired ${r.chunks} chunk(s): ${r.rowsWritten} row(s) written, ${r.rowsDeleted} deleted (checkpoint ${r.checkpointIds.join(', ') || '–'}); ${r.stillDiffering === 0 ? 'they verify equal now' : `${r.stillDiffering} still differ`}`);
  }
  for (const e of t.excludedColumns) lines.push(`  column ${e.column} not compared: ${e.reason}`);
  for (const n of t.notes) lines.push(`  note: ${n}`);
  return lines.length > 0 ? `\n${t.table} → ${t.iceberg}\n${lines.join('\n')}\n` : '';
}

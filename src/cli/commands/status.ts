/**
 * `floe status`: per table, what the lake holds and where the job stands — rows, last checkpoint,
 * source offset, phase, lag — read from the tables themselves (no local state). A human table on a
 * terminal, one JSON document otherwise (`--json` forces it).
 */
import type { Command } from 'commander';
import { connectMysql } from '../../source/mysql/index.js';
import { detectDialect } from '../../source/mysql/index.js';
import type { BinlogOffset } from '../../source/mysql/index.js';
import { readWatermark } from '../../source/mysql/index.js';
import { errorMessage } from '../../util/errors.js';
import { parseJson, stringifyJson } from '../../util/json.js';
import { mysqlConnection, openCatalog } from '../../pipeline/config-options.js';
import { commandContext, type CommandContext } from '../command-context.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { tableStatuses, type TableStatus } from '../table-status.js';
import { renderTable } from '../text-table.js';

export function registerStatus(program: Command, setExit: (code: ExitCodeValue) => void): void {
  program
    .command('status')
    .description('per table: rows, last checkpoint, source offset, snapshot phase and lag, read from the Iceberg tables')
    .option('--json', 'JSON even on a terminal')
    .option('--count', 'count the live rows of each table by scanning it (deletes applied; reads every file)')
    .option('--no-source', 'do not ask the source for its current binlog position (lag is then the time since the last commit)')
    .action(async (options: { json?: boolean; source: boolean; count?: boolean }, command: Command) => {
      const ctx = await commandContext(command);
      const sourceEnd = options.source ? await currentSourceEnd(ctx) : undefined;
      const catalog = openCatalog(ctx.config, ctx.logger);
      let statuses: TableStatus[];
      try {
        statuses = await tableStatuses(catalog, { jobId: ctx.config.job.id, sourceEnd, countRows: options.count === true });
      } finally {
        await catalog.close?.();
      }
      if (process.stdout.isTTY && !options.json) process.stdout.write(humanStatus(ctx, statuses));
      else process.stdout.write(`${stringifyJson({ job: ctx.config.job.id, warehouse: ctx.config.warehouse.location, tables: statuses.map(jsonStatus) }, 2)}\n`);
      setExit(ExitCode.ok);
    });
}

async function currentSourceEnd(ctx: CommandContext): Promise<BinlogOffset | undefined> {
  if (!ctx.config.source) return undefined;
  try {
    const client = await connectMysql({ ...mysqlConnection(ctx.config.source), connectTimeoutMs: 5_000 });
    try {
      return await readWatermark(client, await detectDialect(client));
    } finally {
      await client.close();
    }
  } catch (e) {
    ctx.logger.warn('cannot read the source binlog position; lag is the time since the last commit', { err: errorMessage(e) });
    return undefined;
  }
}

function jsonStatus(s: TableStatus): Record<string, unknown> {
  let offset: unknown = s.sourceOffset;
  if (s.sourceOffset) {
    try {
      offset = parseJson(s.sourceOffset);
    } catch {
      offset = s.sourceOffset;
    }
  }
  return {
    table: s.table,
    records: s.records,
    deletes: s.deletes,
    rows: s.rows,
    phase: s.phase,
    snapshot: s.snapshot,
    checkpointId: s.checkpointId,
    snapshotId: s.snapshotId,
    sourceOffset: offset,
    offset: s.offset,
    committedAt: s.committedAt,
    lagSeconds: s.lagSeconds === undefined ? undefined : Math.round(s.lagSeconds * 1000) / 1000,
    health: s.health,
    note: s.note,
  };
}

function humanStatus(ctx: CommandContext, statuses: TableStatus[]): string {
  const head = `job ${ctx.config.job.id} · warehouse ${ctx.config.warehouse.location} · ${ctx.config.catalog.type} catalog\n\n`;
  if (statuses.length === 0) return `${head}no tables yet\n`;
  const counted = statuses.some((s) => s.rows !== undefined);
  const rows = statuses.map((s) => [
    s.table,
    ...(counted ? [s.rows === undefined ? '?' : s.rows.toLocaleString('en-US')] : []),
    s.records === undefined ? '?' : s.records.toLocaleString('en-US'),
    s.deletes === undefined ? '?' : (s.deletes.equality + s.deletes.position).toLocaleString('en-US'),
    s.phase,
    s.checkpointId === undefined ? '–' : s.checkpointId.toString(),
    s.offset ?? '–',
    s.committedAt ? s.committedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '–',
    s.lagSeconds === undefined ? '–' : formatLag(s.lagSeconds),
  ]);
  const notes = statuses.filter((s) => s.note).map((s) => `  ${s.table}: ${s.note}\n`);
  const headers = ['TABLE', ...(counted ? ['ROWS'] : []), 'RECORDS', 'DELETES', 'PHASE', 'CHECKPOINT', 'OFFSET', 'COMMITTED', 'LAG'];
  const right = new Set(['ROWS', 'RECORDS', 'DELETES', 'CHECKPOINT', 'LAG'].map((h) => headers.indexOf(h)).filter((i) => i >= 0));
  const legend = counted ? '' : '\nRECORDS: rows in data files; DELETES: delete-file entries not yet compacted away (floe status --count scans for live rows)\n';
  return head + renderTable(headers, rows, right) + legend + healthTable(statuses) + (notes.length ? `\nnotes:\n${notes.join('')}` : '');
}

/** Second table: what the readers and the commits pay for (table-health.ts). */
function healthTable(statuses: TableStatus[]): string {
  const withHealth = statuses.filter((s) => s.health);
  if (withHealth.length === 0) return '';
  const headers = ['TABLE', 'DATA FILES', 'AVG FILE', 'EQ DELETE FILES', 'POS DELETE FILES', 'DVS', 'DELETED ROWS', 'SNAPSHOTS', 'MANIFESTS', 'METADATA', 'LAST EXPIRY'];
  const rows = withHealth.map((s) => {
    const h = s.health!;
    return [
      s.table,
      h.dataFiles.toLocaleString('en-US'),
      formatBytes(h.averageDataFileBytes),
      h.deleteFiles.equality.toLocaleString('en-US'),
      h.deleteFiles.position.toLocaleString('en-US'),
      h.deleteFiles.deletionVectors.toLocaleString('en-US'),
      (h.deletedRows.equality + h.deletedRows.position).toLocaleString('en-US'),
      h.snapshots.toLocaleString('en-US'),
      (h.manifests.data + h.manifests.deletes).toLocaleString('en-US'),
      h.metadataBytes === undefined ? '?' : formatBytes(h.metadataBytes),
      h.lastExpiry ? h.lastExpiry.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '–',
    ];
  });
  return `\nlake health\n${renderTable(headers, rows, new Set([1, 2, 3, 4, 5, 6, 7, 8, 9]))}`;
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 / 1024).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

function formatLag(seconds: number): string {
  if (seconds < 1) return '0s';
  if (seconds < 120) return `${Math.round(seconds)}s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)}m`;
  if (seconds < 172800) return `${Math.round(seconds / 3600)}h`;
  return `${Math.round(seconds / 86400)}d`;
}

/**
 * `floe maintain`: maintenance on demand for the tables this job writes (those carrying its
 * checkpoint stamp), or one `--table` — snapshot expiry by age and count, with the config's
 * `maintenance.expireSnapshots` as defaults, after compacting format-v2 and v3 tables that have live
 * delete files or deletion vectors, and bin-packing small data files (`--no-compact` skips both) and rewriting small manifests when more
 * than `maintenance.manifests.minCount` are live (`--manifests-min-count`, `--no-rewrite-manifests`),
 * and with `--orphans-older-than` orphan-file removal. Run it while `floe run` is stopped, or beside it: a
 * commit of floe's that lands in between makes the expiry re-plan (it never removes a snapshot it
 * did not see). Prints one line (or JSON object) per table.
 */
import { Option, type Command } from 'commander';
import type { Catalog, TableIdentifier } from '../../iceberg/metadata/catalog.js';
import { loadCatalogTable } from '../../iceberg/table/index.js';
import { lastCommitted } from '../../iceberg/checkpoint/index.js';
import { maintainTable, maintenanceOptions, smallFileOptions, type TableMaintenanceReport } from '../../pipeline/maintenance.js';
import { openCatalog } from '../../pipeline/config-options.js';
import { FloeError } from '../../util/errors.js';
import { stringifyJson } from '../../util/json.js';
import { commandContext } from '../command-context.js';
import { ExitCode, type ExitCodeValue } from '../exit-codes.js';
import { listAllTables } from '../table-status.js';

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** '0s', '90m', '3d', '1500ms' → milliseconds. */
export function parseDuration(text: string, option: string): number {
  const m = /^\s*(\d+)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!m) throw new FloeError('cli', 'invalid-argument', `${option}: expected a duration such as 0s, 90m, 12h or 3d, found ${JSON.stringify(text)}`);
  return Number(m[1]) * UNITS[m[2]!]!;
}

export function registerMaintain(program: Command, setExit: (code: ExitCodeValue) => void): void {
  program
    .command('maintain')
    .description("expire old snapshots (and the files only they reach) of this job's tables")
    .option('--table <ns.name>', 'only this Iceberg table (namespace.name)')
    .option('--dry-run', 'say what would be expired and deleted; change nothing')
    .option('--expire-older-than <duration>', 'snapshots older than this may expire (default: maintenance.expireSnapshots.olderThanMs)')
    .addOption(new Option('--retain-last <n>', 'snapshots kept whatever their age (default: maintenance.expireSnapshots.retainLast)').argParser((v) => {
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new FloeError('cli', 'invalid-argument', `--retain-last: expected a whole number of at least 1, found ${JSON.stringify(v)}`);
      return Number(v);
    }))
    .option('--no-compact', 'do not compact format-v2/v3 tables (by default every live delete file and deletion vector of a v2 or v3 table is applied and dropped, and small data files are bin-packed per maintenance.compaction.minInputFiles / minFileSizeBytes; v3 rows keep their row lineage)')
    .option('--no-rewrite-manifests', 'do not rewrite small manifests (by default when more than maintenance.manifests.minCount are live)')
    .addOption(new Option('--manifests-min-count <n>', 'rewrite manifests when more than this many are small (default: maintenance.manifests.minCount)').argParser((v) => {
      if (!/^\d+$/.test(v) || Number(v) < 1) throw new FloeError('cli', 'invalid-argument', `--manifests-min-count: expected a whole number of at least 1, found ${JSON.stringify(v)}`);
      return Number(v);
    }))
    .option('--orphans-older-than <duration>', 'also delete files under the table location that nothing refers to and that are older than this (e.g. 3d; never less than the longest a commit may take)')
    .option('--json', 'JSON lines even on a terminal')
    .action(async (options: { table?: string; dryRun?: boolean; expireOlderThan?: string; retainLast?: number; orphansOlderThan?: string; compact: boolean; rewriteManifests: boolean; manifestsMinCount?: number; json?: boolean }, command: Command) => {
      const ctx = await commandContext(command);
      const defaults = maintenanceOptions(ctx.config);
      const policy = {
        olderThanMs: options.expireOlderThan !== undefined ? parseDuration(options.expireOlderThan, '--expire-older-than') : defaults.olderThanMs,
        retainLast: options.retainLast ?? defaults.retainLast,
        dryRun: options.dryRun === true,
        ...(options.compact ? { compactMinDeleteFiles: 1, ...(ctx.config.maintenance.compaction.smallFiles ? { compactSmallFiles: smallFileOptions(ctx.config) } : {}) } : {}),
        ...(options.rewriteManifests
          ? { manifests: { minCount: options.manifestsMinCount ?? ctx.config.maintenance.manifests.minCount, ...(defaults.manifests?.targetSizeBytes !== undefined ? { targetSizeBytes: defaults.manifests.targetSizeBytes } : {}) } }
          : {}),
        ...(options.orphansOlderThan !== undefined ? { orphansOlderThanMs: parseDuration(options.orphansOlderThan, '--orphans-older-than') } : {}),
      };
      const catalog = openCatalog(ctx.config, ctx.logger);
      try {
        const ids = await tablesToMaintain(catalog, ctx.config.job.id, options.table);
        for (const id of ids) {
          const { report } = await maintainTable(await loadCatalogTable(catalog, id), policy, ctx.logger);
          process.stdout.write(options.json || !process.stdout.isTTY ? `${stringifyJson({ ...report, dryRun: policy.dryRun })}\n` : humanLine(report, policy.dryRun));
        }
      } finally {
        await catalog.close?.();
      }
      setExit(ExitCode.ok);
    });
}

async function tablesToMaintain(catalog: Catalog, jobId: string, only: string | undefined): Promise<TableIdentifier[]> {
  if (only !== undefined) {
    const parts = only.split('.');
    if (parts.length < 2 || parts.some((p) => p === '')) throw new FloeError('cli', 'invalid-argument', `--table: expected namespace.name, found ${JSON.stringify(only)}`);
    const id = { namespace: parts.slice(0, -1), name: parts[parts.length - 1]! };
    if (!(await catalog.tableExists(id))) throw new FloeError('cli', 'not-found', `--table ${only}: no such table in the catalog`);
    return [id];
  }
  const out: TableIdentifier[] = [];
  for (const id of await listAllTables(catalog)) if (lastCommitted((await catalog.loadTable(id)).metadata, jobId)) out.push(id);
  return out;
}

function humanLine(r: TableMaintenanceReport, dryRun: boolean): string {
  const verb = dryRun ? 'would expire' : 'expired';
  const orphans = r.orphanFiles === undefined ? '' : `, ${dryRun ? 'would remove' : 'removed'} ${r.orphanFiles} orphan file(s)`;
  const c = r.compaction;
  const groups = c?.smallFileGroups ? ` (${c.smallFileGroups} group(s) of small files)` : '';
  const into = c?.addedDataFiles !== undefined && !dryRun ? ` into ${c.addedDataFiles}` : '';
  const compacted = c ? `${dryRun ? 'would rewrite' : 'rewrote'} ${c.rewrittenDataFiles} data file(s)${into}${groups} dropping ${c.removedDeleteFiles} delete file(s), ` : '';
  const m = r.manifests;
  const rewritten = m && m.replaced > 0 ? `${dryRun ? 'would rewrite' : 'rewrote'} ${m.replaced} manifest(s) into ${m.created} (${m.before} → ${m.after}), ` : '';
  return `${r.table}: ${compacted}${rewritten}${verb} ${r.expiredSnapshots} snapshot(s), ${dryRun ? 'would delete' : 'deleted'} ${r.deletedFiles} file(s)${orphans}; ${r.retainedSnapshots} snapshot(s) kept\n`;
}

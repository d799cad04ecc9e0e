/**
 * `floe scan <table dir | metadata.json> [--snapshot-id ID] [--limit N]`: prints a table's live rows,
 * one JSON object per line keyed by column name, each value in Iceberg's JSON single-value form (exact
 * integers for longs, decimals as strings, ISO dates and timestamps, binary as hex) — a look into the
 * lake without Spark. Equality deletes, position deletes and deletion vectors are applied; columns
 * added later read as their `initial-default`.
 *
 * A table directory is resolved as the filesystem catalog resolves it (`metadata/version-hint.text`,
 * then probing newer versions, then listing; also metastore-style `NNNNN-uuid.metadata.json`); a path
 * ending in `.metadata.json` is read directly. Local relative paths — including relative file paths
 * inside the metadata, as in the golden fixtures — resolve against the working directory. `s3://`
 * locations use the standard AWS credential chain and `AWS_ENDPOINT_URL` / `AWS_REGION`.
 */
import { once } from 'node:events';
import type { Command } from 'commander';
import { findCurrentMetadataFile, readTableMetadataFile } from '../../catalog/filesystem/filesystem-versions.js';
import { fileIOFor } from '../../io/file-io-factory.js';
import { rowToJson, scanTable } from '../../iceberg/scan/index.js';
import { errorMessage, FloeError, isFloeError } from '../../util/errors.js';
import { stringifyJson } from '../../util/json.js';

type SetExit = (code: 0 | 1 | 2) => void;

interface ScanCommandOptions {
  snapshotId?: string;
  limit?: string;
}

function usage(message: string): FloeError {
  return new FloeError('cli.scan', 'invalid-argument', message);
}

function parseSnapshotId(text: string | undefined): bigint | undefined {
  if (text === undefined) return undefined;
  if (!/^-?\d+$/.test(text.trim())) throw usage(`--snapshot-id expects an integer snapshot id, found ${JSON.stringify(text)}`);
  return BigInt(text.trim());
}

function parseLimit(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n)) throw usage(`--limit expects a non-negative integer, found ${JSON.stringify(text)}`);
  return n;
}

/** The metadata file to read for `target`: itself when it is one, else the table directory's current one. */
async function metadataLocationOf(target: string, io: ReturnType<typeof fileIOFor>): Promise<string> {
  if (/\.metadata\.json$/.test(target)) return target;
  const found = await findCurrentMetadataFile(io, target.replace(/\/+$/, ''));
  if (found === undefined) {
    throw new FloeError('cli.scan', 'not-found', `no Iceberg table at ${target}: found no metadata/v<N>.metadata.json (nor <NNNNN>-<uuid>.metadata.json); pass a table directory or a .metadata.json file`);
  }
  return found;
}

async function writeOut(text: string): Promise<void> {
  if (!process.stdout.write(text)) await once(process.stdout, 'drain');
}

async function runScan(target: string, options: ScanCommandOptions): Promise<void> {
  const snapshotId = parseSnapshotId(options.snapshotId);
  const limit = parseLimit(options.limit);
  const io = fileIOFor(target);
  try {
    const metadata = await readTableMetadataFile(io, await metadataLocationOf(target, io));
    const scan = await scanTable({ io, metadata }, { snapshotId, limit });
    for await (const row of scan.rows()) await writeOut(`${stringifyJson(rowToJson(scan.schema, row))}\n`);
  } finally {
    await io.close?.();
  }
}

export function registerScan(program: Command, setExit: SetExit = (code) => (process.exitCode = code)): void {
  program
    .command('scan')
    .description('print the rows of an Iceberg table (a table directory or a .metadata.json file) as JSON lines, deletes applied')
    .argument('<table>', 'table directory (Hadoop layout) or metadata JSON file; local path, file:// or s3:// URI')
    .option('--snapshot-id <id>', 'read this snapshot instead of the current one (time travel)')
    .option('--limit <n>', 'print at most n rows')
    .action(async (target: string, options: ScanCommandOptions) => {
      // `floe scan … | head` closes stdout early: stop quietly instead of failing on EPIPE.
      process.stdout.on('error', (e: NodeJS.ErrnoException) => {
        if (e.code === 'EPIPE') process.exit(0);
        throw e;
      });
      try {
        await runScan(target, options);
        setExit(0);
      } catch (e) {
        process.stderr.write(`floe scan: ${errorMessage(e)}\n`);
        setExit(isFloeError(e, 'invalid-argument') ? 2 : 1);
      }
    });
}

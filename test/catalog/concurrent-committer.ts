/**
 * One writer of the catalog concurrency test, run as its own OS process:
 *   node --import tsx test/catalog/concurrent-committer.ts '<json CommitterArgs>'
 * It opens the catalog through `remote` (a module exporting a function that takes a JSON config and
 * returns a Catalog), then makes `commits` append commits to one table, each with the requirements a
 * real writer sends (table uuid + main branch unchanged). On a commit-conflict it reloads and tries
 * again with a fresh snapshot on top of the new head — the optimistic-concurrency loop of every
 * Iceberg writer. Prints one JSON line {committed, conflicts} and exits 0, or prints the error and
 * exits 1.
 */
import { pathToFileURL } from 'node:url';
import type { Catalog, TableIdentifier } from '../../src/iceberg/metadata/catalog.js';
import { isFloeError } from '../../src/util/errors.js';
import { appendSnapshotCommit } from './test-snapshots.js';

export interface RemoteCatalog {
  /** Absolute path of a module exporting the opener. */
  module: string;
  /** Name of the exported `(config) => Catalog | Promise<Catalog>` function. Default `openCatalog`. */
  exportName?: string;
  /** JSON-serializable configuration passed to the opener. */
  config: unknown;
}

export interface CommitterArgs {
  remote: RemoteCatalog;
  identifier: TableIdentifier;
  writer: string;
  commits: number;
  maxAttempts: number;
}

async function openRemoteCatalog(remote: RemoteCatalog): Promise<Catalog> {
  const mod = (await import(pathToFileURL(remote.module).href)) as Record<string, unknown>;
  const open = mod[remote.exportName ?? 'openCatalog'];
  if (typeof open !== 'function') throw new Error(`${remote.module} does not export a function ${remote.exportName ?? 'openCatalog'}`);
  return (await open(remote.config)) as Catalog;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]!) as CommitterArgs;
  const catalog = await openRemoteCatalog(args.remote);
  let conflicts = 0;
  try {
    for (let i = 0; i < args.commits; i++) {
      for (let attempt = 1; ; attempt++) {
        const table = await catalog.loadTable(args.identifier);
        const commit = appendSnapshotCommit(table.metadata, { 'floe.test.writer': args.writer, 'floe.test.commit': String(i) });
        try {
          await catalog.commitTable(args.identifier, commit.requirements, commit.updates);
          break;
        } catch (e) {
          if (!isFloeError(e, 'commit-conflict') || !e.retryable || attempt >= args.maxAttempts) throw e;
          conflicts++;
          // Jittered backoff so that the losers do not collide again in lockstep.
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 20 * Math.min(attempt, 5))));
        }
      }
    }
  } finally {
    await catalog.close?.();
  }
  process.stdout.write(`${JSON.stringify({ committed: args.commits, conflicts })}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
      process.exit(1);
    },
  );
}

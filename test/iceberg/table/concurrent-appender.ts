/**
 * One writer of the commit concurrency test, run as its own OS process:
 *   node --import tsx test/iceberg/table/concurrent-appender.ts '<json AppenderArgs>'
 * Opens the filesystem catalog, then makes `commits` appends to one table, each a real data file of
 * one row (key = writer * 1000 + commit) committed with `appendFiles` — conflicts are resolved by the
 * commit API's own reload / re-sequence / retry loop. Prints {committed, attempts} and exits 0, or
 * prints the error and exits 1.
 */
import { pathToFileURL } from 'node:url';
import { FileSystemCatalog, type FileSystemCatalogOptions } from '../../../src/catalog/filesystem/filesystem-catalog.js';
import type { TableIdentifier } from '../../../src/iceberg/metadata/catalog.js';
import { appendFiles, loadCatalogTable } from '../../../src/iceberg/table/index.js';
import { writeDataFile } from './table-fixtures.js';

export interface AppenderArgs {
  catalog: FileSystemCatalogOptions;
  identifier: TableIdentifier;
  writer: number;
  commits: number;
}

async function main(): Promise<void> {
  const args = JSON.parse(process.argv[2]!) as AppenderArgs;
  const catalog = new FileSystemCatalog(args.catalog);
  let attempts = 0;
  try {
    for (let i = 0; i < args.commits; i++) {
      const table = await loadCatalogTable(catalog, args.identifier);
      const key = BigInt(args.writer * 1000 + i);
      const file = await writeDataFile(table, [[key, `writer ${args.writer} commit ${i}`]]);
      const result = await appendFiles(table, [file], {
        summary: { 'floe.test.writer': String(args.writer), 'floe.test.commit': String(i) },
        // Many writers on one table: more retries than Java's default 4, short waits.
        retry: { numRetries: 200, minWaitMs: 2, maxWaitMs: 40 },
      });
      attempts += result.attempts;
    }
  } finally {
    await catalog.close();
  }
  process.stdout.write(`${JSON.stringify({ committed: args.commits, attempts })}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1]!).href) {
  main().then(
    () => process.exit(0),
    (e: unknown) => {
      process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
      process.exit(1);
    },
  );
}

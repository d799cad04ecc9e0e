/**
 * The freshness benchmark's reader (bench/freshness.ts): polls the table's current version in the
 * filesystem catalog every `pollMs`, as a reader would find it (the version hint, then a probe of
 * the next versions: src/catalog/filesystem/filesystem-versions.ts), and at each new version reads
 * the job's committed source offset from its metadata (the stamp a restart resumes from,
 * src/iceberg/writer/checkpoint-stamps.ts). The offset's MariaDB GTID position says which
 * transactions the table holds: every one of domain 0 up to its sequence number. A child process of
 * its own, so that the parent's sampling never delays a poll.
 *
 * The time of a version is `Date.now()` when a poll first finds it: at most `pollMs` (plus the
 * poll's own file reads) after the catalog swap made it current. The swap's own time is the metadata
 * file's ctime: the catalog creates `v<N>.metadata.json` by link(2) of a complete temporary file and
 * then unlinks the temporary name (src/io/local-file-io.ts `writeIfAbsent`), and both set the
 * inode's ctime — to the kernel's coarse clock, a few milliseconds at most behind `Date.now()`.
 *
 * Configuration: FLOE_CATALOG_WATCH (JSON, `WatchConfig`). Messages to the parent:
 *   {type:'visible', seq, atMs, swappedMs, version}   a version whose committed GTID sequence is higher than any before
 *   {type:'failed', error}
 * From the parent: {type:'stop'}.
 */
import { stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { fileIOFor } from '../src/io/file-io-factory.js';
import { FileSystemLayout, normalizeWarehouse } from '../src/catalog/filesystem/filesystem-layout.js';
import { findCurrentVersion, readTableMetadataFile } from '../src/catalog/filesystem/filesystem-versions.js';
import type { TableMetadata } from '../src/iceberg/spec/table-metadata.js';
import { lastCommitted } from '../src/iceberg/checkpoint/checkpoint-stamps.js';
import { parseOffset } from '../src/source/mysql/offset/offset.js';
import { isFloeError } from '../src/util/errors.js';
import { parseJson, stringifyJson } from '../src/util/json.js';

export interface WatchConfig {
  warehouse: string;
  namespace: string;
  table: string;
  jobId: string;
  pollMs: number;
}

export type WatchMessage = { type: 'visible'; seq: number; atMs: number; swappedMs: number; version: number } | { type: 'failed'; error: string };

/**
 * The GTID sequence number (domain 0) up to which the job's last commit holds the source's
 * transactions, or undefined before its first streaming commit.
 */
export function committedSequence(metadata: TableMetadata, jobId: string): number | undefined {
  const last = lastCommitted(metadata, jobId);
  if (!last) return undefined;
  const doc = parseJson(last.sourceOffset) as { phase?: string; offset?: unknown };
  if (doc.phase !== 'streaming' || !doc.offset) return undefined;
  const gtids = parseOffset(stringifyJson(doc.offset)).gtids;
  if (gtids?.flavor !== 'mariadb') throw new Error(`bench:freshness: expected a MariaDB GTID position in the committed offset, found ${gtids ? gtids.flavor : 'none'}; the benchmark runs a private MariaDB`);
  const seq = gtids.position.get(0)?.seq;
  return seq === undefined ? undefined : Number(seq);
}

function send(m: WatchMessage): void {
  process.send?.(m);
}

async function main(): Promise<void> {
  const c = JSON.parse(process.env.FLOE_CATALOG_WATCH ?? '{}') as WatchConfig;
  const io = fileIOFor(c.warehouse);
  const metadataDir = new FileSystemLayout(normalizeWarehouse(c.warehouse)).metadataDir({ namespace: [c.namespace], name: c.table });
  let stopping = false;
  process.on('message', (m: { type?: string }) => {
    if (m?.type === 'stop') stopping = true;
  });
  let version = 0;
  let seq = -1;
  while (!stopping) {
    const current = await findCurrentVersion(io, metadataDir).catch(() => undefined);
    const atMs = Date.now();
    if (current && current.version > version) {
      try {
        const s = committedSequence(await readTableMetadataFile(io, current.metadataLocation), c.jobId);
        const swappedMs = (await stat(fileURLToPath(current.metadataLocation))).ctimeMs;
        version = current.version;
        if (s !== undefined && s > seq) {
          seq = s;
          send({ type: 'visible', seq, atMs, swappedMs, version });
        }
      } catch (e) {
        // removed under the poll by a newer commit (old metadata files are deleted after commits): the next poll finds that one
        if (!isFloeError(e, 'not-found') && (e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
      }
    }
    await new Promise((r) => setTimeout(r, c.pollMs));
  }
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main()
    .catch((e: unknown) => {
      send({ type: 'failed', error: e instanceof Error ? e.message : String(e) });
      process.exitCode = 1;
    })
    .finally(() => process.disconnect?.());
}

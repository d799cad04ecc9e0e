/**
 * What the long-running benchmarks (bench/soak.ts, bench/freshness.ts) sample beside a running floe:
 * the table's shape in the lake (current metadata.json, live data and delete files, manifests,
 * snapshots retained: src/iceberg/maintenance/table-health.ts; the files and bytes under its
 * location), optionally a full scan with floe's reader, and floe's process (RSS, open descriptors).
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FileSystemCatalog } from '../src/catalog/filesystem/filesystem-catalog.js';
import { tableHealth } from '../src/iceberg/maintenance/table-health.js';
import { scanTable } from '../src/iceberg/scan/index.js';
import type { LakeTable } from './lake.js';

export interface LakeShape {
  metadataBytes: number;
  filesUnderTable: number;
  bytesUnderTable: number;
  dataFiles: number;
  deleteFiles: { equality: number; position: number; deletionVectors: number };
  manifests: number;
  snapshots: number;
  /** Of `snapshots`, floe's maintenance commits (`floe.maintenance` in the summary; absent in older results). */
  maintenanceSnapshots?: number;
}

/** The element at quantile `q` of the ascending `sorted` (nearest rank; 0 when empty). */
export function quantile(sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

async function walk(dir: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!e.isFile()) continue;
    try {
      bytes += (await stat(join(e.parentPath, e.name))).size;
      files++;
    } catch {
      // deleted meanwhile (expiry, an old metadata file): not there any more
    }
  }
  return { files, bytes };
}

export async function rssOf(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  const m = /VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8').catch(() => ''));
  return m ? Number(m[1]) * 1024 : 0;
}

export async function openFdsOf(pid: number | undefined): Promise<number> {
  if (pid === undefined) return 0;
  return (await readdir(`/proc/${pid}/fd`).catch(() => [])).length;
}

/**
 * The table's shape now, and with `scan` the time of a full scan with floe's reader and the rows it
 * read. A sample that meets a file expired under it (floe's maintenance runs meanwhile) is tried
 * again, up to three times; `retried` hears why.
 */
export async function sampleLake(t: LakeTable, scan: boolean, retried: (message: string) => void): Promise<LakeShape & { scanMs: number; scannedRows: number }> {
  const catalog = new FileSystemCatalog({ warehouse: t.warehouse, name: 'floe', warn: () => {} });
  for (let attempt = 1; ; attempt++) {
    try {
      const loaded = await catalog.loadTable({ namespace: [t.namespace], name: t.table });
      const health = await tableHealth(loaded.io, loaded.metadata, loaded.metadataLocation);
      let scanMs = 0;
      let scannedRows = 0;
      if (scan) {
        const started = performance.now();
        for await (const _ of (await scanTable(loaded)).rows()) scannedRows++;
        scanMs = performance.now() - started;
      }
      const under = await walk(fileURLToPath(loaded.metadata.location));
      return {
        metadataBytes: health.metadataBytes ?? 0,
        filesUnderTable: under.files,
        bytesUnderTable: under.bytes,
        dataFiles: health.dataFiles,
        deleteFiles: health.deleteFiles,
        manifests: health.manifests.data + health.manifests.deletes,
        snapshots: health.snapshots,
        maintenanceSnapshots: loaded.metadata.snapshots.filter((x) => x.summary['floe.maintenance'] !== undefined).length,
        scanMs,
        scannedRows,
      };
    } catch (e) {
      if (attempt >= 3) throw e;
      retried((e as Error).message);
    }
  }
}

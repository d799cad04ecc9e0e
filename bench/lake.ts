/**
 * What the benchmark reads back from the lake: the offset floe committed for the table (from the
 * current metadata's `floe.source-offset`, as a restart would), and — when verifying — the live rows,
 * compared with MySQL column by column.
 */
import mysql from 'mysql2/promise';
import { FileSystemCatalog } from '../src/catalog/filesystem/filesystem-catalog.js';
import { readManifestEntries, readSnapshotManifests } from '../src/iceberg/table/index.js';
import { JOB_ID_KEY, lastCommitted } from '../src/iceberg/checkpoint/checkpoint-stamps.js';
import { scanTable } from '../src/iceberg/scan/index.js';
import type { MysqlConnectionConfig } from '../src/source/mysql/client.js';
import { compareOffsets, parseOffset, type BinlogOffset } from '../src/source/mysql/offset/offset.js';
import { parseJson, stringifyJson } from '../src/util/json.js';
import { TABLE } from './dataset.js';

export interface LakeTable {
  warehouse: string;
  namespace: string;
  table: string;
  jobId: string;
}

function catalogOf(t: LakeTable): FileSystemCatalog {
  return new FileSystemCatalog({ warehouse: t.warehouse, name: 'floe', warn: () => {} });
}

/** The streaming offset the job committed to the table, or undefined (no table, snapshot phase). */
export async function committedOffset(t: LakeTable): Promise<BinlogOffset | undefined> {
  const catalog = catalogOf(t);
  let metadata;
  try {
    metadata = (await catalog.loadTable({ namespace: [t.namespace], name: t.table })).metadata;
  } catch {
    return undefined;
  }
  const last = lastCommitted(metadata, t.jobId);
  if (!last) return undefined;
  const doc = parseJson(last.sourceOffset) as { phase?: string; offset?: unknown };
  if (doc.phase !== 'streaming' || !doc.offset) return undefined;
  return parseOffset(stringifyJson(doc.offset));
}

export async function reached(t: LakeTable, target: BinlogOffset): Promise<boolean> {
  const o = await committedOffset(t);
  return o !== undefined && compareOffsets(o, target) >= 0;
}

/** Live data files, distinct partitions among them, and the job's commits, of the table's current snapshot. */
export async function lakeShape(t: LakeTable): Promise<{ dataFiles: number; partitions: number; commits: number }> {
  const table = await catalogOf(t).loadTable({ namespace: [t.namespace], name: t.table });
  const m = table.metadata;
  const current = m.snapshots.find((s) => s.snapshotId === m.currentSnapshotId);
  const partitions = new Set<string>();
  let dataFiles = 0;
  if (current) {
    const manifests = (await readSnapshotManifests(table.io, current)).filter((mf) => mf.content === 'data');
    const entries = (await Promise.all(manifests.map((mf) => readManifestEntries(table.io, mf)))).flat();
    for (const e of entries) {
      if (e.status === 'deleted' || e.dataFile.content !== 'data') continue;
      dataFiles++;
      partitions.add(stringifyJson(e.dataFile.partition));
    }
  }
  const commits = m.snapshots.filter((s) => s.summary[JOB_ID_KEY] === t.jobId).length;
  return { dataFiles, partitions: partitions.size, commits };
}

export interface VerifyResult {
  lakeRows: number;
  mysqlRows: number;
  mismatches: number;
  firstMismatch?: string;
}

/**
 * Compares the lake's live rows with the MySQL table: same ids, and per id the same quantity, status,
 * amount, sku, note and updated_at (µs since the epoch, computed by the server).
 */
export async function verifyLake(t: LakeTable, connection: MysqlConnectionConfig, database: string): Promise<VerifyResult> {
  const catalog = catalogOf(t);
  const loaded = await catalog.loadTable({ namespace: [t.namespace], name: t.table });
  const scan = await scanTable(loaded);
  const names = scan.schema.fields.map((f) => f.name);
  const col = (n: string) => {
    const i = names.indexOf(n);
    if (i < 0) throw new Error(`bench: lake table has no column ${n} (columns: ${names.join(', ')})`);
    return i;
  };
  const [iId, iQty, iStatus, iAmount, iSku, iNote, iUpdated] = ['id', 'quantity', 'status', 'amount', 'sku', 'note', 'updated_at'].map(col);
  const lake = new Map<string, string>();
  for await (const row of scan.rows()) {
    lake.set(String(row[iId]), stringifyJson([row[iQty], row[iStatus], row[iAmount], row[iSku], row[iNote], String(row[iUpdated])]));
  }
  const lakeRows = lake.size;
  const conn = await mysql.createConnection({ host: connection.host, port: connection.port, user: connection.user, password: connection.password, database, supportBigNumbers: true, bigNumberStrings: true, decimalNumbers: false });
  let mysqlRows = 0;
  let mismatches = 0;
  let firstMismatch: string | undefined;
  try {
    await conn.query("SET time_zone = '+00:00'");
    const [rows] = await conn.query({
      sql: `SELECT id, quantity, status, amount, sku, note, CAST(UNIX_TIMESTAMP(updated_at) * 1000000 AS DECIMAL(20,0)) FROM ${TABLE}`,
      rowsAsArray: true,
    });
    for (const r of rows as unknown[][]) {
      mysqlRows++;
      const id = String(r[0]);
      const expected = stringifyJson([r[1], r[2], r[3], r[4], r[5], String(r[6])]);
      const got = lake.get(id);
      if (got !== expected) {
        mismatches++;
        firstMismatch ??= `id ${id}: MySQL ${expected}, lake ${got ?? '(missing)'}`;
      }
      lake.delete(id);
    }
  } finally {
    await conn.end();
  }
  for (const id of lake.keys()) {
    mismatches++;
    firstMismatch ??= `id ${id}: in the lake, not in MySQL`;
  }
  return { lakeRows, mysqlRows, mismatches, firstMismatch };
}

/**
 * Random change streams over a few hundred keys and the reference model they must produce (a Map
 * key → row), plus whole-table invariant checks used by the model-based and replay tests.
 *
 * A stream is what a MySQL binlog could carry for the `keyedSchema()` table, plus the at-least-once
 * noise floe must absorb: inserts, updates (value changes, partition moves — `grp` is the partition
 * source and not in the key — and primary-key changes), deletes, deletes of absent keys, inserts over
 * existing keys, and immediate duplicate deliveries of the previous change.
 */
import fs from 'node:fs';
import { expect } from 'vitest';
import type { ManifestEntry } from '../../../src/iceberg/spec/data-file.js';
import { readTableRows } from '../../../src/iceberg/scan/index.js';
import { readManifestEntries, readSnapshotManifests, type CatalogTable } from '../../../src/iceberg/table/index.js';
import { toHex, type Row } from '../../../src/model/values.js';
import type { RowChange } from '../../../src/iceberg/writer/index.js';
import { decodeDeletionVectorBlob, decodePuffin } from './dv-decoder.js';
import { localPath, readLocal } from './support.js';

export type Model = Map<bigint, Row>;

export function applyToModel(model: Model, c: RowChange): void {
  const keyOf = (r: Row): bigint => r[0] as bigint;
  switch (c.op) {
    case 'insert':
      model.set(keyOf(c.after!), c.after!);
      break;
    case 'update': {
      const old = c.key ? (c.key[0] as bigint) : c.before ? keyOf(c.before) : keyOf(c.after!);
      model.delete(old);
      model.set(keyOf(c.after!), c.after!);
      break;
    }
    case 'delete':
      model.delete(c.key ? (c.key[0] as bigint) : keyOf(c.before!));
      break;
  }
}

export function generateChanges(rand: () => number, count: number, keySpace: number): RowChange[] {
  const model: Model = new Map();
  const out: RowChange[] = [];
  const pick = (n: number): number => Math.floor(rand() * n);
  const enc = new TextEncoder();
  const makeRow = (id: bigint): Row => {
    const name = rand() < 0.1 ? null : `n${pick(1000)}${'é'.repeat(pick(3))}`;
    const amount = rand() < 0.1 ? null : `${pick(200000) - 100000}.${String(pick(100)).padStart(2, '0')}`;
    return [id, pick(4), name, amount, rand() < 0.2 ? null : enc.encode(`t${pick(50)}`)];
  };
  while (out.length < count) {
    const prev = out[out.length - 1];
    let c: RowChange;
    if (prev && rand() < 0.08) {
      c = prev; // duplicate delivery
    } else {
      const k = BigInt(pick(keySpace));
      const existing = model.get(k);
      const r = rand();
      if (!existing) {
        c = r < 0.9 ? { op: 'insert', after: makeRow(k) } : { op: 'delete', key: [k] }; // delete of an absent key
      } else if (r < 0.35) {
        const after = makeRow(k);
        c = rand() < 0.5 ? { op: 'update', before: existing, after } : { op: 'update', after }; // incl. partition moves
      } else if (r < 0.5) {
        let k2 = BigInt(pick(keySpace));
        for (let i = 0; i < 5 && model.has(k2); i++) k2 = BigInt(pick(keySpace));
        c = model.has(k2) ? { op: 'delete', before: existing } : { op: 'update', before: existing, after: makeRow(k2) }; // key change
      } else if (r < 0.6) {
        c = { op: 'insert', after: makeRow(k) }; // insert over an existing key (replayed snapshot row)
      } else {
        c = rand() < 0.5 ? { op: 'delete', before: existing } : { op: 'delete', key: [k] };
      }
    }
    applyToModel(model, c);
    out.push(c);
  }
  return out;
}

/** Random cut points: consecutive slices of 1..maxSize changes. */
export function cutCheckpoints<T>(rand: () => number, items: readonly T[], maxSize: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; ) {
    const n = 1 + Math.floor(rand() * maxSize);
    out.push(items.slice(i, i + n));
    i += n;
  }
  return out;
}

/** A row as comparable text: bigints and bytes made explicit. */
export function rowText(r: readonly unknown[]): string {
  return JSON.stringify(r.map((v) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? `0x${toHex(v)}` : v)));
}

function modelRows(model: Model): string[] {
  return [...model.values()].map(rowText).sort();
}

/** The table read with floe's scan reader equals the model (every column, exactly). */
export async function expectTableEquals(table: CatalogTable, model: Model, what: string): Promise<void> {
  const rows = await readTableRows(table);
  expect(rows.map(rowText).sort(), what).toEqual(modelRows(model));
}

export interface TableAudit {
  /** `floe.checkpoint-id` of every snapshot along main, oldest first. */
  checkpointIds: string[];
  liveDataFiles: number;
  liveDeleteFiles: number;
}

/**
 * Whole-history invariants: every file any snapshot of the table refers to exists (manifest lists,
 * manifests, data and delete files); no data file was added twice; no checkpoint id of a job appears
 * twice; at most one live DV per data file; v3 tables never got a Parquet position-delete file; every
 * DV decodes with the independent decoder with cardinality = record_count.
 */
export async function auditTable(table: CatalogTable, jobId?: string): Promise<TableAudit> {
  const m = table.metadata;
  const exists = (uri: string): boolean => fs.existsSync(localPath(uri));
  const addedData = new Map<string, bigint>();
  const checkedDvs = new Set<string>();
  for (const s of m.snapshots) {
    expect(exists(s.manifestList), `manifest list of snapshot ${s.snapshotId}`).toBe(true);
    for (const manifest of await readSnapshotManifests(table.io, s)) {
      expect(exists(manifest.path), `manifest ${manifest.path}`).toBe(true);
      const entries: ManifestEntry[] = await readManifestEntries(table.io, manifest);
      for (const e of entries) {
        const f = e.dataFile;
        if (e.status !== 'deleted') expect(exists(f.filePath), `${f.content} file ${f.filePath} of snapshot ${s.snapshotId}`).toBe(true);
        if (m.formatVersion >= 3 && f.content === 'position-deletes') expect(f.fileFormat, `v3 table got a position-delete file ${f.filePath}`).toBe('PUFFIN');
        if (e.status === 'added' && f.content === 'data') {
          const prev = addedData.get(f.filePath);
          expect(prev === undefined || prev === e.snapshotId, `data file ${f.filePath} added by snapshots ${prev} and ${e.snapshotId}`).toBe(true);
          addedData.set(f.filePath, e.snapshotId!);
        }
        if (f.fileFormat === 'PUFFIN' && !checkedDvs.has(`${f.filePath}#${f.contentOffset}`)) {
          checkedDvs.add(`${f.filePath}#${f.contentOffset}`);
          const bytes = readLocal(f.filePath);
          expect(BigInt(bytes.length)).toBe(f.fileSizeInBytes);
          const blob = decodePuffin(bytes).blobs.find((b) => BigInt(b.offset) === f.contentOffset)!;
          expect(blob, `DV blob at ${f.contentOffset} in ${f.filePath}`).toBeDefined();
          expect(BigInt(blob.length)).toBe(f.contentSizeInBytes);
          expect(blob.properties['referenced-data-file']).toBe(f.referencedDataFile);
          const positions = decodeDeletionVectorBlob(bytes.subarray(blob.offset, blob.offset + blob.length));
          expect(BigInt(positions.length)).toBe(f.recordCount);
          expect(blob.properties.cardinality).toBe(String(f.recordCount));
        }
      }
    }
  }
  // Live files of the current snapshot: one DV per data file at most.
  let liveData = 0;
  let liveDeletes = 0;
  const current = m.snapshots.find((s) => s.snapshotId === m.currentSnapshotId);
  if (current) {
    const dvTargets = new Set<string>();
    for (const manifest of await readSnapshotManifests(table.io, current)) {
      for (const e of await readManifestEntries(table.io, manifest)) {
        if (e.status === 'deleted') continue;
        if (e.dataFile.content === 'data') liveData++;
        else liveDeletes++;
        if (e.dataFile.fileFormat === 'PUFFIN') {
          expect(dvTargets.has(e.dataFile.referencedDataFile!), `two live DVs for ${e.dataFile.referencedDataFile}`).toBe(false);
          dvTargets.add(e.dataFile.referencedDataFile!);
        }
      }
    }
  }
  const chain: string[] = [];
  const byId = new Map(m.snapshots.map((s) => [s.snapshotId, s]));
  for (let s = current; s; s = s.parentSnapshotId === undefined ? undefined : byId.get(s.parentSnapshotId)) {
    const stamped = s.summary['floe.checkpoint-id'] !== undefined;
    if (stamped && (jobId === undefined || s.summary['floe.job-id'] === jobId)) chain.unshift(s.summary['floe.checkpoint-id']);
  }
  expect(new Set(chain).size, `checkpoint ids along main: ${chain.join(', ')}`).toBe(chain.length);
  return { checkpointIds: chain, liveDataFiles: liveData, liveDeleteFiles: liveDeletes };
}

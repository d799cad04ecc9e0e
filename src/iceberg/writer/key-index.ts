/**
 * The primary-key index of one table for deletion-vector upserts: key → (data file, row position)
 * of every live row. With it an UPDATE or DELETE of a row committed in an earlier checkpoint becomes
 * a deletion-vector entry on that row's data file (spec "Deletion Vectors": positions of one data
 * file, one DV per data file per snapshot) instead of an equality delete — which readers must apply
 * to every older file, and which PyIceberg cannot read at all.
 *
 * The lake is the truth, the index a cache of it: it is built from the table's live rows (the key
 * columns of each data file, deletes applied, with their positions) and says which snapshot it
 * matches (`snapshotId`). The writer changes it only through the delta of a commit that landed
 * (`apply`), so it stays exactly the table's state after that commit. When the table moved on
 * without floe (another writer's commit), the owner rebuilds it.
 *
 * Memory: one Map entry per live row (a number or a short string key, and one number: file index ×
 * 2^32 + position) plus one DataFile per data file. Bounded-memory spill to disk is not built yet.
 */
import type { Row } from '../../model/values.js';
import type { DataFile } from '../data-file.js';
import type { FileIO } from '../../io/file-io.js';
import { DeleteLoader } from '../scan/delete-loader.js';
import { planScan } from '../scan/scan-plan.js';
import { readTaskPositions } from '../scan/task-reader.js';
import { Schema } from '../schema.js';
import { ancestorsOf, currentSnapshot } from '../snapshot-ids.js';
import type { Snapshot, TableMetadata } from '../table-metadata.js';
import type { KeyId, TableKey } from './table-key.js';

const TWO_32 = 4294967296;

export interface IndexedRow {
  readonly file: DataFile;
  readonly pos: number;
}

/** What a landed commit changed: keys now at a new place, keys whose row is gone. */
export interface KeyIndexDelta {
  readonly set: readonly (readonly [KeyId, DataFile, number])[];
  readonly deleted: readonly KeyId[];
}

export class KeyIndex {
  private readonly files: DataFile[] = [];
  private readonly fileIds = new Map<string, number>();
  private readonly rows = new Map<KeyId, number>();

  constructor(
    /** The snapshot whose live rows the index holds (undefined: the table has none). */
    public snapshotId: bigint | undefined,
  ) {}

  get size(): number {
    return this.rows.size;
  }

  get(k: KeyId): IndexedRow | undefined {
    const packed = this.rows.get(k);
    if (packed === undefined) return undefined;
    return { file: this.files[Math.floor(packed / TWO_32)], pos: packed % TWO_32 };
  }

  set(k: KeyId, file: DataFile, pos: number): void {
    let id = this.fileIds.get(file.filePath);
    if (id === undefined) {
      id = this.files.push(file) - 1;
      this.fileIds.set(file.filePath, id);
    }
    this.rows.set(k, id * TWO_32 + pos);
  }

  delete(k: KeyId): void {
    this.rows.delete(k);
  }

  /** Applies a landed commit's delta; the index then matches `snapshotId`. */
  apply(delta: KeyIndexDelta, snapshotId: bigint | undefined): void {
    for (const k of delta.deleted) this.rows.delete(k);
    for (const [k, file, pos] of delta.set) this.set(k, file, pos);
    this.snapshotId = snapshotId;
  }
}

/** Summary counts of file changes (spec "Optional Snapshot Summary Fields"); a manifest rewrite has none. */
const FILE_CHANGE_KEYS = ['added-data-files', 'deleted-data-files', 'added-delete-files', 'removed-delete-files', 'added-records', 'deleted-records'];

/**
 * A manifest rewrite (maintenance/rewrite-manifests.ts, Java `RewriteManifests`): operation
 * `replace` carrying Java's `manifests-replaced` count and no added or removed file. It moves
 * entries between manifests and leaves every live row in its file at its position. A `replace`
 * without those marks may be a compaction (which moves rows) and never counts.
 */
function isManifestRewrite(s: Snapshot): boolean {
  const sum = s.summary;
  if (sum.operation !== 'replace' || sum['manifests-replaced'] === undefined) return false;
  return FILE_CHANGE_KEYS.every((k) => sum[k] === undefined || sum[k] === '0');
}

/**
 * Whether an index of snapshot `from` also matches snapshot `to`: `to` is `from`, or descends from it
 * through manifest rewrites only. floe's maintenance rewrites manifests between checkpoints; without
 * this every rewrite would cost the next checkpoint a rebuild of the index (a read of every data
 * file's key column).
 */
export function indexStillMatches(metadata: TableMetadata, from: bigint | undefined, to: bigint | undefined): boolean {
  if (from === to) return true;
  if (from === undefined || to === undefined) return false;
  for (const s of ancestorsOf(metadata, to)) {
    if (s.snapshotId === from) return true;
    if (!isManifestRewrite(s)) return false;
  }
  return false; // `from` is not an ancestor (expired, or another branch of history)
}

/**
 * Builds the index of the table's current snapshot: reads the key columns of every live data file
 * (deletion vectors, position and equality deletes applied) with the rows' positions.
 */
export async function buildKeyIndex(table: { io: FileIO; metadata: TableMetadata }, key: TableKey): Promise<KeyIndex> {
  const m = table.metadata;
  const index = new KeyIndex(currentSnapshot(m)?.snapshotId);
  const plan = await planScan(table.io, m);
  if (plan.tasks.length === 0) return index;
  // only the key columns, in schema order: each read row is then the key's values (TableKey.encode)
  const keySchema = new Schema(plan.schema.schemaId, key.fieldIds.map((id) => plan.schema.findField(id)!), []);
  const loader = new DeleteLoader(table.io, plan.schema, m.schemas);
  const ctx = { io: table.io, schema: keySchema, schemas: m.schemas, specs: m.partitionSpecs, loader };
  for (const task of plan.tasks) {
    for await (const batch of readTaskPositions(task, ctx)) {
      const rows: Row[] = batch.rows;
      for (let i = 0; i < rows.length; i++) index.set(key.encode(rows[i], 'indexed key'), task.file, batch.positions ? batch.positions[i] : batch.firstPosition + i);
    }
  }
  return index;
}

/**
 * The foreign-key indexes of one `ON DELETE CASCADE` child table (value-index.ts): for each set of
 * foreign-key columns the pipeline matches child rows on (`matchFields`), the FK values → the places
 * of the live rows holding them, each with its primary key (`owner`). With them a parent's delete
 * becomes deletion-vector entries on exactly the committed child rows that reference it, through the
 * child's key index (keyed-change-writer.ts `deleteCommittedKey`) — not an equality delete on the FK
 * columns, which PyIceberg cannot read. Kept by the child's committer (table-committer.ts), for
 * format-v3 tables whose writers have a key index.
 *
 * - built from the lake (the FK and primary-key columns of the live rows, deletes applied) when
 *   a checkpoint with cascades commits and there is none of the key index's snapshot; in memory only
 *   (a restart builds it again), and within `keyIndex.memoryMaxBytes` — beyond, none is kept and
 *   cascades write equality deletes, with a warning;
 * - moved by each commit that landed straight on top of its snapshot: the rows the checkpoint wrote
 *   (with their FK values) are added, the positions its deletion vectors removed go dead; any other
 *   commit (another writer's, one with equality deletes) and floe's compaction drop it.
 */
import type { Row } from '../../model/values.js';
import type { TableIdentifier } from '../metadata/catalog.js';
import { identifierToString } from '../metadata/catalog.js';
import { DeleteLoader } from '../scan/delete-loader.js';
import { planScan } from '../scan/scan-plan.js';
import { readTaskPositions } from '../scan/task-reader.js';
import { Schema } from '../spec/schema.js';
import { currentSnapshot } from '../spec/snapshot-ids.js';
import type { CatalogTable, CommitResult } from '../table/index.js';
import { encodeKey } from './row-key.js';
import { indexStillMatches } from './key-index.js';
import { DEFAULT_MEMORY_MAX_BYTES, type KeyIndexOptions } from './key-index-options.js';
import { MemoryValueIndex } from './memory-value-index.js';
import { TableKey, type KeyId } from './table-key.js';
import { NO_VALUE_MOVES, type ValueEntry, type ValueIndex, type ValueIndexDelta } from './value-index.js';

/** One FK column set of a child table: its field ids in schema order, joined (delete-matching.ts `MatchFields.key`). */
export type FkFieldsKey = string;

/** What a landed commit changed, as the FK indexes follow it. */
export interface FkIndexCommit {
  /** Per FK column set, the rows the checkpoint wrote and the committed rows its DVs removed. */
  readonly deltas: ReadonlyMap<FkFieldsKey, ValueIndexDelta>;
  readonly equalityDeletes: boolean;
}

/** Builds the FK indexes of `sets` (field ids in schema order) for the table's current snapshot. */
async function buildFkIndexes(table: CatalogTable, schema: Schema, sets: readonly (readonly number[])[]): Promise<Map<FkFieldsKey, MemoryValueIndex>> {
  const m = table.metadata;
  const snapshotId = currentSnapshot(m)?.snapshotId;
  const out = new Map<FkFieldsKey, MemoryValueIndex>(sets.map((ids) => [ids.join(','), new MemoryValueIndex(snapshotId)]));
  const key = TableKey.identifier(schema);
  const ids = [...new Set([...sets.flat(), ...key.fieldIds])];
  const fields = schema.fields.filter((f) => ids.includes(f.id));
  const readSchema = new Schema(schema.schemaId, fields, []);
  const at = (id: number) => fields.findIndex((f) => f.id === id);
  const fkAt = sets.map((set) => ({ index: out.get(set.join(','))!, positions: set.map(at), types: set.map((id) => schema.findField(id)!.type) }));
  const keyAt = key.fieldIds.map(at);
  const ctx = { io: table.io, schema: readSchema, schemas: m.schemas, specs: m.partitionSpecs, loader: new DeleteLoader(table.io, schema, m.schemas) };
  const plan = await planScan(table.io, m);
  for (const task of plan.tasks) {
    const entries = fkAt.map(() => [] as ValueEntry[]);
    for await (const batch of readTaskPositions(task, ctx)) {
      const rows: Row[] = batch.rows;
      for (let i = 0; i < rows.length; i++) {
        const row = rows[i]!;
        const pos = batch.positions ? batch.positions[i]! : batch.firstPosition + i;
        const owner: KeyId = key.encode(keyAt.map((p) => row[p] ?? null), 'indexed key');
        fkAt.forEach((fk, j) => {
          const values = fk.positions.map((p) => row[p] ?? null);
          if (values.some((v) => v === null)) return; // a null FK references nothing
          entries[j]!.push({ value: encodeKey(fk.types, values, 'foreign key'), file: task.file, pos, owner });
        });
      }
    }
    fkAt.forEach((fk, j) => fk.index.addRows(entries[j]!));
  }
  return out;
}

export class FkIndexLifecycle {
  private indexes: Map<FkFieldsKey, MemoryValueIndex> | undefined;
  private snapshotId: bigint | undefined;
  private schemaId: number | undefined;
  private outgrown = false;
  private readonly name: string;
  /** Times the indexes were built from the lake (tests). */
  built = 0;

  constructor(
    identifier: TableIdentifier,
    private readonly options: KeyIndexOptions,
  ) {
    this.name = identifierToString(identifier);
  }

  /**
   * The FK indexes of `sets` for the snapshot `snapshotId` the child's key index matches (`table`'s
   * head, or one only manifest rewrites lead on from); undefined when there can be none (the caller
   * then writes equality deletes).
   */
  async forSnapshot(table: CatalogTable, snapshotId: bigint | undefined, sets: readonly (readonly number[])[]): Promise<ReadonlyMap<FkFieldsKey, ValueIndex> | undefined> {
    const m = table.metadata;
    const schema = m.schemas.find((x) => x.schemaId === m.currentSchemaId);
    const head = currentSnapshot(m)?.snapshotId;
    if (this.outgrown || !schema || !indexStillMatches(m, snapshotId, head)) return undefined;
    const wanted = sets.map((s) => s.join(','));
    if (this.indexes && this.schemaId === m.currentSchemaId && indexStillMatches(m, this.snapshotId, head) && wanted.every((k) => this.indexes!.has(k))) return this.indexes;
    this.drop();
    this.indexes = await buildFkIndexes(table, schema, sets);
    this.snapshotId = head;
    this.schemaId = m.currentSchemaId;
    this.built++;
    return this.keepWithinMemory() ? this.indexes : undefined;
  }

  /** The indexes follow the commit that landed straight on top of their snapshot; otherwise they are dropped. */
  afterCommit(result: CommitResult, committed: FkIndexCommit | undefined): void {
    const indexes = this.indexes;
    if (!indexes) return;
    // a column set the writer recorded no rows of (a foreign key added meanwhile) would miss its rows
    const unrecorded = committed !== undefined && [...indexes.keys()].some((k) => !committed.deltas.has(k));
    if (result.status !== 'committed' || committed?.equalityDeletes || unrecorded || !indexStillMatches(result.table.metadata, this.snapshotId, result.snapshot.parentSnapshotId)) {
      this.drop();
      return;
    }
    for (const [k, index] of indexes) {
      index.apply(committed?.deltas.get(k) ?? NO_VALUE_MOVES, result.snapshot.snapshotId);
    }
    this.snapshotId = result.snapshot.snapshotId;
    this.keepWithinMemory();
  }

  drop(): void {
    this.indexes = undefined;
    this.snapshotId = undefined;
    this.schemaId = undefined;
  }

  private keepWithinMemory(): boolean {
    const indexes = this.indexes;
    if (!indexes) return false;
    const bytes = [...indexes.values()].reduce((n, x) => n + x.memoryBytes, 0);
    const max = this.options.keyIndex?.memoryMaxBytes ?? DEFAULT_MEMORY_MAX_BYTES;
    if (bytes <= max) return true;
    // Delivery note: cascades then write equality deletes on the FK columns (unreadable by PyIceberg).
    this.options.warn?.(`${this.name}: its foreign-key indexes take ${bytes} bytes, more than iceberg.keyIndex.memoryMaxBytes (${max}); from now on its cascaded deletes write equality deletes on the foreign-key columns`);
    this.outgrown = true;
    this.drop();
    return false;
  }
}

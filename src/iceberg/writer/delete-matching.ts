/**
 * "Delete every row whose columns F equal values V" for the upsert writer — how floe applies the
 * child deletes of a MySQL `ON DELETE CASCADE` that the binlog does not carry (source cascade.ts).
 *
 * In one checkpoint a matching delete becomes:
 * - an equality delete with `equality_ids` = the field ids of F (schema order) and the row V: it
 *   removes matching rows committed in EARLIER snapshots. Spec "Equality Delete Files": any
 *   primitive non-float columns may be equality fields, optional ones included, and a delete
 *   applies to data files with a strictly lower data sequence number only (spec "Scan Planning");
 * - position deletes (v2) / deletion-vector positions (v3) for rows written EARLIER IN THIS
 *   checkpoint with F = V — the equality delete cannot reach them (same sequence number). For that
 *   the writer keeps a secondary index F-values → row locations, only for the field sets it is told
 *   about (`TableChangeWriterOptions.matchFields`: the FK columns of cascade child tables), because
 *   the index must exist before the rows are written.
 * Rows written AFTER the matching delete in the same checkpoint are untouched, as in MySQL (a child
 * inserted after its parent was deleted and re-created stays).
 *
 * With deletion vectors (a v3 child with a key index, or a keyless one with a row index) the rows
 * of earlier snapshots are not equality-deleted: `apply` hands their FK value to `defer`, and the
 * table writer locates them at the commit through the child's FK index (checkpoint/value-indexes.ts)
 * — or, when there is none, writes the equality delete then (`addEquality`). The rows written are
 * then also recorded with their identity (`writtenRows`: the primary key, or the whole row of a
 * keyless child), for the FK index to follow the commit.
 *
 * Equality-delete files are one `EqualityDeleteSink` (equality-delete-sink.ts) per field set (an equality-delete file has one set
 * of equality ids). For partitioned tables they are global (unpartitioned spec), like the writer's
 * key deletes.
 */
import type { FileIO } from '../../io/file-io.js';
import { FloeError } from '../../util/errors.js';
import type { Row, Value } from '../../model/values.js';
import type { DataFile } from '../spec/data-file.js';
import type { ParquetWriterOptions } from '../parquet/file-writer-options.js';
import type { LocationProvider } from '../parquet/rolling-writer.js';
import type { Schema } from '../spec/schema.js';
import type { IcebergType } from '../spec/types.js';
import { isEqualityFieldType } from '../spec/primitive-behaviour.js';
import type { RowLocation } from './positional-data-writer.js';
import { encodeKey } from '../keyindex/row-key.js';
import type { KeyId } from '../keyindex/table-key.js';
import { EqualityDeleteSink } from './equality-delete-sink.js';

const SUBSYSTEM = 'iceberg.writer';

/** The writer change: delete every live row whose `fields` (top-level names) equal `values`. */
export interface MatchingDelete {
  op: 'delete-matching';
  /** Top-level field names of the table's current schema; at least one. */
  fields: readonly string[];
  /** Values aligned with `fields` (value model of each field's type); nulls match nothing and are refused. */
  values?: readonly Value[];
  /**
   * Instead of `values`: a row in the table schema's field order that holds the values at the
   * fields' positions (other positions are ignored) — what a pipeline gets by projecting a sparse
   * source row through its column mapping and transforms.
   */
  row?: Row;
  /** Absent (declared so that code reading `change.before` of any change type-checks). */
  before?: undefined;
  after?: undefined;
  key?: undefined;
}

export function deleteMatching(fields: readonly string[], values: readonly Value[]): MatchingDelete {
  // (a change built from a projected row: { op: 'delete-matching', fields, row })
  return { op: 'delete-matching', fields, values };
}

/** A field set resolved against the schema: positions and ids in schema order. */
export interface MatchFields {
  /** Canonical id of the set: its field ids in schema order, joined. */
  readonly key: string;
  readonly positions: readonly number[];
  readonly fieldIds: readonly number[];
  readonly types: readonly IcebergType[];
  readonly names: readonly string[];
}

/** Resolves top-level field names (case-sensitive first, then case-insensitive, as MySQL names compare). */
function resolveMatchFields(schema: Schema, names: readonly string[], what = 'delete-matching'): MatchFields {
  if (names.length === 0) throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: expected at least one field to match on`);
  const found: number[] = [];
  for (const name of names) {
    let pos = schema.fields.findIndex((f) => f.name === name);
    if (pos < 0) pos = schema.fields.findIndex((f) => f.name.toLowerCase() === name.toLowerCase());
    if (pos < 0) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: field ${JSON.stringify(name)} is not a top-level field of schema ${schema.schemaId} (fields: ${schema.fields.map((f) => f.name).join(', ')}); is the FK column dropped by a column transform?`);
    }
    const t = schema.fields[pos]!.type;
    if (!isEqualityFieldType(t)) {
      throw new FloeError(SUBSYSTEM, 'unsupported', `${what}: field ${name} is ${t.kind}; equality deletes can only match primitive non-float columns (spec "Equality Delete Files")`);
    }
    if (found.includes(pos)) throw new FloeError(SUBSYSTEM, 'invalid-argument', `${what}: field ${name} is named twice`);
    found.push(pos);
  }
  const order = found.map((pos, i) => ({ pos, i })).sort((a, b) => a.pos - b.pos);
  const positions = order.map((o) => o.pos);
  const fields = positions.map((p) => schema.fields[p]!);
  const fieldIds = fields.map((f) => f.id);
  return { key: fieldIds.join(','), positions, fieldIds, types: fields.map((f) => f.type), names: fields.map((f) => f.name) };
}

/** Values of a MatchingDelete reordered to the schema order of its resolved fields. */
function valuesInSchemaOrder(change: MatchingDelete, m: MatchFields, schema: Schema): Value[] {
  const row = change.row;
  const values = change.values;
  if (row !== undefined && row.length !== schema.fields.length) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `delete-matching: the row has ${row.length} values, expected ${schema.fields.length} (schema ${schema.schemaId} field order)`);
  }
  if (row === undefined && (values === undefined || values.length !== change.fields.length)) {
    throw new FloeError(SUBSYSTEM, 'invalid-argument', `delete-matching: ${change.fields.length} field(s) but ${values?.length ?? 'no'} value(s)`);
  }
  return m.positions.map((pos) => {
    const name = schema.fields[pos]!.name;
    const i = change.fields.findIndex((n) => n === name || n.toLowerCase() === name.toLowerCase());
    const v = row !== undefined ? row[pos] : values![i];
    if (v === null || v === undefined) {
      throw new FloeError(SUBSYSTEM, 'invalid-argument', `delete-matching: value of ${name} is null; a matching delete needs non-null values (a null FK references nothing)`);
    }
    return v;
  });
}

export interface MatchingDeletesOptions {
  io: FileIO;
  locations: LocationProvider;
  /** File names `mdel-<n>-<tag>-<00001>.parquet`. */
  tag: string;
  targetFileSizeBytes: number;
  parquet?: ParquetWriterOptions;
  /** Field-name sets whose rows written in this checkpoint are indexed (cascade child FK columns). */
  indexed?: readonly (readonly string[])[];
  /** With deletion vectors: the identity of a row written (primary key, or whole row), recorded with its FK values (`writtenRows`). */
  ownerOf?: (row: Row) => KeyId;
  /** The values of a row written that a removal must report (cascade-removals.ts): the columns other tables reference. */
  carried?: (row: Row) => Value[];
}

/** A row written in this checkpoint with its FK value of one column set and its identity (`ownerOf`). */
interface WrittenRow {
  readonly value: KeyId;
  readonly loc: RowLocation;
  readonly owner: KeyId;
  /** `MatchingDeletesOptions.carried` of the row. */
  readonly carried?: Value[];
}

/**
 * The matching-delete state of one table for one checkpoint: the secondary indexes and the
 * equality-delete writers. The table writer calls `record` for every data row it writes and
 * `apply` for every `delete-matching` change.
 */
export class MatchingDeletes {
  private readonly indexes: { fields: MatchFields; rows: Map<string, WrittenRow[]>; written: WrittenRow[] }[] = [];
  /** One equality-delete sink per field set (an equality-delete file has one set of equality ids). */
  private readonly writers = new Map<string, EqualityDeleteSink>();
  /** Equality deletes written (rows in the delete files). */
  equalityDeletes = 0;
  /** Rows of this checkpoint removed by position. */
  positionDeletes = 0;

  constructor(
    private readonly schema: Schema,
    private readonly options: MatchingDeletesOptions,
  ) {
    for (const names of options.indexed ?? []) {
      const fields = resolveMatchFields(schema, names, 'matchFields');
      if (!this.indexes.some((x) => x.fields.key === fields.key)) this.indexes.push({ fields, rows: new Map(), written: [] });
    }
  }

  get isEmpty(): boolean {
    return this.equalityDeletes === 0;
  }

  /** The FK column sets indexed: field ids in schema order. */
  get fieldSets(): number[][] {
    return this.indexes.map((x) => [...x.fields.fieldIds]);
  }

  /** Indexes a data row written in this checkpoint at `loc`. */
  record(row: Row, loc: RowLocation): void {
    const owner = this.indexes.length > 0 ? this.options.ownerOf?.(row) : undefined;
    for (const ix of this.indexes) {
      const values = ix.fields.positions.map((p) => row[p] ?? null);
      if (values.some((v) => v === null)) continue; // a NULL never equals a matching value
      const k = encodeKey(ix.fields.types, values, 'matching-delete index');
      const at: WrittenRow = { value: k, loc, owner: owner ?? k, carried: this.options.carried?.(row) };
      if (owner !== undefined) ix.written.push(at);
      const list = ix.rows.get(k);
      if (list) list.push(at);
      else ix.rows.set(k, [at]);
    }
  }

  /**
   * Applies one matching delete: rows of this checkpoint with those values are removed by position
   * (through `deleteAt`; their carried values go to `removed`), older rows by an equality delete.
   */
  async apply(change: MatchingDelete, deleteAt: (loc: RowLocation) => void, defer?: (fieldsKey: string, value: KeyId, values: readonly Value[]) => void, removed?: Value[][]): Promise<void> {
    const fields = resolveMatchFields(this.schema, change.fields);
    const values = valuesInSchemaOrder(change, fields, this.schema);
    const ix = this.indexes.find((x) => x.fields.key === fields.key);
    if (!ix) {
      throw new FloeError(
        SUBSYSTEM,
        'invalid-argument',
        `delete-matching on (${fields.names.join(', ')}): the writer does not index these fields, so rows written earlier in this checkpoint could not be removed; open the table with matchFields including [${fields.names.join(', ')}]`,
      );
    }
    const k = encodeKey(fields.types, values, 'delete-matching');
    const rows = ix.rows.get(k);
    if (rows) {
      ix.rows.delete(k);
      for (const { loc, carried } of rows) {
        if (loc.file.deleted?.has(loc.pos)) continue; // superseded already
        deleteAt(loc);
        if (carried) removed?.push(carried);
        this.positionDeletes++;
      }
    }
    if (defer) defer(fields.key, k, values);
    else await this.addEquality(fields.key, values);
  }

  /** The equality delete of rows of earlier snapshots whose FK columns `fieldsKey` hold `values` (schema order). */
  async addEquality(fieldsKey: string, values: readonly Value[]): Promise<void> {
    const fields = this.indexes.find((x) => x.fields.key === fieldsKey)!.fields;
    let w = this.writers.get(fields.key);
    if (!w) {
      const o = this.options;
      w = new EqualityDeleteSink(this.schema, fields.fieldIds, { io: o.io, locations: o.locations, fileNamePrefix: `mdel-${this.writers.size}-${o.tag}`, targetFileSizeBytes: o.targetFileSizeBytes, parquet: o.parquet });
      this.writers.set(fields.key, w);
    }
    this.equalityDeletes++;
    await w.addOne([...values]);
  }

  /**
   * The rows of this checkpoint still live, per FK column set, with their FK values and identities
   * (recorded with `ownerOf`); call after the data files are finished.
   */
  writtenRows(): Map<string, { value: KeyId; file: DataFile; pos: number; owner: KeyId }[]> {
    const out = new Map<string, { value: KeyId; file: DataFile; pos: number; owner: KeyId }[]>();
    for (const ix of this.indexes) {
      out.set(
        ix.fields.key,
        ix.written.filter((w) => w.loc.file.dataFile !== undefined && !w.loc.file.deleted?.has(w.loc.pos)).map((w) => ({ value: w.value, file: w.loc.file.dataFile!, pos: w.loc.pos, owner: w.owner })),
      );
    }
    return out;
  }

  /** Finishes the equality-delete files (spec id of the caller's choosing: unpartitioned). */
  async close(specId: number): Promise<DataFile[]> {
    const out: DataFile[] = [];
    // specId set on the finished files: the unpartitioned spec
    for (const w of this.writers.values()) out.push(...(await w.close(specId)));
    this.writers.clear();
    for (const ix of this.indexes) ix.rows.clear();
    return out;
  }

  async abort(): Promise<void> {
    for (const w of this.writers.values()) await w.abort();
    this.writers.clear();
    for (const ix of this.indexes) {
      ix.rows.clear();
      ix.written.length = 0;
    }
  }
}

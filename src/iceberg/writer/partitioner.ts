/**
 * Routes rows to partitions: the partition tuple of a row under a spec (transforms of top-level source
 * columns, format/spec.md "Partitioning"), a canonical string of that tuple to group writers by, and
 * the partition directory name Java gives it (`PartitionSpec.partitionToPath`: `name=value` pairs with
 * the transform's human string, URL-encoded). The directory is cosmetic — readers take partition
 * values from manifests — but matching Java keeps tables familiar to people browsing storage.
 */
import { FloeError } from '../../util/errors.js';
import { formatDate, formatTime, formatTimestamp, formatTimestampNs, type Row, type Value } from '../../model/values.js';
import type { PartitionSpec, Transform } from '../spec/partition.js';
import { transformResultType } from '../spec/partition.js';
import type { Schema } from '../spec/schema.js';
import { transformFunction } from '../spec/transforms.js';
import { isPrimitive, type PrimitiveType } from '../spec/types.js';
import { encodeKey } from '../keyindex/row-key.js';

const SUBSYSTEM = 'iceberg.writer';

export interface PartitionOf {
  /** Partition tuple in spec field order. */
  values: Value[];
  /** The tuple's key (`keyOf`). */
  key: PartitionKey;
}

/**
 * Identifies a partition tuple among those of one spec: a canonical string of the tuple ('' for an
 * unpartitioned spec), or — for a spec of one field whose values are integers (bucket, year, month,
 * day, hour, identity of an int or date) — the value itself, which is cheaper per row than a string.
 * Keys of different specs are never compared.
 */
export type PartitionKey = string | number;

export class Partitioner {
  readonly spec: PartitionSpec;
  private readonly positions: number[];
  private readonly fns: ((v: Value) => Value)[];
  private readonly resultTypes: PrimitiveType[];
  private readonly transforms: Transform[];
  private readonly names: string[];
  private readonly unpartitioned: PartitionOf = { values: [], key: '' };
  /** The one field's transform when the spec has one field with integer values, else undefined. */
  private readonly integerField: ((v: Value) => Value) | undefined;
  private readonly integerPosition: number;

  constructor(schema: Schema, spec: PartitionSpec) {
    this.spec = spec;
    this.positions = [];
    this.fns = [];
    this.resultTypes = [];
    this.transforms = [];
    this.names = [];
    for (const pf of spec.fields) {
      const index = schema.indexOfTopLevel(pf.sourceId);
      if (index < 0) {
        throw new FloeError(SUBSYSTEM, 'unsupported', `partition field ${pf.name} has source column ${pf.sourceId}, which is not a top-level column of schema ${schema.schemaId}; floe partitions by top-level columns only`);
      }
      const sourceField = schema.fields[index]!;
      const source = sourceField.type;
      if (!isPrimitive(source)) {
        throw new FloeError(SUBSYSTEM, 'unsupported', `partition field ${pf.name}: source column ${sourceField.name} is a ${source.kind}`);
      }
      this.positions.push(index);
      this.fns.push(transformFunction(pf.transform, source));
      this.resultTypes.push(transformResultType(pf.transform, source));
      this.transforms.push(pf.transform);
      this.names.push(pf.name);
    }
    const only = this.resultTypes.length === 1 ? this.resultTypes[0]!.kind : undefined;
    this.integerField = only === 'int' || only === 'date' ? this.fns[0] : undefined;
    this.integerPosition = this.positions[0] ?? -1;
  }

  /** The key of a row's partition, without the tuple (the per-row part of routing a row). */
  keyOf(row: Row): PartitionKey {
    const f = this.integerField;
    if (f) {
      const v = f(row[this.integerPosition] ?? null);
      // null cannot collide with an integer key
      return v === null ? 'null' : (v as number);
    }
    if (this.positions.length === 0) return '';
    return encodeKey(this.resultTypes, this.positions.map((p, i) => this.fns[i]!(row[p] ?? null)), 'partition');
  }

  get isUnpartitioned(): boolean {
    return this.positions.length === 0;
  }

  /** The partition of a row (per row: no directory name, which only a new partition needs). */
  partitionOf(row: Row): PartitionOf {
    if (this.positions.length === 0) return this.unpartitioned;
    const values = this.positions.map((p, i) => this.fns[i]!(row[p] ?? null));
    return { values, key: this.integerField ? (values[0] === null ? 'null' : (values[0] as number)) : encodeKey(this.resultTypes, values, 'partition') };
  }

  /** Directory under data/ of a partition tuple ('' for an unpartitioned spec). */
  pathOf(values: readonly Value[]): string {
    if (this.positions.length === 0) return '';
    return values
      .map((v, i) => `${escape(this.names[i]!)}=${escape(humanString(this.transforms[i]!, this.resultTypes[i]!, v))}`)
      .join('/');
  }
}

/** Java `URLEncoder.encode(s, UTF-8)` (space as '+', `*-._` kept). */
function escape(s: string): string {
  return encodeURIComponent(s).replace(/[!'()~]/g, (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase()).replace(/%20/g, '+');
}

/** Java `Transform.toHumanString` for partition values. */
function humanString(transform: Transform, type: PrimitiveType, v: Value): string {
  if (v === null) return 'null';
  switch (transform.kind) {
    case 'year':
      return String(1970 + (v as number));
    case 'month': {
      const m = v as number;
      const year = 1970 + Math.floor(m / 12);
      return `${year}-${String((((m % 12) + 12) % 12) + 1).padStart(2, '0')}`;
    }
    case 'day':
      return formatDate(v as number);
    case 'hour': {
      const h = v as number;
      const day = Math.floor(h / 24);
      return `${formatDate(day)}-${String(h - day * 24).padStart(2, '0')}`;
    }
    default:
      break;
  }
  switch (type.kind) {
    case 'date':
      return formatDate(v as number);
    case 'time':
      return formatTime(v as bigint);
    case 'timestamp':
      return formatTimestamp(v as bigint);
    case 'timestamptz':
      return `${formatTimestamp(v as bigint)}+00:00`;
    case 'timestamp_ns':
      return formatTimestampNs(v as bigint);
    case 'timestamptz_ns':
      return `${formatTimestampNs(v as bigint)}+00:00`;
    case 'binary':
    case 'fixed':
      return base64(v as Uint8Array);
    default:
      return String(v);
  }
}

function base64(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]!);
  return btoa(s);
}

/**
 * Partition specs (format/spec.md "Partitioning", "Partition Transforms"). A spec maps source columns
 * through transforms to partition fields whose ids start at 1000. The transform functions themselves
 * live in `transforms.ts`; this module is the model and the partition tuple's type.
 */
import { FloeError } from '../../util/errors.js';
import type { Schema } from './schema.js';
import { Types, type IcebergType, type NestedField, type PrimitiveType, type StructType } from './types.js';

/** Transform as written in metadata: identity, bucket[N], truncate[W], year, month, day, hour, void. */
export type Transform =
  | { kind: 'identity' }
  | { kind: 'bucket'; n: number }
  | { kind: 'truncate'; width: number }
  | { kind: 'year' }
  | { kind: 'month' }
  | { kind: 'day' }
  | { kind: 'hour' }
  | { kind: 'void' };

export interface PartitionField {
  sourceId: number;
  fieldId: number;
  name: string;
  transform: Transform;
}

export interface PartitionSpec {
  specId: number;
  fields: readonly PartitionField[];
}

/** Spec: partition field ids start at 1000; an unpartitioned table's last assigned id is 999. */
export const PARTITION_FIELD_ID_START = 1000;
export const UNPARTITIONED_LAST_ASSIGNED_ID = 999;

export const UNPARTITIONED: PartitionSpec = Object.freeze({ specId: 0, fields: Object.freeze([]) as readonly PartitionField[] });

export function isUnpartitioned(spec: PartitionSpec): boolean {
  return spec.fields.every((f) => f.transform.kind === 'void');
}

export function transformToString(t: Transform): string {
  switch (t.kind) {
    case 'bucket':
      return `bucket[${t.n}]`;
    case 'truncate':
      return `truncate[${t.width}]`;
    default:
      return t.kind;
  }
}

export function parseTransform(text: string): Transform {
  const s = text.trim().toLowerCase();
  let m = /^bucket\[(\d+)\]$/.exec(s);
  if (m) return { kind: 'bucket', n: Number(m[1]) };
  m = /^truncate\[(\d+)\]$/.exec(s);
  if (m) return { kind: 'truncate', width: Number(m[1]) };
  if (['identity', 'year', 'month', 'day', 'hour', 'void'].includes(s)) return { kind: s } as Transform;
  throw new FloeError('iceberg.partition', 'unsupported', `unknown partition transform ${JSON.stringify(text)}; expected identity, bucket[N], truncate[W], year, month, day, hour or void`);
}

/**
 * Result type of a transform applied to a source type (spec "Partition Transforms" table; Java
 * `Transform.getResultType`): identity/truncate keep the source type, bucket/year/month/hour give int,
 * day gives date.
 */
export function transformResultType(t: Transform, source: PrimitiveType): PrimitiveType {
  switch (t.kind) {
    case 'identity':
    case 'truncate':
    case 'void':
      return source;
    case 'bucket':
    case 'year':
    case 'month':
    case 'hour':
      return Types.int;
    case 'day':
      return Types.date;
  }
}

/** The partition tuple's struct type: one optional field per partition field, id = partition field id. */
export function partitionType(spec: PartitionSpec, schema: Schema): StructType {
  const fields: NestedField[] = spec.fields.map((pf) => {
    const source = schema.findField(pf.sourceId);
    if (!source) {
      throw new FloeError('iceberg.partition', 'invalid-data', `partition field ${pf.name} refers to source column ${pf.sourceId}, which schema ${schema.schemaId} does not have`);
    }
    const srcType = source.type as IcebergType;
    if (srcType.kind === 'struct' || srcType.kind === 'list' || srcType.kind === 'map') {
      throw new FloeError('iceberg.partition', 'invalid-data', `partition field ${pf.name}: source column ${source.name} is a ${srcType.kind}; expected a primitive`);
    }
    return { id: pf.fieldId, name: pf.name, required: false, type: transformResultType(pf.transform, srcType) };
  });
  return { kind: 'struct', fields };
}

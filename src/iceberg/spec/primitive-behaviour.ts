/**
 * One table of what each primitive type is to floe, instead of the same switch over primitive kinds
 * repeated wherever values are compared, keyed or stored:
 *
 * - `value`: how the value model holds it (src/model/values.ts) — the family whose members compare
 *   (spec/value-compare.ts, Java `Comparators`), canonicalise as row keys (keyindex/row-key.ts) and
 *   key equality-delete / partition tuples (scan/value-keys.ts) the same way: int and date as a JS
 *   integer; long, time and the timestamps as a bigint; float and double as a number; decimal as
 *   text at its scale; string; uuid as hex text; binary and fixed as bytes;
 * - `column`: the Parquet column builder of the type (parquet/column-builders.ts): uuid and fixed as
 *   fixed-length bytes, string and binary as variable-length bytes, each other family its own;
 * - `equalityField`: whether an equality delete may use the column (spec "Equality Delete Files":
 *   primitive, not float or double; `unknown` holds only nulls).
 *
 * Per-kind decisions that are not shared (the Arrow type of each kind, single-value serialisation,
 * transforms) stay with their code.
 */
import type { IcebergType, PrimitiveType } from './types.js';

/** The decimal type (its scale: what a decimal value family member needs beyond the family). */
export type DecimalType = Extract<PrimitiveType, { kind: 'decimal' }>;

export type ValueFamily = 'boolean' | 'int' | 'long' | 'float' | 'decimal' | 'string' | 'uuid' | 'bytes' | 'unknown';
type ColumnFamily = 'boolean' | 'int32' | 'int64' | 'float' | 'decimal' | 'fixed' | 'variable' | 'unknown';

export interface PrimitiveBehaviour {
  readonly value: ValueFamily;
  readonly column: ColumnFamily;
  readonly equalityField: boolean;
}

const of = (value: ValueFamily, column: ColumnFamily, equalityField = true): PrimitiveBehaviour => Object.freeze({ value, column, equalityField });

export const PRIMITIVE_BEHAVIOUR: Readonly<Record<PrimitiveType['kind'], PrimitiveBehaviour>> = Object.freeze({
  boolean: of('boolean', 'boolean'),
  int: of('int', 'int32'),
  date: of('int', 'int32'),
  long: of('long', 'int64'),
  time: of('long', 'int64'),
  timestamp: of('long', 'int64'),
  timestamptz: of('long', 'int64'),
  timestamp_ns: of('long', 'int64'),
  timestamptz_ns: of('long', 'int64'),
  float: of('float', 'float', false),
  double: of('float', 'float', false),
  decimal: of('decimal', 'decimal'),
  string: of('string', 'variable'),
  uuid: of('uuid', 'fixed'),
  fixed: of('bytes', 'fixed'),
  binary: of('bytes', 'variable'),
  unknown: of('unknown', 'unknown', false),
});

/** The behaviour of a type; undefined for struct, list and map. */
export function behaviourOf(type: IcebergType): PrimitiveBehaviour | undefined {
  return (PRIMITIVE_BEHAVIOUR as Partial<Record<IcebergType['kind'], PrimitiveBehaviour>>)[type.kind];
}

/** Whether an equality delete may use a column of this type (spec "Equality Delete Files"). */
export function isEqualityFieldType(type: IcebergType): boolean {
  return behaviourOf(type)?.equalityField ?? false;
}

/**
 * Keys that make values comparable through a JS `Set`/`Map`: equality-delete tuples and partition
 * tuples. Values are compared by their Iceberg type (spec "Scan Planning"; Java `StructLikeSet`):
 * bytes by content, longs exactly, decimals by unscaled value (scale is fixed per column), NULL equal
 * to NULL, floats by bit pattern with NaNs normalised (partition equality, spec note 3).
 */
import { toHex, type Value } from '../../model/values.js';
import { toBinary } from '../spec/single-value.js';
import type { IcebergType } from '../spec/types.js';
import { behaviourOf } from '../spec/primitive-behaviour.js';

function valueKey(type: IcebergType, v: Value): string {
  if (v === null || v === undefined) return 'n';
  switch (behaviourOf(type)?.value) {
    case 'string':
      return `s${v as string}`;
    case 'int':
    case 'long':
      // One form for the integer family, so that an int column promoted to long still matches keys
      // read with the older type.
      return `i${String(v)}`;
    case 'boolean':
      return v ? 't' : 'f';
    case 'float':
      return Number.isNaN(v) ? 'NaN' : `d${toHex(toBinary(type, v))}`;
    default:
      // decimal (unscaled bytes), uuid (16 bytes), fixed/binary (content)
      return `b${toHex(toBinary(type, v))}`;
  }
}

/** A key for a tuple of values of the given types (same types → same key iff the values are equal). */
export function tupleKey(types: readonly IcebergType[], values: readonly Value[]): string {
  if (types.length === 1) return valueKey(types[0]!, values[0] ?? null);
  return JSON.stringify(types.map((t, i) => valueKey(t, values[i] ?? null)));
}

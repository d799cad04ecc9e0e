/**
 * Column builders: values of floe's value model (src/model/values.ts) appended one by one into typed
 * arrays, then handed out as Arrow `Data` for one record batch. They are the hot path of the Parquet
 * writer, so they write straight into growable typed arrays (no arrow-js Builders, no per-value
 * objects) and update the column's `FieldStats` in the same pass.
 *
 * Nested values (not in the value model's table, which covers primitives): a struct is an array of its
 * fields' values in field order (unknown fields included, ignored); a list is a JS array; a map is a
 * JS `Map` or an array of `[key, value]` pairs.
 *
 * Every value is checked against its Iceberg type before it reaches Arrow: typed arrays would silently
 * wrap an out-of-range int or long, and parquet-wasm silently drops a batch that arrow-rs rejects.
 */
import { FloeError } from '../../util/errors.js';
import type { IcebergType, NestedField, PrimitiveType } from '../spec/types.js';
import type { FieldStats } from './field-stats.js';
import { PRIMITIVE_BEHAVIOUR, type DecimalType } from '../spec/primitive-behaviour.js';
import { SUBSYSTEM, type ColumnBuilder } from './builders/builder-base.js';
import { BoolBuilder, FloatBuilder, Int32Builder, Int64Builder } from './builders/numeric-builders.js';
import { DecimalBuilder } from './builders/decimal-builder.js';
import { FixedBuilder, VarBinaryBuilder } from './builders/binary-builders.js';
import { ListBuilder, MapBuilder, StructBuilder } from './builders/nested-builders.js';

export type { ColumnBuilder } from './builders/builder-base.js';

/** Creates stats for a primitive column; return undefined to track none. */
export type StatsFactory = (field: { id: number; type: PrimitiveType }) => FieldStats | undefined;

/**
 * A builder for a field. `stats` is consulted for primitive fields that are not inside a list or map
 * (Java stores no metrics for those).
 */
export function createBuilder(field: NestedField, stats: StatsFactory, path: string = field.name, inRepeated = false): ColumnBuilder {
  return builderFor(field.id, field.type, field.required, path, stats, inRepeated);
}

function builderFor(id: number, type: IcebergType, required: boolean, path: string, stats: StatsFactory, inRepeated: boolean): ColumnBuilder {
  switch (type.kind) {
    case 'struct': {
      const children = type.fields
        .filter((f) => f.type.kind !== 'unknown')
        .map((f) => builderFor(f.id, f.type, f.required, `${path}.${f.name}`, stats, inRepeated));
      return new StructBuilder(path, type, required, children);
    }
    case 'list':
      return new ListBuilder(path, type, required, builderFor(type.elementId, type.element, type.elementRequired, `${path}.element`, stats, true));
    case 'map':
      return new MapBuilder(
        path,
        type,
        required,
        builderFor(type.keyId, type.keyType, true, `${path}.key`, stats, true),
        builderFor(type.valueId, type.valueType, type.valueRequired, `${path}.value`, stats, true),
      );
    default: {
      const s = inRepeated ? undefined : stats({ id, type });
      switch (PRIMITIVE_BEHAVIOUR[type.kind].column) {
        case 'boolean':
          return new BoolBuilder(path, type, required, s);
        case 'int32':
          return new Int32Builder(path, type, required, s);
        case 'int64':
          return new Int64Builder(path, type, required, s);
        case 'float':
          return new FloatBuilder(path, type, required, s);
        case 'decimal':
          return new DecimalBuilder(path, type as DecimalType, required, s);
        case 'fixed':
          return new FixedBuilder(path, type, required, s);
        case 'variable':
          return new VarBinaryBuilder(path, type, required, s);
        case 'unknown':
          throw new FloeError(SUBSYSTEM, 'internal', `column ${path} is unknown; unknown columns have no builder`);
      }
    }
  }
}

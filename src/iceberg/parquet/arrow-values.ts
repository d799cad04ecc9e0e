/**
 * Arrow columns (as arrow-rs reads them out of Parquet) → floe's value model, column at a time, for an
 * Iceberg target type. This is where reading honours the spec's type promotions ("Schema Evolution"):
 * int → long, float → double, decimal(P,S) → decimal(P',S) with P' ≥ P, and (v3) date → timestamp /
 * timestamp_ns; a file column of any other type than its table field is an error.
 *
 * Nested structs are projected by field id too: a child missing from the file reads as its
 * `initialDefault` (else null), as Java's readers do (spec "Column Projection").
 *
 * Values are read straight from the Arrow buffers (no per-value arrow-js `get`, which also turns
 * timestamps into lossy milliseconds).
 */
import * as arrow from 'apache-arrow';
import { FloeError } from '../../util/errors.js';
import { formatDecimal, type Value } from '../../model/values.js';
import { uuidFromBytes } from '../spec/single-value.js';
import type { IcebergType, NestedField, PrimitiveType } from '../spec/types.js';
import { describeType, FIELD_ID_KEY } from './arrow-schema.js';
import { makeCompatibleName } from './compatible-name.js';

const SUBSYSTEM = 'iceberg.parquet';
const utf8 = new TextDecoder('utf-8');

/** Converts one Arrow data chunk of a column into values (one per slot). */
export type ColumnConverter = (data: arrow.Data) => Value[];

/** How fields are matched inside structs: by id, or by name for files without any field id. */
export type FieldMatch = 'id' | 'name';

export function fieldIdOf(field: arrow.Field): number | undefined {
  const text = field.metadata.get(FIELD_ID_KEY);
  if (text === undefined) return undefined;
  const id = Number(text);
  return Number.isInteger(id) ? id : undefined;
}

/** Finds the file field for an Iceberg field among sibling Arrow fields. */
export function matchField(fields: readonly arrow.Field[], target: NestedField, match: FieldMatch): arrow.Field | undefined {
  if (match === 'id') return fields.find((f) => fieldIdOf(f) === target.id);
  return fields.find((f) => f.name === target.name) ?? fields.find((f) => f.name === makeCompatibleName(target.name));
}

/** The value a missing field reads as (spec: initial-default, else null). */
export function missingFieldValue(field: NestedField, path: string): Value {
  const d = field.initialDefault;
  if (d !== undefined && d !== null) return d as Value;
  if (field.required) {
    throw new FloeError(SUBSYSTEM, 'invalid-data', `required field ${path} (id ${field.id}) is not in the data file and has no initial-default; the file does not belong to this schema`);
  }
  return null;
}

function isValidFn(data: arrow.Data): (i: number) => boolean {
  const bitmap = data.nullBitmap;
  if (!bitmap || bitmap.length === 0 || data.nullCount === 0) return () => true;
  const offset = data.offset;
  return (i) => ((bitmap[(offset + i) >> 3]! >> ((offset + i) & 7)) & 1) === 1;
}

function mismatch(path: string, target: IcebergType, file: arrow.DataType): never {
  throw new FloeError(SUBSYSTEM, 'invalid-data', `column ${path}: the file holds ${String(file)}, which cannot be read as ${describeType(target)} (only the spec's promotions int→long, float→double, decimal precision widening and date→timestamp are allowed)`);
}

function withNulls(data: arrow.Data, read: (i: number) => Value): Value[] {
  const n = data.length;
  const out = new Array<Value>(n);
  const valid = isValidFn(data);
  for (let i = 0; i < n; i++) out[i] = valid(i) ? read(i) : null;
  return out;
}

/** Multiplier/divisor to go from an Arrow time unit to micro- or nanoseconds. */
function unitScale(unit: arrow.TimeUnit, target: 'micros' | 'nanos'): { mul: bigint; div: bigint } {
  const perSecond = { [arrow.TimeUnit.SECOND]: 1n, [arrow.TimeUnit.MILLISECOND]: 1_000n, [arrow.TimeUnit.MICROSECOND]: 1_000_000n, [arrow.TimeUnit.NANOSECOND]: 1_000_000_000n }[unit];
  const want = target === 'micros' ? 1_000_000n : 1_000_000_000n;
  return perSecond <= want ? { mul: want / perSecond, div: 1n } : { mul: 1n, div: perSecond / want };
}

function floorDiv(a: bigint, b: bigint): bigint {
  const q = a / b;
  return a % b !== 0n && (a < 0n) !== (b < 0n) ? q - 1n : q;
}

function int64At(values: BigInt64Array | Int32Array, i: number): bigint {
  if (values instanceof BigInt64Array) return values[i]!;
  // Older arrow-js layouts keep 64-bit values as pairs of 32-bit words.
  return (BigInt(values[2 * i + 1]!) << 32n) | BigInt(values[2 * i]! >>> 0);
}

function decodeUtf8(bytes: Uint8Array, start: number, end: number): string {
  const len = end - start;
  if (len <= 24) {
    let ascii = true;
    for (let k = start; k < end; k++) {
      if (bytes[k]! >= 0x80) {
        ascii = false;
        break;
      }
    }
    if (ascii) return String.fromCharCode(...bytes.subarray(start, end));
  }
  return utf8.decode(bytes.subarray(start, end));
}

function primitiveConverter(target: PrimitiveType, file: arrow.DataType, path: string): ColumnConverter {
  const t = file.typeId;
  switch (target.kind) {
    case 'unknown':
      return (data) => new Array<Value>(data.length).fill(null);
    case 'boolean':
      if (t !== arrow.Type.Bool) mismatch(path, target, file);
      return (data) => {
        const bits = data.values as Uint8Array;
        const o = data.offset;
        return withNulls(data, (i) => ((bits[(o + i) >> 3]! >> ((o + i) & 7)) & 1) === 1);
      };
    case 'int':
      if (t !== arrow.Type.Int || (file as arrow.Int).bitWidth > 32 || ((file as arrow.Int).bitWidth === 32 && !(file as arrow.Int).isSigned)) mismatch(path, target, file);
      return (data) => {
        const v = data.values as Int32Array;
        const o = data.offset;
        return withNulls(data, (i) => v[o + i]!);
      };
    case 'long':
      if (t !== arrow.Type.Int) mismatch(path, target, file);
      if ((file as arrow.Int).bitWidth === 64) {
        const unsigned = !(file as arrow.Int).isSigned;
        return (data) => {
          const v = data.values as BigInt64Array;
          const o = data.offset;
          return withNulls(data, (i) => {
            const x = int64At(v, o + i);
            if (unsigned && x < 0n) throw new FloeError(SUBSYSTEM, 'invalid-data', `column ${path}: unsigned value ${BigInt.asUintN(64, x)} exceeds the long range`);
            return x;
          });
        };
      }
      return (data) => {
        const v = data.values as Int32Array;
        const o = data.offset;
        return withNulls(data, (i) => BigInt(v[o + i]!));
      };
    case 'float':
    case 'double':
      if (t !== arrow.Type.Float || (target.kind === 'float' && (file as arrow.Float).precision === arrow.Precision.DOUBLE)) mismatch(path, target, file);
      if ((file as arrow.Float).precision === arrow.Precision.HALF) mismatch(path, target, file);
      return (data) => {
        const v = data.values as Float32Array | Float64Array;
        const o = data.offset;
        return withNulls(data, (i) => v[o + i]!);
      };
    case 'decimal': {
      if (t !== arrow.Type.Decimal) mismatch(path, target, file);
      const d = file as arrow.Decimal;
      if (d.scale !== target.scale || d.precision > target.precision) mismatch(path, target, file);
      const words = d.bitWidth / 32;
      const bits = BigInt(d.bitWidth);
      const scale = target.scale;
      return (data) => {
        const v = data.values as Uint32Array;
        const o = data.offset;
        return withNulls(data, (i) => {
          const base = (o + i) * words;
          let x = 0n;
          for (let w = words - 1; w >= 0; w--) x = (x << 32n) | BigInt(v[base + w]!);
          return formatDecimal(BigInt.asIntN(Number(bits), x), scale);
        });
      };
    }
    case 'date':
      if (t === arrow.Type.Date && (file as arrow.Date_).unit === arrow.DateUnit.DAY) {
        return (data) => {
          const v = data.values as Int32Array;
          const o = data.offset;
          return withNulls(data, (i) => v[o + i]!);
        };
      }
      if (t === arrow.Type.Date) {
        return (data) => {
          const v = data.values as BigInt64Array | Int32Array;
          const o = data.offset;
          return withNulls(data, (i) => Number(floorDiv(int64At(v, o + i), 86_400_000n)));
        };
      }
      return mismatch(path, target, file);
    case 'time': {
      if (t !== arrow.Type.Time) mismatch(path, target, file);
      const tt = file as arrow.Time;
      const { mul, div } = unitScale(tt.unit, 'micros');
      return (data) => {
        const v = data.values as BigInt64Array | Int32Array;
        const o = data.offset;
        const wide = tt.bitWidth === 64;
        return withNulls(data, (i) => {
          const raw = wide ? int64At(v, o + i) : BigInt((v as Int32Array)[o + i]!);
          return div === 1n ? raw * mul : floorDiv(raw, div);
        });
      };
    }
    case 'timestamp':
    case 'timestamptz':
    case 'timestamp_ns':
    case 'timestamptz_ns': {
      const unit = target.kind === 'timestamp' || target.kind === 'timestamptz' ? 'micros' : 'nanos';
      if (t === arrow.Type.Date && (file as arrow.Date_).unit === arrow.DateUnit.DAY) {
        // v3 promotion date → timestamp: midnight of the day.
        const perDay = unit === 'micros' ? 86_400_000_000n : 86_400_000_000_000n;
        return (data) => {
          const v = data.values as Int32Array;
          const o = data.offset;
          return withNulls(data, (i) => BigInt(v[o + i]!) * perDay);
        };
      }
      if (t !== arrow.Type.Timestamp) mismatch(path, target, file);
      const { mul, div } = unitScale((file as arrow.Timestamp).unit, unit);
      return (data) => {
        const v = data.values as BigInt64Array | Int32Array;
        const o = data.offset;
        return withNulls(data, (i) => {
          const raw = int64At(v, o + i);
          return div === 1n ? raw * mul : floorDiv(raw, div);
        });
      };
    }
    case 'string':
      if (t === arrow.Type.Utf8 || t === arrow.Type.LargeUtf8) {
        return (data) => {
          const offs = data.valueOffsets as Int32Array | BigInt64Array;
          const bytes = data.values as Uint8Array;
          const o = data.offset;
          const large = offs instanceof BigInt64Array;
          return withNulls(data, (i) =>
            large ? decodeUtf8(bytes, Number(offs[o + i]), Number(offs[o + i + 1])) : decodeUtf8(bytes, (offs as Int32Array)[o + i]!, (offs as Int32Array)[o + i + 1]!),
          );
        };
      }
      return mismatch(path, target, file);
    case 'binary':
      if (t === arrow.Type.Binary || t === arrow.Type.LargeBinary) {
        return (data) => {
          const offs = data.valueOffsets as Int32Array | BigInt64Array;
          const bytes = data.values as Uint8Array;
          const o = data.offset;
          return withNulls(data, (i) => bytes.slice(Number(offs[o + i]), Number(offs[o + i + 1])));
        };
      }
      return mismatch(path, target, file);
    case 'uuid':
    case 'fixed': {
      if (t !== arrow.Type.FixedSizeBinary) mismatch(path, target, file);
      const width = (file as arrow.FixedSizeBinary).byteWidth;
      if (width !== (target.kind === 'uuid' ? 16 : target.length)) mismatch(path, target, file);
      const asUuid = target.kind === 'uuid';
      return (data) => {
        const bytes = data.values as Uint8Array;
        const o = data.offset;
        return withNulls(data, (i) => {
          const b = bytes.slice((o + i) * width, (o + i + 1) * width);
          return asUuid ? uuidFromBytes(b) : b;
        });
      };
    }
  }
}

/**
 * A signed 32- or 64-bit integer column read as `target` (int, or long: int → long is a promotion)
 * into numbers, without the BigInt per value the long converter makes — what a numeric key's index
 * reads millions of (keyindex/key-index.ts). NaN marks a null and a long beyond ±(2^53 − 1): the
 * caller takes those from `columnConverter`, so every value it keeps is exactly the converter's.
 * Undefined for any other file column (the caller reads it through `columnConverter`).
 */
export function integerNumbers(target: IcebergType, file: arrow.DataType): ((data: arrow.Data) => Float64Array) | undefined {
  if (file.typeId !== arrow.Type.Int || !(file as arrow.Int).isSigned) return undefined;
  const bits = (file as arrow.Int).bitWidth;
  if (bits === 32 && (target.kind === 'int' || target.kind === 'long')) {
    return (data) => {
      const v = data.values as Int32Array;
      const o = data.offset;
      const out = new Float64Array(data.length);
      for (let i = 0; i < out.length; i++) out[i] = v[o + i]!;
      return maskNulls(data, out);
    };
  }
  if (bits !== 64 || target.kind !== 'long') return undefined;
  return (data) => {
    const values = data.values as BigInt64Array | Int32Array;
    // the 64-bit values as little-endian pairs of 32-bit words (how int64At reads older layouts)
    const words = values instanceof BigInt64Array ? new Int32Array(values.buffer, values.byteOffset, values.length * 2) : values;
    const o = data.offset;
    const out = new Float64Array(data.length);
    for (let i = 0; i < out.length; i++) {
      const hi = words[2 * (o + i) + 1]!;
      const lo = words[2 * (o + i)]! >>> 0;
      // |value| ≤ 2^53 − 1 ⇔ hi in (−2^21, 2^21), or hi = −2^21 with lo > 0
      out[i] = (hi > -0x200000 || (hi === -0x200000 && lo > 0)) && hi < 0x200000 ? hi * 4294967296 + lo : NaN;
    }
    return maskNulls(data, out);
  };
}

function maskNulls(data: arrow.Data, out: Float64Array): Float64Array {
  if (data.nullCount === 0) return out;
  const valid = isValidFn(data);
  for (let i = 0; i < out.length; i++) if (!valid(i)) out[i] = NaN;
  return out;
}

/**
 * Converter for `target` from a file column of Arrow type `file`. Dictionary-encoded columns (possible
 * when a file's embedded Arrow schema asks for them) are decoded through their dictionary.
 */
export function columnConverter(target: IcebergType, file: arrow.DataType, path: string, match: FieldMatch): ColumnConverter {
  if (file.typeId === arrow.Type.Dictionary) {
    const dict = file as arrow.Dictionary;
    const inner = columnConverter(target, dict.dictionary, path, match);
    return (data) => {
      const dictValues = inner(data.dictionary!.data[0]!);
      const idx = data.values as Int32Array | Uint32Array | Int16Array | Uint16Array | Int8Array | Uint8Array | BigInt64Array;
      const o = data.offset;
      return withNulls(data, (i) => dictValues[Number(idx[o + i])]!);
    };
  }
  switch (target.kind) {
    case 'struct': {
      if (file.typeId !== arrow.Type.Struct) mismatch(path, target, file);
      const fileChildren = (file as arrow.Struct).children;
      const plan = target.fields.map((f) => {
        const fileChild = matchField(fileChildren, f, match);
        const childPath = `${path}.${f.name}`;
        if (!fileChild) return { index: -1, constant: missingFieldValue(f, childPath), convert: undefined };
        return { index: fileChildren.indexOf(fileChild), constant: null, convert: columnConverter(f.type, fileChild.type, childPath, match) };
      });
      return (data) => {
        const columns = plan.map((p) => (p.convert ? p.convert(data.children[p.index]!) : undefined));
        return withNulls(data, (i) => plan.map((p, c) => (columns[c] ? columns[c]![i] : p.constant)) as unknown as Value);
      };
    }
    case 'list': {
      if (file.typeId !== arrow.Type.List && file.typeId !== arrow.Type.LargeList) mismatch(path, target, file);
      const element = columnConverter(target.element, (file as arrow.List).children[0]!.type, `${path}.element`, match);
      return (data) => {
        const offs = data.valueOffsets as Int32Array | BigInt64Array;
        const o = data.offset;
        const values = element(data.children[0]!);
        return withNulls(data, (i) => values.slice(Number(offs[o + i]), Number(offs[o + i + 1])) as unknown as Value);
      };
    }
    case 'map': {
      if (file.typeId !== arrow.Type.Map) mismatch(path, target, file);
      const entries = (file as arrow.Map_).children[0]!.type as arrow.Struct;
      const key = columnConverter(target.keyType, entries.children[0]!.type, `${path}.key`, match);
      const value = columnConverter(target.valueType, entries.children[1]!.type, `${path}.value`, match);
      return (data) => {
        const offs = data.valueOffsets as Int32Array;
        const o = data.offset;
        const entryData = data.children[0]!;
        const keys = key(entryData.children[0]!);
        const values = value(entryData.children[1]!);
        return withNulls(data, (i) => {
          const pairs: Array<[Value, Value]> = [];
          for (let k = offs[o + i]!; k < offs[o + i + 1]!; k++) pairs.push([keys[k]!, values[k]!]);
          return pairs as unknown as Value;
        });
      };
    }
    default:
      if (file.typeId === arrow.Type.Null) return (data) => new Array<Value>(data.length).fill(null);
      return primitiveConverter(target, file, path);
  }
}
